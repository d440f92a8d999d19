#!/usr/bin/env bash
# Builds (or reuses) the promtool binary the e2e monitoring checks run (`promtool check rules` on the
# chart's PrometheusRule, `promtool check metrics` on a live controller's and webhook's /metrics), from
# the Go module proxy at the version pinned below (not in versions.env, whose hash keys the control
# plane cache). Prints its path on stdout; logs go to stderr.
# Cache: ${CLAIMKIT_CACHE_DIR:-$XDG_CACHE_HOME/claimkit}/promtool/<version>/promtool.
# CLAIMKIT_PROMTOOL=<path> uses that binary instead (e.g. a promtool already installed in CI).
set -euo pipefail
# Prometheus 3.x's Go module versions are v0.3MM.P (v0.316.0 is Prometheus v3.16.0).
PROMTOOL_VERSION=v0.316.0
log() { printf '[promtool] %s\n' "$*" >&2; }

if [ -n "${CLAIMKIT_PROMTOOL:-}" ]; then echo "$CLAIMKIT_PROMTOOL"; exit 0; fi
cache="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
dir="$cache/promtool/$PROMTOOL_VERSION"
if [ -x "$dir/promtool" ]; then echo "$dir/promtool"; exit 0; fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -x "$dir/promtool" ]; then echo "$dir/promtool"; exit 0; fi
GO="${GO:-go}"
command -v "$GO" >/dev/null 2>&1 || { log "Go is required to build promtool (go 1.26+)"; exit 1; }
log "building promtool $PROMTOOL_VERSION into $dir (a few minutes, once)"
start=$(date +%s)
tmp="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# Outside any module: `go install pkg@version` resolves Prometheus's own go.mod (checked against
# sum.golang.org).
if ! (cd "$tmp" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$tmp" \
  "$GO" install -trimpath -ldflags="-s -w" \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION"); then
  log "could not build github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION (see above);"
  log "set CLAIMKIT_PROMTOOL to a promtool binary to use that instead"
  exit 1
fi
mv -f "$tmp/promtool" "$dir/promtool"
log "built in $(($(date +%s) - start))s"
echo "$dir/promtool"
