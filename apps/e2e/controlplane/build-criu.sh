#!/usr/bin/env bash
# Prepares (or reuses) CRIU for the real node's checkpoints and prints the directory holding a
# `criu` command on stdout; logs go to stderr. containerd and runc find it on PATH (local-node.ts).
#
# Why not Debian 12's package: criu 3.17.1 fails on this kind of kernel ("vdso: Unexpected rt vDSO
# area bounds"). Debian 13's criu 4.x works but needs glibc >= 2.38 (Debian 12 has 2.36), so it is
# installed with its own libraries into a minimal Debian 13 rootfs (debootstrap) and `criu` is a
# wrapper that runs it with that rootfs's dynamic loader and libraries: no chroot, so it sees the
# host's /proc, mounts and the paths runc hands it.
#
# The wrapper also reads fault switches (e2e only; absent = no fault), one machine-wide directory
# since only one real node runs per machine: $CLAIMKIT_CRIU_FAULTS (default /run/claimkit-criu):
#   delay-seconds  sleep that long before CRIU runs (a checkpoint in flight, for faults mid-way);
#                  each delayed call first appends a line to `delayed` (a test waits for it)
#   fail           exit 1 printing the file's text (a CRIU error)
#
# Cache: ${CLAIMKIT_CACHE_DIR:-$XDG_CACHE_HOME/claimkit}/criu/<suite>-<hash of this script>/.
# CLAIMKIT_CRIU_BIN=<dir> uses a directory that already holds a working `criu`. Needs root and
# debootstrap (with Debian's archive keyring) when not cached.
set -euo pipefail
SUITE=trixie
MIRROR="${CLAIMKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
log() { printf '[criu] %s\n' "$*" >&2; }

if [ -n "${CLAIMKIT_CRIU_BIN:-}" ]; then echo "$CLAIMKIT_CRIU_BIN"; exit 0; fi
cache="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
key="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
dir="$cache/criu/$SUITE-$key"
works() { [ -x "$dir/bin/criu" ] && "$dir/bin/criu" --version >/dev/null 2>&1; }
if works; then echo "$dir/bin"; exit 0; fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if works; then echo "$dir/bin"; exit 0; fi

[ "$(id -u)" = 0 ] || { log "CRIU for the real node needs root to install (debootstrap)"; exit 1; }
command -v debootstrap >/dev/null 2>&1 || {
  log "installing debootstrap from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >&2
}
start=$(date +%s)
rm -rf "$dir/rootfs" "$dir/bin" "$dir/rootfs.tmp"
log "debootstrap $SUITE with criu into $dir (a minimal rootfs, ~230 MB)"
if ! debootstrap --variant=minbase --include=criu "$SUITE" "$dir/rootfs.tmp" "$MIRROR" >"$dir/debootstrap.log" 2>&1; then
  log "debootstrap failed; the last lines of $dir/debootstrap.log:"
  tail -n 15 "$dir/debootstrap.log" >&2
  exit 1
fi
mv "$dir/rootfs.tmp" "$dir/rootfs"
mkdir -p "$dir/bin"
cat >"$dir/bin/criu" <<EOF
#!/bin/sh
# Debian $SUITE's criu with its own glibc (see apps/e2e/controlplane/build-criu.sh).
faults="\${CLAIMKIT_CRIU_FAULTS:-/run/claimkit-criu}"
if [ "\$1" != "--version" ] && [ "\$1" != "-V" ]; then
  if [ -s "\$faults/delay-seconds" ]; then
    echo "\$\$ \$*" >>"\$faults/delayed"
    sleep "\$(cat "\$faults/delay-seconds")"
  fi
  if [ -e "\$faults/fail" ]; then echo "criu: injected failure: \$(cat "\$faults/fail")" >&2; exit 1; fi
fi
r="$dir/rootfs"
exec "\$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "\$r/usr/lib/x86_64-linux-gnu" "\$r/usr/sbin/criu" "\$@"
EOF
chmod 0755 "$dir/bin/criu"
"$dir/bin/criu" --version >&2
if ! "$dir/bin/criu" check >"$dir/check.log" 2>&1; then
  log "criu check failed on this machine (checkpoints will fail; see $dir/check.log):"
  tail -n 5 "$dir/check.log" >&2
fi
log "ready in $(($(date +%s) - start))s"
# Keep this entry and one other (another checkout's).
for old in $(ls -1dt "$cache/criu"/*/ 2>/dev/null | grep -vF "$dir/" | tail -n +2); do
  log "removing old cache entry $old"
  rm -rf "$old"
done
echo "$dir/bin"
