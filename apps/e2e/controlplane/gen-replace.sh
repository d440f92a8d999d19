#!/usr/bin/env bash
# Regenerates go.mod's requirements and replace block from the pinned versions in versions.env.
#
# k8s.io/kubernetes requires every k8s.io/* staging module at v0.0.0 and points them at
# ./staging/src/... with replace directives, which only apply inside its own repository. We read
# those replace lines from kubernetes' own go.mod (from the module cache) and map each staging
# module to the published tag v0.<minor>.<patch> that matches v1.<minor>.<patch>.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=versions.env
. ./versions.env
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

staging_version="v0.${K8S_VERSION#v1.}"
k8s_mod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
[ -f "$k8s_mod" ] || { echo "cannot find go.mod of k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }

# Drop every existing k8s.io/* replace, then add one per staging module.
for old in $(go mod edit -json | sed -n 's/^[[:space:]]*"Path": "\(k8s\.io\/[^"]*\)",*$/\1/p' | sort -u); do
  go mod edit -dropreplace="$old" 2>/dev/null || true
done
mods="$(sed -n 's/^[[:space:]]*\(k8s\.io\/[A-Za-z0-9._-]*\) => \.\/staging\/src\/.*$/\1/p' "$k8s_mod")"
[ -n "$mods" ] || { echo "no staging replace lines found in $k8s_mod" >&2; exit 1; }
args=()
for m in $mods; do args+=("-replace=$m=$m@$staging_version"); done
go mod edit "${args[@]}"
echo "replaced $(echo "$mods" | wc -l) staging modules with $staging_version" >&2

go mod edit -require="k8s.io/kubernetes@$K8S_VERSION" -require="sigs.k8s.io/kwok@$KWOK_VERSION" \
  -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
for t in k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler sigs.k8s.io/kwok/cmd/kwok; do
  go mod edit -tool="$t"
done
go mod tidy
