#!/usr/bin/env bash
# Builds (or reuses) the local control plane binaries: kube-apiserver, kube-controller-manager,
# kube-scheduler (k8s.io/kubernetes), kwok (sigs.k8s.io/kwok) and etcd (cmd/etcd, on etcd's embed
# package). Prints the directory holding them on stdout; logs go to stderr.
#
# Cache: ${CLAIMKIT_CACHE_DIR:-$XDG_CACHE_HOME/claimkit}/controlplane/<k8s>-<hash>/bin, where
# <hash> covers versions.env, go.mod, go.sum, this script and cmd/. Only missing binaries are
# built; all missing ones go through ONE `go build` so shared packages compile once.
#
# Environment: GO (go command, default `go`), CLAIMKIT_CACHE_DIR, CLAIMKIT_CONTROLPLANE_BIN (use
# this prebuilt directory instead; nothing is built), GOCACHE/GOMODCACHE/GOFLAGS as usual.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=versions.env
. ./versions.env

log() { printf '[controlplane] %s\n' "$*" >&2; }
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kwok etcd)

if [ -n "${CLAIMKIT_CONTROLPLANE_BIN:-}" ]; then
  for b in "${BINARIES[@]}"; do
    [ -x "$CLAIMKIT_CONTROLPLANE_BIN/$b" ] || { log "missing $CLAIMKIT_CONTROLPLANE_BIN/$b"; exit 1; }
  done
  echo "$CLAIMKIT_CONTROLPLANE_BIN"
  exit 0
fi

cache="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
hash="$(cat versions.env go.mod go.sum build.sh $(find cmd -type f -name '*.go' | LC_ALL=C sort) | sha256sum | cut -c1-12)"
dir="$cache/controlplane/$K8S_VERSION-$hash"
bin="$dir/bin"
mkdir -p "$bin"

missing() {
  local b out=()
  for b in "${BINARIES[@]}"; do [ -x "$bin/$b" ] || out+=("$b"); done
  echo "${out[@]:-}"
}

if [ -z "$(missing)" ]; then echo "$bin"; exit 0; fi

# One builder at a time per cache entry (a concurrent caller waits, then finds the binaries).
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
todo="$(missing)"
if [ -z "$todo" ]; then echo "$bin"; exit 0; fi

GO="${GO:-go}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly"
command -v "$GO" >/dev/null 2>&1 || { log "Go is required to build the control plane (go 1.26+)"; exit 1; }

ver="${K8S_VERSION#v}"; major="${ver%%.*}"; minor="$(echo "$ver" | cut -d. -f2)"
build_date="$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo 1970-01-01T00:00:00Z)"
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.gitCommit=claimkit-$hash -X $p.buildDate=$build_date"
done

pkgs=()
for b in $todo; do
  case "$b" in
    kube-apiserver | kube-controller-manager | kube-scheduler) pkgs+=("k8s.io/kubernetes/cmd/$b") ;;
    kwok) pkgs+=("sigs.k8s.io/kwok/cmd/kwok") ;;
    etcd) pkgs+=("./cmd/etcd") ;;
  esac
done

tmp="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building $todo ($K8S_VERSION, kwok $KWOK_VERSION, etcd $ETCD_VERSION) into $bin"
start=$(date +%s)
"$GO" build -trimpath -ldflags="$ldflags" -o "$tmp/" "${pkgs[@]}"
for b in $todo; do mv -f "$tmp/$b" "$bin/$b"; done
log "built in $(($(date +%s) - start))s"
# Each entry is ~400 MB: keep this one and the two most recently built others (other checkouts).
for old in $(ls -1dt "$cache/controlplane"/*/ 2>/dev/null | grep -vF "$dir/" | tail -n +3); do
  log "removing old cache entry $old"
  rm -rf "$old"
done
echo "$bin"
