#!/usr/bin/env bash
# What scripts/istio-versions.sh reads from one run of the istio tier (tests/istio/run.sh) per Istio
# version. Source it; do not execute it.
#   ambient_min_checks   how many checks the tier's ambient section has (read from tests/istio/run.sh,
#                        which asks for the same count, so the two cannot drift apart)
#   ambient_result LOG   the ambient section (xdscheck TestAmbient, run with PILOT_ENABLE_AMBIENT=true):
#                        prints "N passed, M failed", or why it did not run; returns non-zero unless
#                        it ran whole (at least ambient_min_checks checks) and every check passed.
# shellcheck shell=bash

ISTIO_TIER_RUN="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/istio/run.sh"

ambient_min_checks() {
  local n
  n=$(grep -oE "TestAmbient/' \"\\\$alog\"\) < [0-9]+" "$ISTIO_TIER_RUN" | grep -oE '[0-9]+$' | head -1)
  [[ -n "$n" ]] || { echo "no ambient check count in $ISTIO_TIER_RUN (its ambient section's 'not every check ran' guard)" >&2; return 1; }
  echo "$n"
}

ambient_result() {
  local log=$1 passed failed min
  min=$(ambient_min_checks) || { echo "cannot tell (no ambient check count in $ISTIO_TIER_RUN)"; return 1; }
  passed=$(grep -cE '^ok +ambient generator TestAmbient/' "$log" || true)
  failed=$(grep -cE '^FAIL ambient generator' "$log" || true)
  if ((passed + failed == 0)); then
    echo "did not run (no 'ambient generator' line in $log: the generator check not built, or ISTIO_CHECK_AMBIENT=0)"
    return 1
  fi
  if ((failed == 0 && passed < min)); then
    echo "$passed passed, 0 failed, but fewer than the $min checks the section has"
    return 1
  fi
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
