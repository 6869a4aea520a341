#!/usr/bin/env bash
# npm run test:istio-versions: the istio tier once per Istio version the project proves.
#
# The pinned version is tests/istio/xdscheck's own go.mod (release-1.30, what `npm test` runs).
# Every folder of tests/istio/versions/ holds the go.mod and go.sum of one more istio.io/istio
# version: the generator check's sources are copied next to them (in the cache, outside the work
# tree), compiled against that version, and the whole istio tier runs with that binary
# (ISTIO_CHECK_XDSCHECK_BIN). istioctl validate/analyze stay the pinned istioctl in every run: only
# the generator, which turns the objects into Envoy configuration, changes.
#
# The go.sum files pin every module: go verifies the downloads against them and never needs the
# public checksum database (which does not know some dependencies of these pseudo-versions).
#
# Every run includes the tier's ambient section (xdscheck TestAmbient on the committed ambient renders,
# with PILOT_ENABLE_AMBIENT=true; ISTIO_CHECK_AMBIENT is forced on), reported per version on its own.
#
# Prints one line per version: `<version> (Istio <branch>) built in Ns, ran in Ns: N passed, M failed;
# ambient (TestAmbient, PILOT_ENABLE_AMBIENT=true): N passed, M failed`, and writes every run's
# output to $CACHE/logs/istio-version-<sha>.log. Exit non-zero if a check fails or the ambient
# section did not run whole on a version, except that on a version other than the pinned one the
# Envoy golden files (the pinned version's output, byte for byte) may differ: that is reported with
# the first difference.
#   bash scripts/istio-versions.sh [--only <sha>]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CACHE:-${MESH_RL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mesh-ratelimit}}"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}"
mkdir -p "$CACHE/logs"
only=""
[[ "${1:-}" == "--only" ]] && only="${2:?--only needs a commit, e.g. eed52ebb66ad}"

# shellcheck source=lib/istio-version-report.sh
source "$root/scripts/lib/istio-version-report.sh"

istio_version_of() { grep -E '^\s*istio.io/istio ' "$1" | awk '{print $2}'; }

rc=0
summary=()
run_one() {
  local name="$1" bin="$2" built="$3" modfile="$4"
  local v log
  v="$(istio_version_of "$modfile")"
  log="$CACHE/logs/istio-version-$name.log"
  local start=$SECONDS
  ISTIO_CHECK_AMBIENT=1 ISTIO_CHECK_XDSCHECK_BIN="$bin" bash "$root/tests/istio/run.sh" > "$log" 2>&1 || true
  local result failed golden
  result="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)"
  failed="$(grep -cE '^FAIL' "$log" || true)"
  # The Envoy golden files hold release-1.30's output byte for byte: on another version a difference
  # there is reported (what Istio changed), not a failure; any other failed check is.
  golden="$(grep -cE '^FAIL envoy golden' "$log" || true)"
  if [[ -z "$result" ]] || { [[ "$name" == pinned ]] && (( failed > 0 )); } || (( failed > golden )); then rc=1; fi
  (( golden > 0 )) && result="$result ($golden of them the Envoy golden files, release-1.30's bytes: $(grep -m1 -oE 'differs from what Istio generates, line [0-9]+: committed "[^"]*", generated "[^"]*"' "$log" || true))"
  local release ambient
  release="$(cat "$(go env GOMODCACHE)/istio.io/istio@$v/VERSION" 2>/dev/null || echo '?')"
  ambient="$(ambient_result "$log")" || rc=1
  summary+=("$v (Istio ${release} branch) built in ${built}s, ran in $((SECONDS - start))s: ${result:-no result (see $log)}; ambient (TestAmbient, PILOT_ENABLE_AMBIENT=true): $ambient")
  grep -E '^FAIL' "$log" | head -20 || true
}

# The pinned version: tests/istio/xdscheck as it is.
pinned="$CACHE/istio-versions/pinned/xdscheck.test"
if [[ -z "$only" ]]; then
  mkdir -p "$(dirname "$pinned")"
  t0=$SECONDS
  (cd "$root/tests/istio/xdscheck" && go test -trimpath -c -o "$pinned" .) > "$CACHE/logs/istio-version-pinned-build.log" 2>&1 ||
    { tail -20 "$CACHE/logs/istio-version-pinned-build.log"; exit 1; }
  run_one pinned "$pinned" $((SECONDS - t0)) "$root/tests/istio/xdscheck/go.mod"
fi

for dir in "$root"/tests/istio/versions/*/; do
  name="$(basename "$dir")"
  [[ -n "$only" && "$name" != "$only" ]] && continue
  work="$CACHE/istio-versions/$name"
  rm -rf "$work/src"
  mkdir -p "$work/src"
  cp "$root"/tests/istio/xdscheck/*.go "$work/src/"
  cp "$dir/go.mod" "$dir/go.sum" "$work/src/"
  t0=$SECONDS
  if ! (cd "$work/src" && go test -trimpath -c -o "$work/xdscheck.test" .) > "$CACHE/logs/istio-version-$name-build.log" 2>&1; then
    tail -20 "$CACHE/logs/istio-version-$name-build.log"
    summary+=("$(istio_version_of "$dir/go.mod"): does not build (log $CACHE/logs/istio-version-$name-build.log)")
    rc=1
    continue
  fi
  run_one "$name" "$work/xdscheck.test" $((SECONDS - t0)) "$dir/go.mod"
done

echo "istio tier per Istio version ($(date -u +%Y-%m-%d)):"
printf '  %s\n' "${summary[@]}"
exit $rc
