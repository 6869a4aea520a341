#!/usr/bin/env bash
# Build istioctl from the Go module proxy into $CACHE/tools/istioctl-$ISTIO_LABEL/istioctl.
# A throw-away wrapper module (in the cache, never in the repo) requires istio.io/istio; its
# go.mod has no replaces, so the wrapper builds against the versions Istio's go.mod lists,
# except the pins below that the module proxy here does not serve.
# Idempotent: reuses the binary when present. Options: --force or MESH_RL_REBUILD=1 (rebuild),
# --print-path.
#
# Version. The target was tag 1.30.3 = commit 56df41f63e51 (pseudo-version
# v0.0.0-20260713165634-56df41f63e51), but the module proxy reachable here answers
# "403 This module version is not available" for it, and also for three of its dependency pins
# (go-control-plane envoy/contrib @98966259b99a, istio.io/client-go @5146bfac9969, and
# github.com/agentgateway/agentgateway/api, which istioctl does not import). The closest
# istio.io/istio it serves is v0.0.0-20260826214018-9739e10eb9d7: the release-1.30 branch
# after 1.30.3. Its own istio.io/api and client-go pins (v1.30.4-0.2026082416...) are not served
# either, so the wrapper raises them to the served v1.31.1, and go-control-plane to the served
# a2d8c7492908 (2026-07-29). tests/istio/xdscheck/go.mod pins the very same versions, so both
# share one Go build cache. docs/proof/istio-check.md records what this changes.
set -euo pipefail

ISTIO_MODVER=v0.0.0-20260826214018-9739e10eb9d7
ISTIO_COMMIT=9739e10eb9d7
ISTIO_LABEL=1.30-$ISTIO_COMMIT   # release-1.30 branch, after tag 1.30.3
PINS=(
  "istio.io/istio@$ISTIO_MODVER"
  "istio.io/api@v1.31.1"
  "istio.io/client-go@v1.31.1"
  "github.com/envoyproxy/go-control-plane/envoy@v1.37.1-0.20260729145720-a2d8c7492908"
  "github.com/envoyproxy/go-control-plane/contrib@v1.36.1-0.20260729145720-a2d8c7492908"
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -f "$here/../lib/common.sh" ]]; then
  # shellcheck source=/dev/null
  source "$here/../lib/common.sh"
fi
CACHE="${CACHE:-${MESH_RL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mesh-ratelimit}}"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}"

dest="$CACHE/tools/istioctl-$ISTIO_LABEL"
bin="$dest/istioctl"
wrap="$dest/wrapper"

force=0
[[ "${MESH_RL_REBUILD:-}" == "1" ]] && force=1
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    --print-path) echo "$bin"; exit 0 ;;
    *) echo "usage: $0 [--force] [--print-path]" >&2; exit 2 ;;
  esac
done

if ! command -v go >/dev/null 2>&1; then
  echo "build-istioctl: go not found on PATH" >&2
  exit 3
fi
mkdir -p "$dest" "$CACHE/logs"

if [[ $force -eq 0 && -x "$bin" ]] && "$bin" version --remote=false 2>/dev/null | grep -q "$ISTIO_LABEL"; then
  echo "istioctl $ISTIO_LABEL present: $bin"
  exit 0
fi

start=$(date +%s)
# cold: no build of this wrapper has completed on this machine before (the Go build cache has
# none of istio's packages); warm: a rebuild after one.
kind=cold
[[ -f "$dest/.built" ]] && kind=warm

mkdir -p "$wrap"
cd "$wrap"
[[ -f go.mod ]] || go mod init local/istioctl-wrapper >/dev/null 2>&1
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "istio.io/istio/istioctl/cmd/istioctl"
GO
go get "${PINS[@]}"
# -e: tidy also walks tests of istio's packages, some of which import a module the proxy
# refuses (agentgateway); the istioctl binary itself does not need it.
go mod tidy -e >/dev/null 2>&1 || true
ldflags="-s -w"
for kv in buildVersion=$ISTIO_LABEL buildGitRevision=$ISTIO_COMMIT buildStatus=Clean buildTag=$ISTIO_LABEL buildHub=docker.io/istio; do
  ldflags+=" -X istio.io/istio/pkg/version.$kv"
done
go build -mod=mod -trimpath -ldflags "$ldflags" -o "$bin.tmp" istio.io/istio/istioctl/cmd/istioctl
mv "$bin.tmp" "$bin"
touch "$dest/.built"
secs=$(( $(date +%s) - start ))
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) istioctl $kind $secs" >> "$CACHE/timings.log"
"$bin" version --remote=false
echo "built istioctl $ISTIO_LABEL ($kind, ${secs}s): $bin"
