#!/usr/bin/env bash
# Builds kwok (fake nodes and pods) into $CACHE/tools/kwok-<version>/, in the wrapper module it shares
# with the Kubernetes control plane (kube-wrapper.sh), and copies its stage files
# (kustomize/stage/...) beside the binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"
source "$here/kube-wrapper.sh"
GWB_WRAPPER="$KUBE_WRAPPER" go_wrapper_build kwok "$KWOK_VERSION" kwok sigs.k8s.io/kwok/cmd/kwok \
  "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" "${KUBE_WRAPPER_SPECS[@]}"
if [[ ! -d "$KWOK_DIR/stage" ]]; then
  d=$(cd "$CACHE/wrappers/$KUBE_WRAPPER" && go list -m -json "sigs.k8s.io/kwok@$KWOK_VERSION" | jq -r .Dir)
  mkdir -p "$KWOK_DIR/stage"
  cp -r "$d/kustomize/stage/." "$KWOK_DIR/stage/"; chmod -R u+w "$KWOK_DIR/stage"
fi
