#!/usr/bin/env bash
# Builds kwok (fake nodes and pods) into $CACHE/tools/kwok-<version>/ and copies its stage files
# (kustomize/stage/...) beside the binary.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
go_wrapper_build kwok "$KWOK_VERSION" kwok sigs.k8s.io/kwok/cmd/kwok \
  "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
if [[ ! -d "$KWOK_DIR/stage" ]]; then
  d=$(cd "$CACHE/wrappers/kwok-$KWOK_VERSION" && go list -m -json "sigs.k8s.io/kwok@$KWOK_VERSION" | jq -r .Dir)
  mkdir -p "$KWOK_DIR/stage"
  cp -r "$d/kustomize/stage/." "$KWOK_DIR/stage/"; chmod -R u+w "$KWOK_DIR/stage"
fi
