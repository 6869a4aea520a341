#!/usr/bin/env bash
# npm run bench:rls — decisions/s and latency of the real rate-limit service on loopback:
# (a) the stack's rendered settings, (b) Istio's sample settings, (c) raw Redis INCRBY+EXPIRE.
# Writes bench-rls.{md,json} to $CACHE/results/ (outside the work tree), or to $BENCH_OUT; with
# BENCH_RECORD=1 to tests/rls/results/, the tracked record the docs cite. Not a test: it reports.
# Env: BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_LIGHT_CONCURRENCY, BENCH_SWEEP=1, BENCH_OVERRIDES, BENCH_OUT, BENCH_RECORD=1,
# BENCH_GO=0 (Node client only), BENCH_SCALE=0 (skip the second part, tests/rls/bench-scale.ts: request mixes,
# one Redis vs Redis Cluster), BENCH_FLOOD=0 (skip the flood row, tests/rls/bench-flood.ts: the gateway
# pre-limit), BENCH_FLOOD_ONLY=1 (only the flood row), BENCH_SATURATION=0 (skip the saturation row,
# tests/rls/bench-saturation.ts: fixed limits while the per-value side is flooded). Each row is measured with the Node client and the Go load generator.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
cd "$ROOT"
if ! bash scripts/tools/build-ratelimit.sh; then
  skipped "bench:rls" "envoyproxy/ratelimit or redis-server could not be built/installed (see above)" || exit 1
  exit 0
fi
# The project's Go load generator (tests/rls/loadgen): measures the service without the Node client's cost.
if ! RLS_LOADGEN=$(bash tests/rls/build-loadgen.sh); then
  skipped "bench:rls Go client" "tests/rls/loadgen could not be built (see above); Node client only" || exit 1
  export BENCH_GO=0
else
  export RLS_LOADGEN
fi
# Results stay out of the tracked tree unless asked for (BENCH_RECORD=1): a benchmark run must not
# leave `git status` changed.
if [[ -z "${BENCH_OUT:-}" ]]; then
  if [[ "${BENCH_RECORD:-}" == 1 ]]; then BENCH_OUT="$ROOT/tests/rls/results"; else BENCH_OUT="$CACHE/results"; fi
fi
mkdir -p "$BENCH_OUT"
export BENCH_OUT
log "bench:rls: results go to $BENCH_OUT (BENCH_RECORD=1: tests/rls/results/, the tracked record)"
log "bench:rls: load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other work on this machine skews wall-clock figures; CPU per decision does not)"
# BENCH_FLOOD_ONLY=1: only the flood row (tests/rls/bench-flood.ts); BENCH_FLOOD=0 skips it.
if [[ "${BENCH_FLOOD_ONLY:-}" == 1 ]]; then
  exec npx tsx tests/rls/bench-flood.ts
fi
npx tsx tests/rls/bench.ts
# The flood row: service calls and CPU per client request with and without the gateway's pre-limit.
if [[ "${BENCH_FLOOD:-1}" == 1 ]]; then
  npx tsx tests/rls/bench-flood.ts
fi
# The saturation row (tests/rls/bench-saturation.ts): fixed-limit decisions/s and p99 while a flood of
# new per-path counters saturates the service counting them, one store versus split. BENCH_SATURATION=0 skips it.
if [[ "${BENCH_SATURATION:-1}" == 1 && "${BENCH_GO:-1}" != 0 ]]; then
  npx tsx tests/rls/bench-saturation.ts
fi
# Second part (tests/rls/bench-scale.ts): both request mixes against one Redis and a 3-master Redis
# Cluster, CPU per decision and the ceiling it implies. BENCH_SCALE=0 skips it.
if [[ "${BENCH_SCALE:-1}" == 1 && "${BENCH_GO:-1}" != 0 ]]; then
  exec npx tsx tests/rls/bench-scale.ts
fi
