#!/usr/bin/env bash
# Rate-limit tier (npm run test:rls): the real envoyproxy/ratelimit service and a real Redis, run
# with the settings the stack renders, and a real Prometheus over them. Builds/reuses the tools first
# (scripts/tools/build-ratelimit.sh, scripts/tools/build-prometheus.sh).
# Prints a final `N passed, M failed` line; exits non-zero on any failure. Missing tools: a loud
# SKIPPED line, non-zero under CI=true or MESH_RL_REQUIRE_TOOLS=1.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
cd "$ROOT"

t0=$(date +%s)
if ! bash scripts/tools/build-ratelimit.sh; then
  skipped "rls" "envoyproxy/ratelimit or redis-server could not be built/installed (see above)" || exit 1
  exit 0
fi
# Prometheus and promtool for the monitoring tests (tests/rls/monitoring.test.ts). Without them the
# rest of the tier runs and those tests print SKIPPED; under CI=true that fails the tier.
if ! bash scripts/tools/build-prometheus.sh; then
  skipped "rls monitoring" "Prometheus could not be built (see above)" || exit 1
fi
# The project's own Go load generator drives the flood test (tests/rls/flood.test.ts): a few seconds
# to build, sharing the Go build cache with envoyproxy/ratelimit.
if ! bash tests/rls/build-loadgen.sh > /dev/null; then
  skipped "rls flood" "the load generator could not be built (see above)" || exit 1
fi
log "rls: tools ready in $(( $(date +%s) - t0 ))s"

rc=0
run_mocha_tier rls tests/rls/.mocharc.json "$@" || rc=$?
exit "$rc"
