#!/usr/bin/env bash
# Rate-limit tier (npm run test:rls): the real envoyproxy/ratelimit service and a real Redis, run
# with the settings the stack renders. Builds/reuses the tools first (scripts/tools/build-ratelimit.sh).
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
log "rls: tools ready in $(( $(date +%s) - t0 ))s"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
set +e
npx mocha --config tests/rls/.mocharc.json "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
passed=$(sed -n 's/^ *\([0-9][0-9]*\) passing.*/\1/p' "$out" | tail -1)
failed=$(sed -n 's/^ *\([0-9][0-9]*\) failing.*/\1/p' "$out" | tail -1)
passed=${passed:-0}
failed=${failed:-0}
if [[ $rc -ne 0 && $failed -eq 0 ]]; then failed=1; fi
echo "rls: ${passed} passed, ${failed} failed"
if [[ $passed -eq 0 ]]; then
  echo "rls: no test ran" >&2
  exit 1
fi
exit "$rc"
