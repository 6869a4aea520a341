#!/usr/bin/env bash
# Builds kube-apiserver (and, unless KUBE_COMPONENTS says otherwise, kube-controller-manager and
# kube-scheduler) from the Go module proxy into $CACHE/tools/kubernetes-<version>/.
# k8s.io/kubernetes replaces its ~31 staging modules with ./staging/...; the wrapper module replaces
# each of them with the published k8s.io/<name>@v0.<minor>.<patch>, generated from that go.mod.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

KUBE_COMPONENTS=${KUBE_COMPONENTS:-kube-apiserver kube-controller-manager kube-scheduler}
staging_version="v0.${KUBE_VERSION#v1.}"   # v1.36.1 -> v0.36.1
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}

wrapper_prepare() {
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | jq -r .GoMod)
  [[ -f "$gomod" ]] || die "no go.mod for k8s.io/kubernetes@$KUBE_VERSION"
  # Every replace that points into ./staging becomes a replace to the published module.
  local mods
  mods=$(go mod edit -json "$gomod" | jq -r '.Replace[]? | select(.New.Path | startswith("./staging/")) | .Old.Path')
  [[ -n "$mods" ]] || die "found no staging replaces in $gomod"
  local args=() m
  for m in $mods; do args+=("-replace=$m=$m@$staging_version"); done
  go mod edit "${args[@]}"
  log "kubernetes: replaced $(wc -w <<<"$mods") staging modules with $staging_version"
}

ldflags="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
for c in $KUBE_COMPONENTS; do
  GWB_WRAPPER="kubernetes-$KUBE_VERSION" GWB_OUT="$(tool_dir kubernetes "$KUBE_VERSION")" \
    go_wrapper_build "$c" "$KUBE_VERSION" "$c" "k8s.io/kubernetes/cmd/$c" "$ldflags" \
    "k8s.io/kubernetes/cmd/$c@$KUBE_VERSION"
done
