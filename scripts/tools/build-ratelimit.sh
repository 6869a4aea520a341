#!/usr/bin/env bash
# Build envoyproxy/ratelimit (service_cmd + config_check_cmd) from its Go module at a pinned
# commit into $CACHE/tools/ratelimit-<commit>/, and make sure Debian's redis-server and
# redis-tools (redis-cli, redis-benchmark) are installed. Never starts a system Redis: the
# rate-limit tier starts its own on loopback. Idempotent; timings go to $CACHE/timings.log.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/common.sh
source "$HERE/../lib/common.sh"

# The module's only semver tags are from 2020 (RLS v2 API only), so a commit is the version.
# The module proxy reachable here refuses f2fb15770f7f (the commit first targeted; docs/proof/tools.md) and Istio's
# sample commit 30a4ce1a with "403 This module version is not available"; it serves 3fb702589d36
# (2026-01-22, RLS v3), which is therefore the pin, and the image tag the stack deploys (3fb70258).
RATELIMIT_MODULE=github.com/envoyproxy/ratelimit
RATELIMIT_COMMIT=3fb702589d36
RATELIMIT_VERSION=v1.4.1-0.20260122083618-3fb702589d36
OUT=$(tool_dir ratelimit "$RATELIMIT_COMMIT")

if [[ -x "$OUT/service_cmd" && -x "$OUT/config_check_cmd" && "${MESH_RL_REBUILD:-}" != "1" ]]; then
  timing_record "ratelimit-$RATELIMIT_COMMIT" warm 0
  log "ratelimit $RATELIMIT_COMMIT: reusing $OUT ($(cat "$OUT/VERSION" 2>/dev/null || echo '?'))"
else
  # One wrapper module for both binaries, so the second build reuses the first one's download.
  export GWB_WRAPPER="ratelimit-$RATELIMIT_COMMIT"
  wrapper_finish() { go list -m "$RATELIMIT_MODULE" >"$OUT.version.tmp"; }
  mkdir -p "$OUT"
  # Ask the proxy first, so a refusal ends with a message that says what happened.
  probe=$(mktemp -d)
  if ! (cd "$probe" && go mod init local/probe >/dev/null 2>&1 && go list -m "$RATELIMIT_MODULE@$RATELIMIT_VERSION"); then
    rm -rf "$probe"
    die "the Go module proxy did not serve $RATELIMIT_MODULE@$RATELIMIT_VERSION (see go's message above; 'This module version is not available' is a final answer for that version)"
  fi
  rm -rf "$probe"
  go_wrapper_build ratelimit "$RATELIMIT_COMMIT" service_cmd "$RATELIMIT_MODULE/src/service_cmd" "" \
    "$RATELIMIT_MODULE/src/service_cmd@$RATELIMIT_VERSION" "$RATELIMIT_MODULE/src/config_check_cmd@$RATELIMIT_VERSION"
  go_wrapper_build ratelimit "$RATELIMIT_COMMIT" config_check_cmd "$RATELIMIT_MODULE/src/config_check_cmd" ""
  mv "$OUT.version.tmp" "$OUT/VERSION"
fi

# Redis from Debian: redis-server for the tests, redis-tools for redis-cli/redis-benchmark.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
  t0=$(date +%s)
  export DEBIAN_FRONTEND=noninteractive
  # A policy-rc.d answering 101 keeps the package's post-install from starting a system Redis.
  created_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && created_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null
  if [[ $created_policy == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
  timing_record redis-server cold $(( $(date +%s) - t0 ))
else
  timing_record redis-server warm 0
fi
log "redis: $(command -v redis-server) ($(redis-server --version | awk '{print $3}'))"
