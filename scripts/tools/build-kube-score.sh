#!/usr/bin/env bash
# Build kube-score (github.com/zegl/kube-score, static checks of Kubernetes objects) from the Go
# module proxy into $CACHE/tools/kube-score-<version>/kube-score. The istio tier runs it on the
# rendered Deployments, Services, PodDisruptionBudgets and NetworkPolicies of the rate-limit
# service and Redis (tests/istio/run.sh, docs/proof/istio-check.md).
# Idempotent: reuses the binary when present and reporting the pinned version. Options: --force or
# MESH_RL_REBUILD=1 (rebuild), --print-path. Timings go to $CACHE/timings.log.
#
# v1.20.0's go.mod has no replace directives, so `go install` would work too; the throw-away
# wrapper module (go_wrapper_build, $CACHE/wrappers/kube-score-<version>) is kept for the same
# reasons as for every other tool (docs/proof/tools.md): it builds against the dependency versions
# kube-score's own go.mod lists, and a replace added in a later version would not break the build.
# The release build sets the version with goreleaser; without the -X flags `kube-score version`
# prints "development".
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/common.sh
source "$HERE/../lib/common.sh"

KUBE_SCORE_MODULE=github.com/zegl/kube-score
KUBE_SCORE_VERSION=v1.20.0
OUT=$(tool_dir kube-score "$KUBE_SCORE_VERSION")
BIN="$OUT/kube-score"

for a in "$@"; do
  case "$a" in
    --force) export MESH_RL_REBUILD=1 ;;
    --print-path) echo "$BIN"; exit 0 ;;
    *) echo "usage: $0 [--force] [--print-path]" >&2; exit 2 ;;
  esac
done

if [[ -x "$BIN" && "${MESH_RL_REBUILD:-}" != "1" ]] && "$BIN" version 2>/dev/null | grep -qF "version: $KUBE_SCORE_VERSION,"; then
  timing_record "kube-score-$KUBE_SCORE_VERSION" warm 0
  log "kube-score $KUBE_SCORE_VERSION: reusing $BIN"
  exit 0
fi

need_cmd go
# Ask the proxy first, so a refusal ends with a message that says what happened.
probe=$(mktemp -d)
if ! (cd "$probe" && go mod init local/probe >/dev/null 2>&1 && go list -m "$KUBE_SCORE_MODULE@$KUBE_SCORE_VERSION" >/dev/null); then
  rm -rf "$probe"
  die "the Go module proxy did not serve $KUBE_SCORE_MODULE@$KUBE_SCORE_VERSION (see go's message above; 'This module version is not available' is a final answer for that version)"
fi
rm -rf "$probe"

# A binary that is present but reports another version is rebuilt.
export MESH_RL_REBUILD=1
go_wrapper_build kube-score "$KUBE_SCORE_VERSION" kube-score "$KUBE_SCORE_MODULE/cmd/kube-score" \
  "-X main.version=$KUBE_SCORE_VERSION -X main.commit=module-$KUBE_SCORE_VERSION -X main.date=module-proxy" \
  "$KUBE_SCORE_MODULE/cmd/kube-score@$KUBE_SCORE_VERSION"
"$BIN" version
