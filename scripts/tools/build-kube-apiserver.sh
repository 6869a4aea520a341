#!/usr/bin/env bash
# Builds kube-apiserver (and, unless KUBE_COMPONENTS says otherwise, kube-controller-manager and
# kube-scheduler) from the Go module proxy into $CACHE/tools/kubernetes-<version>/, in the wrapper
# module it shares with kwok (kube-wrapper.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"
source "$here/kube-wrapper.sh"

KUBE_COMPONENTS=${KUBE_COMPONENTS:-kube-apiserver kube-controller-manager kube-scheduler}
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
for c in $KUBE_COMPONENTS; do
  GWB_WRAPPER="$KUBE_WRAPPER" GWB_OUT="$(tool_dir kubernetes "$KUBE_VERSION")" \
    go_wrapper_build "$c" "$KUBE_VERSION" "$c" "k8s.io/kubernetes/cmd/$c" "$ldflags" "${KUBE_WRAPPER_SPECS[@]}"
done
