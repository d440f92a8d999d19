#!/usr/bin/env bash
# Builds (or reuses) the helm binary the chart test renders deploy/helm/claimkit with, from the Go
# module proxy at the version pinned below (not in versions.env, whose hash keys the control plane
# cache). Prints its path on stdout; logs go to stderr.
# Cache: ${CLAIMKIT_CACHE_DIR:-$XDG_CACHE_HOME/claimkit}/helm/<version>/helm. CLAIMKIT_HELM=<path>
# uses that binary instead (e.g. a helm already installed in CI).
set -euo pipefail
HELM_VERSION=v3.22.0
log() { printf '[helm] %s\n' "$*" >&2; }

if [ -n "${CLAIMKIT_HELM:-}" ]; then echo "$CLAIMKIT_HELM"; exit 0; fi
cache="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
dir="$cache/helm/$HELM_VERSION"
if [ -x "$dir/helm" ]; then echo "$dir/helm"; exit 0; fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -x "$dir/helm" ]; then echo "$dir/helm"; exit 0; fi
GO="${GO:-go}"
command -v "$GO" >/dev/null 2>&1 || { log "Go is required to build helm (go 1.26+)"; exit 1; }
log "building helm $HELM_VERSION into $dir"
start=$(date +%s)
tmp="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# Outside any module: `go install pkg@version` resolves helm's own go.mod (checked against sum.golang.org).
(cd "$tmp" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$tmp" \
  "$GO" install -trimpath -ldflags="-s -w" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
mv -f "$tmp/helm" "$dir/helm"
log "built in $(($(date +%s) - start))s"
echo "$dir/helm"
