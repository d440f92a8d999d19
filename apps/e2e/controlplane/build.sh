#!/usr/bin/env bash
# Builds (or reuses) the local cluster's binaries and prints the directory holding them on stdout;
# logs go to stderr.
#
#   build.sh          the control plane: kube-apiserver, kube-controller-manager, kube-scheduler
#                     (k8s.io/kubernetes), kwok (sigs.k8s.io/kwok) and etcd (cmd/etcd, on etcd's
#                     embed package)
#   build.sh node     a real node: kubelet and kube-proxy (the same k8s.io/kubernetes module),
#                     containerd, its runc shim and ctr (github.com/containerd/containerd/v2), and the
#                     OCI registry it pulls checkpoint images from (github.com/distribution/distribution/v3
#                     cmd/registry); as root
#                     it also installs runc, the CNI plugins, iptables and conntrack from Debian's
#                     packages when they are missing
#
# Cache: ${CLAIMKIT_CACHE_DIR:-$XDG_CACHE_HOME/claimkit}/<set>/<k8s>-<hash>/bin, where <set> is
# controlplane or node and <hash> covers versions.env, go.mod, go.sum, this script and cmd/. Only
# missing binaries are built; all missing ones of a module go through ONE `go build` so shared
# packages compile once.
#
# Environment: GO (go command, default `go`), CLAIMKIT_CACHE_DIR, CLAIMKIT_CONTAINERD_VERSION (the real
# node's containerd instead of versions.env's), CLAIMKIT_CONTROLPLANE_BIN /
# CLAIMKIT_NODE_BIN (use this prebuilt directory instead; nothing is built), GOCACHE/GOMODCACHE/GOFLAGS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=versions.env
. ./versions.env

set_name="${1:-controlplane}"
log() { printf '[%s] %s\n' "$set_name" "$*" >&2; }
case "$set_name" in
  controlplane) BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kwok etcd); prebuilt="${CLAIMKIT_CONTROLPLANE_BIN:-}" ;;
  node) BINARIES=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr registry); prebuilt="${CLAIMKIT_NODE_BIN:-}" ;;
  *) log "unknown binary set '$set_name' (controlplane or node)"; exit 2 ;;
esac

# What a real node takes from Debian's packages: command -> package.
install_node_packages() {
  local want=() cmd pkg
  for pair in runc:runc iptables:iptables conntrack:conntrack /usr/lib/cni/bridge:containernetworking-plugins; do
    cmd="${pair%%:*}"; pkg="${pair#*:}"
    if [ "${cmd#/}" != "$cmd" ]; then [ -x "$cmd" ] || want+=("$pkg"); else command -v "$cmd" >/dev/null 2>&1 || want+=("$pkg"); fi
  done
  [ "${#want[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "a real node needs ${want[*]} (Debian packages; install them as root)"; return 1
  fi
  log "installing ${want[*]} from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${want[@]}" >&2 \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${want[@]}" >&2; }
}
if [ "$set_name" = node ]; then install_node_packages; fi

if [ -n "$prebuilt" ]; then
  for b in "${BINARIES[@]}"; do
    [ -x "$prebuilt/$b" ] || { log "missing $prebuilt/$b"; exit 1; }
  done
  echo "$prebuilt"
  exit 0
fi

cache="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
# CLAIMKIT_CONTAINERD_VERSION runs the real node on another containerd (e.g. v2.4.2, which checkpoints
# but cannot restore); it is part of the cache key.
CONTAINERD_VERSION="${CLAIMKIT_CONTAINERD_VERSION:-$CONTAINERD_VERSION}"
hash="$( (cat versions.env go.mod go.sum build.sh $(find cmd -type f -name '*.go' | LC_ALL=C sort); if [ "$set_name" = node ]; then echo "containerd=$CONTAINERD_VERSION"; fi) | sha256sum | cut -c1-12)"
dir="$cache/$set_name/$K8S_VERSION-$hash"
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
containerd_pkgs=()
registry_pkgs=()
for b in $todo; do
  case "$b" in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy) pkgs+=("k8s.io/kubernetes/cmd/$b") ;;
    containerd | containerd-shim-runc-v2 | ctr) containerd_pkgs+=("github.com/containerd/containerd/v2/cmd/$b@$CONTAINERD_VERSION") ;;
    registry) registry_pkgs+=("github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION") ;;
    kwok) pkgs+=("sigs.k8s.io/kwok/cmd/kwok") ;;
    etcd) pkgs+=("./cmd/etcd") ;;
  esac
done

tmp="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log "building $todo ($K8S_VERSION, kwok $KWOK_VERSION, etcd $ETCD_VERSION, containerd $CONTAINERD_VERSION, registry $REGISTRY_VERSION) into $bin"
start=$(date +%s)
[ "${#pkgs[@]}" -eq 0 ] || "$GO" build -trimpath -ldflags="$ldflags" -o "$tmp/" "${pkgs[@]}"
if [ "${#containerd_pkgs[@]}" -gt 0 ]; then
  # containerd is a module of its own (its k8s.io requirements differ from ours): `go install
  # module@version` builds it as released, without the btrfs/devmapper/zfs snapshotters (cgo).
  GOBIN="$tmp" GOFLAGS="" "$GO" install -trimpath -tags 'no_btrfs no_devmapper no_zfs' \
    -ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    "${containerd_pkgs[@]}"
fi
if [ "${#registry_pkgs[@]}" -gt 0 ]; then
  # The distribution registry, as released (its own module; no cgo).
  GOBIN="$tmp" GOFLAGS="" "$GO" install -trimpath -ldflags="-s -w" "${registry_pkgs[@]}"
fi
for b in $todo; do mv -f "$tmp/$b" "$bin/$b"; done
log "built in $(($(date +%s) - start))s"
# Each entry is ~400 MB: keep this one and the two most recently built others (other checkouts).
for old in $(ls -1dt "$cache/$set_name"/*/ 2>/dev/null | grep -vF "$dir/" | tail -n +3); do
  log "removing old cache entry $old"
  rm -rf "$old"
done
echo "$bin"
