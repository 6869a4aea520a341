#!/usr/bin/env bash
# `npm test`: every tier, in order. The unit tier needs only npm; the others need the Go-built
# tools (`npm run tools`). A tier whose tools are missing reports SKIPPED. Under CI=true (or
# MESH_RL_REQUIRE_TOOLS=1) every SKIPPED counts as a failure; elsewhere a skip is a loud warning.
# A part of a tier that needs what no machine here can obtain prints `BLOCKED: ...` (the e2e tier's
# `pulumi package add`); the rest of that tier runs. Last step: the tiers must leave `git status` as they found it (no tracked file
# changed, no new file that .gitignore does not cover); under CI a difference fails the run.
# Pick tiers with MESH_RL_TIERS="unit rls" (default: all). The rls tier runs beside the others (its
# tests mostly wait on their own clock: the service's windows); MESH_RL_BESIDE="" runs every tier
# in turn, MESH_RL_BESIDE="rls e2e" puts more tiers in that second lane.
# Beside a background `build-all.sh` (as `.ci/run` runs it): MESH_RL_BUILD_STATUS=<its status dir>
# makes each tier wait until the tools it needs are built (or failed), and MESH_RL_BUILD_PID=<pid>
# stops the wait if that build process ends first. The tiers without Go-built tools start at once.
set -uo pipefail
cd "$(dirname "$0")/.."

tiers=${MESH_RL_TIERS:-"lint typecheck unit consumer rls istio cluster e2e"}
beside=${MESH_RL_BESIDE-rls}
passed=0 failed=0 skipped=0
summary=()
strict=0
[[ "${CI:-}" == "true" || "${MESH_RL_REQUIRE_TOOLS:-}" == "1" ]] && strict=1

# git_snapshot: one line per path git reports as changed or untracked (not ignored), with a hash of
# its content, so a tier that edits an already modified file is seen too.
git_snapshot() {
  git status --porcelain=v1 --untracked-files=all 2>/dev/null | while IFS= read -r line; do
    local p=${line:3}
    p=${p##* -> }
    printf '%s %s\n' "$p" "$( [[ -f "$p" ]] && git hash-object -- "$p" 2>/dev/null || echo gone)"
  done | sort
}
git_before=$(git_snapshot)

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
    if [ "$rc" -ne 0 ] || [ "$strict" -eq 1 ]; then
      failed=$((failed + 1)); summary[-1]+=" [counts as failed under CI]"
    fi
  elif [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); summary+=("${name}: ok (${secs}s)")
  else
    failed=$((failed + 1)); summary+=("${name}: FAILED, exit ${rc} (${secs}s)")
  fi
  # Parts that cannot run here, and passes that relied on a model, are named in the summary.
  local b m
  b=$(grep '^BLOCKED:' "$log" | sort -u | wc -l)
  m=$(grep -m1 '^MODEL:' "$log" || true)
  ((b == 0)) || summary[-1]+=" [${b} part(s) BLOCKED: $(grep '^BLOCKED:' "$log" | sort -u | cut -c10-80 | paste -sd';')]"
  [[ -z $m ]] || summary[-1]+=" [${m}]"
  rm -f "$log"
}

source scripts/lib/tier-tools.sh

# run_named_tier <tier>: runs one tier by name.
run_named_tier() {
  local t=$1
  case $t in
    lint) run_tier lint npm run --silent lint ;;
    typecheck) run_tier typecheck npx tsc --noEmit ;;
    unit) run_tier unit npx mocha 'tests/unit/**/*.test.ts' ;;
    consumer|rls|istio|cluster|e2e)
      if [ -f "tests/$t/run.sh" ]; then run_tier "$t" bash "tests/$t/run.sh"
      else
        echo "SKIPPED: $t: tests/$t/run.sh does not exist"; skipped=$((skipped + 1)); summary+=("$t: SKIPPED (not present)")
        [ "$strict" -eq 1 ] && { failed=$((failed + 1)); summary[-1]+=" [counts as failed under CI]"; }
      fi ;;
  esac
}
for t in $tiers; do
  case $t in lint|typecheck|unit|consumer|rls|istio|cluster|e2e) ;;
    *) echo "unknown tier '$t' (known: lint typecheck unit consumer rls istio cluster e2e)"; exit 2 ;;
  esac
done

source scripts/lib/tier-lanes.sh
run_lanes "$tiers" "$beside"

# The tiers must not leave files behind in the work tree (results go to the cache or a temp dir).
left=$(comm -13 <(printf '%s\n' "$git_before") <(git_snapshot) | cut -d' ' -f1 | sed '/^$/d')
if [[ -n "$left" ]]; then
  echo
  echo "=== git status: the tiers changed or added these files (not covered by .gitignore):"
  printf '  %s\n' $left
  if [ "$strict" -eq 1 ]; then failed=$((failed + 1)); summary+=("git status: FAILED, the tiers left $(wc -w <<< "$left") file(s) changed or untracked")
  else summary+=("git status: WARNING, the tiers left $(wc -w <<< "$left") file(s) changed or untracked (fails under CI=true)"); fi
else
  summary+=("git status: unchanged by the tiers")
fi

echo
echo "=== summary"
printf '  %s\n' "${summary[@]}"
((${#waits[@]} == 0)) || echo "  waited for the background build: ${waits[*]}"
echo "tiers: ${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" -eq 0 ]
