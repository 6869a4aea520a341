#!/usr/bin/env bash
# `npm test`: every tier, in order. The unit tier needs only npm; the others need the Go-built
# tools (`npm run tools`). A tier whose tools are missing reports SKIPPED: under CI=true (or
# MESH_RL_REQUIRE_TOOLS=1) that is a failure, elsewhere a loud warning. Pick tiers with
# MESH_RL_TIERS="unit rls" (default: all).
set -uo pipefail
cd "$(dirname "$0")/.."

tiers=${MESH_RL_TIERS:-"typecheck unit rls istio cluster e2e"}
passed=0 failed=0 skipped=0
summary=()

run_tier() {
  local name=$1; shift
  local log start rc secs
  log=$(mktemp)
  start=$(date +%s)
  echo "=== tier ${name}: $*"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  if grep -q '^SKIPPED:' "$log"; then
    skipped=$((skipped + 1)); summary+=("${name}: SKIPPED (${secs}s) $(grep -m1 '^SKIPPED:' "$log")")
    [ "$rc" -ne 0 ] && { failed=$((failed + 1)); summary[-1]+=" [counts as failed: tools are required here]"; }
  elif [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); summary+=("${name}: ok (${secs}s)")
  else
    failed=$((failed + 1)); summary+=("${name}: FAILED, exit ${rc} (${secs}s)")
  fi
  rm -f "$log"
}

for t in $tiers; do
  case $t in
    typecheck) run_tier typecheck npx tsc --noEmit ;;
    unit) run_tier unit npx mocha ;;
    rls|istio|cluster|e2e)
      if [ -f "tests/$t/run.sh" ]; then run_tier "$t" bash "tests/$t/run.sh"
      else echo "SKIPPED: $t: tests/$t/run.sh does not exist"; skipped=$((skipped + 1)); summary+=("$t: SKIPPED (not present)"); fi ;;
    *) echo "unknown tier '$t' (known: typecheck unit rls istio cluster e2e)"; exit 2 ;;
  esac
done

echo
echo "=== summary"
printf '  %s\n' "${summary[@]}"
echo "tiers: ${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
