#!/usr/bin/env bash
# Builds claimctl as one standalone executable with `deno compile` (Deno 2.9.6 from devDependencies).
#
#   bash packages/cli/scripts/compile.sh [OUTPUT] [--target x86_64-unknown-linux-gnu]
#
# ENTRY=dist/kubectl-claimkit.js builds the kubectl plugin (help and usage then say `kubectl claimkit`).
#
# The compiled file embeds dist/main.js with the package's node_modules (the Deno binary itself
# excluded). `deno compile` needs the `denort` runtime for the target: Deno downloads it from its
# release server on first use and caches it; where that server cannot be reached, set DENORT_BIN
# to a denort binary of the same version (the full `deno` binary does not work as one).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
out="${1:-dist-bin/claimctl}"
shift || true
deno="$here/node_modules/.bin/deno"
[ -x "$deno" ] || { echo "compile.sh: $deno missing; run pnpm install" >&2; exit 2; }
pnpm run build >/dev/null
mkdir -p "$(dirname "$out")"
"$deno" compile \
  --allow-read --allow-env --allow-net --allow-sys --allow-run \
  --node-modules-dir=manual \
  --no-check \
  --exclude node_modules/deno \
  --exclude node_modules/.bin \
  --output "$out" \
  "$@" \
  "${ENTRY:-dist/main.js}"
# A binary for another platform cannot run here.
case " $* " in *" --target "*) ;; *) "$out" --version ;; esac
