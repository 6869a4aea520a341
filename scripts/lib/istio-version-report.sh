#!/usr/bin/env bash
# What scripts/istio-versions.sh reads from one run of the istio tier (tests/istio/run.sh) per Istio
# version. Source it; do not execute it.
#   ambient_result LOG   the ambient section (xdscheck TestAmbient, run with PILOT_ENABLE_AMBIENT=true):
#                        prints "N passed, M failed", or why it did not run; returns non-zero unless
#                        it ran whole (at least AMBIENT_MIN_CHECKS checks) and every check passed.
# shellcheck shell=bash

# Four checks per variant (A, B) and the three waypoint findings: what the tier's own count asks for.
AMBIENT_MIN_CHECKS=11

ambient_result() {
  local log=$1 passed failed
  passed=$(grep -cE '^ok +ambient generator TestAmbient/' "$log" || true)
  failed=$(grep -cE '^FAIL ambient generator' "$log" || true)
  if ((passed + failed == 0)); then
    echo "did not run (no 'ambient generator' line in $log: the generator check not built, or ISTIO_CHECK_AMBIENT=0)"
    return 1
  fi
  if ((failed == 0 && passed < AMBIENT_MIN_CHECKS)); then
    echo "$passed passed, 0 failed, but fewer than the $AMBIENT_MIN_CHECKS checks the section has"
    return 1
  fi
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
