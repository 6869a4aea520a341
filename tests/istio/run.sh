#!/usr/bin/env bash
# Istio tier (npm run test:istio): prove the stack's Istio objects are accepted by Istio and that
# its EnvoyFilters land where they must in the Envoy configuration Istio generates.
#
# For each variant A|B x profile seed|current x local placement all-routes|single-route:
#   1. render the stack to a temp dir (npm run render),
#   2. `istioctl validate -f` every Istio object (networking/security.istio.io),
#   3. `istioctl analyze --use-kube=false -A` on the whole set (files-only analysis never reads
#      Services, Pods, Namespaces, Secrets or Nodes from files, by Istio's design),
#   every istioctl warning or analyzer message must be listed, with its explanation, in
#   analyze-allow.txt,
#   4. the generator check (tests/istio/xdscheck, a go test driving Istio's pilot packages) and
#      its negative controls.
# Prints one line per result, then "N passed, M failed". Exit non-zero on any failure.
# Missing tools: a loud SKIPPED line; non-zero under CI=true or MESH_RL_REQUIRE_TOOLS=1.
#
# Env: ISTIO_CHECK_VARIANTS / ISTIO_CHECK_PROFILES / ISTIO_CHECK_PLACEMENTS narrow the matrix;
#      ISTIO_CHECK_RENDER_DIR=<dir> checks an already rendered dir (needs ISTIO_CHECK_VARIANTS and
#      ISTIO_CHECK_PLACEMENTS with one value each) instead of calling the renderer.
#      ISTIO_CHECK_SHARED=0 skips the shared-mesh scenario (xdscheck/shared_mesh_test.go).
#      ISTIO_CHECK_MANY_TEAMS=0 skips many teams, one gateway (xdscheck/many_teams_test.go).
#      ISTIO_CHECK_PLATFORM=0 skips platform defaults with a team override (xdscheck/platform_test.go).
#      ISTIO_CHECK_ENVOY_GOLDEN=0 skips the Envoy golden files (xdscheck/envoy_golden_test.go).
#      ISTIO_CHECK_XDSCHECK_BIN=<file> runs that generator-check binary instead of building one
#      (scripts/istio-versions.sh builds it against another istio.io/istio version).
# --update-envoy-golden: only rewrite tests/golden/envoy/ from the committed tests/golden/out/ (the
#      Envoy configuration Istio generates for each stack case), print what changed, and exit.
set -euo pipefail

update_envoy_golden=0
case "${1:-}" in
  --update-envoy-golden) update_envoy_golden=1 ;;
  "") ;;
  *) echo "usage: $0 [--update-envoy-golden]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -f "$root/scripts/lib/common.sh" ]]; then
  # shellcheck source=/dev/null
  source "$root/scripts/lib/common.sh"
fi
CACHE="${CACHE:-${MESH_RL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mesh-ratelimit}}"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}"
mkdir -p "$CACHE/logs"

skip() {
  echo "SKIPPED: istio: $*"
  if [[ "${CI:-}" == "true" || "${MESH_RL_REQUIRE_TOOLS:-}" == "1" ]]; then exit 1; fi
  exit 0
}

passed=0
failed=0
failures=()
ok() { passed=$((passed + 1)); echo "ok   $*"; }
ko() { failed=$((failed + 1)); failures+=("$*"); echo "FAIL $*"; }

command -v go >/dev/null 2>&1 || skip "go not found (needed to build istioctl and the generator check)"

# ---- tools -------------------------------------------------------------------------------
t0=$(date +%s)
if ! bash "$root/scripts/tools/build-istioctl.sh" > "$CACHE/logs/istioctl-build.log" 2>&1; then
  tail -20 "$CACHE/logs/istioctl-build.log"
  skip "istioctl build failed (log: $CACHE/logs/istioctl-build.log)"
fi
ISTIOCTL="$(bash "$root/scripts/tools/build-istioctl.sh" --print-path)"
echo "istioctl: $ISTIOCTL ($(( $(date +%s) - t0 ))s to build or reuse)"

# The generator check is compiled once per run. -trimpath as in build-istioctl.sh, so the two
# share compiled packages in the Go build cache (without it every istio package is compiled twice).
# One binary per checkout (worktrees share the cache): another checkout's build never stands in for this one.
xdsbin="$CACHE/tools/xdscheck/$(printf '%s' "$here" | sha256sum | cut -c1-12)/xdscheck.test"
mkdir -p "$(dirname "$xdsbin")"
t0=$(date +%s)
kind=cold
[[ -f "$xdsbin" ]] && kind=warm
if [[ -n "${ISTIO_CHECK_XDSCHECK_BIN:-}" ]]; then
  # scripts/istio-versions.sh: the generator check built against another istio.io/istio version.
  xdsbin="$ISTIO_CHECK_XDSCHECK_BIN"
  [[ -x "$xdsbin" ]] || { echo "ISTIO_CHECK_XDSCHECK_BIN=$xdsbin is not an executable" >&2; exit 2; }
  echo "xdscheck: $xdsbin (given by ISTIO_CHECK_XDSCHECK_BIN)"
elif [[ -x "$xdsbin" && -z "$(find "$here/xdscheck" -type f -newer "$xdsbin" -print -quit)" ]]; then
  echo "xdscheck: reusing $xdsbin (sources unchanged)"
elif ! (cd "$here/xdscheck" && go test -trimpath -c -o "$xdsbin.tmp" .) > "$CACHE/logs/xdscheck-build.log" 2>&1; then
  tail -30 "$CACHE/logs/xdscheck-build.log"
  ko "build: tests/istio/xdscheck does not compile (log: $CACHE/logs/xdscheck-build.log)"
  xdsbin=""
else
  mv "$xdsbin.tmp" "$xdsbin"
  secs=$(( $(date +%s) - t0 ))
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) xdscheck $kind $secs" >> "$CACHE/timings.log"
  echo "xdscheck: built ($kind, ${secs}s)"
fi

# ---- Envoy golden files --------------------------------------------------------------------
# For every stack case of tests/golden/in, Istio's generator reads the committed rendered objects of
# tests/golden/out/<case>/ and its Envoy configuration (the gateway's HTTP filters, route
# configuration and rate-limit cluster, the productpage sidecar's inbound HTTP filters) must equal
# tests/golden/envoy/<case>/ (xdscheck/envoy_golden_test.go). A difference is shown as `diff -u`.
golden="$root/tests/golden"
if [[ $update_envoy_golden -eq 1 ]]; then
  [[ -n "$xdsbin" ]] || exit 1
  XDSCHECK_GOLDEN="$golden" XDSCHECK_GOLDEN_UPDATE=1 "$xdsbin" -test.run '^TestEnvoyGolden$' -test.v -test.count=1 > "$CACHE/logs/envoy-golden-update.log" 2>&1 ||
    { grep -E 'FAILED:|panic' "$CACHE/logs/envoy-golden-update.log" | head -10; echo "update failed (log: $CACHE/logs/envoy-golden-update.log)"; exit 1; }
  grep -E 'wrote tests/golden/envoy/' "$CACHE/logs/envoy-golden-update.log" | sed -E 's/^.*(wrote )/\1/'
  (cd "$root" && git status --short -- tests/golden/envoy)
  echo "review with: git diff tests/golden/envoy"
  exit 0
fi
envoy_golden() {
  local log="$work/envoy-golden.log" actual="$work/envoy-golden" line name n=0
  XDSCHECK_GOLDEN="$golden" XDSCHECK_GOLDEN_ACTUAL="$actual" \
    "$xdsbin" -test.run '^TestEnvoyGolden$' -test.v -test.count=1 > "$log" 2>&1 || true
  while IFS= read -r line; do
    n=$((n + 1))
    name="$(sed -E 's/^ *--- (PASS|FAIL): ([^ ]+).*/\2/' <<< "$line")"
    if [[ "$line" == *"--- PASS"* ]]; then
      ok "envoy golden ${name#*/}: $(grep -m1 -F "FINDING: ${name#*/}: " "$log" | sed -E 's/^.*FINDING: [^ ]+ //')"
    else
      ko "envoy golden ${name#*/}: $(grep -m1 -F "FAILED: ${name#*/}: " "$log" | sed -E 's/^.*FAILED: [^ ]+ //' | cut -c1-600)"
      if [[ -d "$actual/${name#*/}" ]]; then
        diff -ru "$golden/envoy/${name#*/}" "$actual/${name#*/}" | head -80 | sed 's/^/     /' || true
      fi
    fi
  done < <(grep -E '^ +--- (PASS|FAIL): TestEnvoyGolden/' "$log" || true)
  if [[ $n -eq 0 ]]; then
    ko "envoy golden: no case compared (log $log): $(grep -E 'FAILED:|panic' "$log" | head -2 | tr '\n' ' ')"
  fi
}

# ---- matrix ------------------------------------------------------------------------------
read -r -a variants <<< "${ISTIO_CHECK_VARIANTS:-A B}"
read -r -a profiles <<< "${ISTIO_CHECK_PROFILES:-seed current}"
read -r -a placements <<< "${ISTIO_CHECK_PLACEMENTS:-all-routes single-route}"

if [[ -z "${ISTIO_CHECK_RENDER_DIR:-}" ]]; then
  [[ -f "$root/render/cli.ts" ]] || skip "renderer render/cli.ts not present (npm run render)"
  [[ -d "$root/node_modules" ]] || skip "node_modules missing (run npm ci)"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/istio-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT   # set ISTIO_CHECK_KEEP=1 to keep renders and logs
[[ "${ISTIO_CHECK_KEEP:-}" == "1" ]] && { trap - EXIT; echo "keeping $work"; }
allow="$here/analyze-allow.txt"

# explained SOURCE CODE RESOURCE TEXT -> 0 when analyze-allow.txt lists it.
explained() {
  local src=$1 code=$2 res=$3 text=$4 asrc acode ares atext _why
  while IFS=$'\t' read -r asrc acode ares atext _why; do
    [[ -z "$asrc" || "$asrc" == \#* ]] && continue
    if [[ "$src" == "$asrc" && "$code" == "$acode" && "$res" =~ ^($ares)$ && "$text" =~ $atext ]]; then
      return 0
    fi
  done < "$allow"
  return 1
}

# doc_name FILE N -> "Kind namespace/name" of the N-th (0-based) document of a YAML stream.
doc_name() {
  awk -v want="$2" '
    /^---/ { doc++; next }
    doc == want && /^kind:/ { kind = $2 }
    doc == want && /^  name:/ && !name { name = $2 }
    doc == want && /^  namespace:/ && !ns { ns = $2 }
    END { printf "%s %s/%s", kind, (ns == "" ? "default" : ns), name }' "$1"
}

# note_once TEXT: print an explained message once per run.
declare -A noted=()
note_once() {
  if [[ -z "${noted[$1]:-}" ]]; then noted[$1]=1; echo "     $1"; fi
}

# validate_file FILE: istioctl validate; fails on an error or on a warning that analyze-allow.txt
# does not explain (istioctl reports a typo inside a typed_config only as a warning).
validate_problem=""
validate_file() {
  local f=$1 out w unexplained="" wres wtext
  validate_problem=""
  if ! out="$("$ISTIOCTL" validate -f "$f" 2>&1)"; then
    validate_problem="$(tr '\n' ' ' <<< "$out")"
    return 1
  fi
  # Warnings look like "\t* Kind/namespace/name: text".
  while IFS= read -r w; do
    wres="$(sed -E 's/^[[:space:]]*\* ([^/]+)\/([^/]+)\/([^:]+):.*/\1 \2\/\3/' <<< "$w")"
    wtext="$(sed -E 's/^[[:space:]]*\* [^:]+: //' <<< "$w")"
    if explained validate - "$wres" "$wtext"; then
      note_once "validate warning on $wres: explained in analyze-allow.txt"
    else
      unexplained+="$w; "
    fi
  done < <(grep -E '^[[:space:]]*\* ' <<< "$out" || true)
  if [[ -n "$unexplained" ]]; then
    validate_problem="unexplained warning: $unexplained"
    return 1
  fi
  if ! grep -qE 'is valid|has warnings' <<< "$out"; then
    validate_problem="unexpected output: $(tr '\n' ' ' <<< "$out")"
    return 1
  fi
  return 0
}

# validate_control DIR: the validate step must flag a typo inside filter-ratelimit's typed_config.
validate_control() {
  local src="$1/envoyfilter_istio-system_filter-ratelimit.yaml" bad="$work/control-typo.yaml"
  if [[ ! -f "$src" ]]; then
    ko "control: validate typo: $src not rendered"
    return
  fi
  sed 's/failure_mode_deny/failure_mode_dny/' "$src" > "$bad"
  if validate_file "$bad"; then
    ko "control: validate step accepted a typo (failure_mode_dny) inside EnvoyFilter filter-ratelimit typed_config"
  else
    ok "control: validate step flags a typo inside EnvoyFilter filter-ratelimit typed_config (${validate_problem:0:160}...)"
  fi
}

# analyze_set LABEL FILE... : istioctl analyze --use-kube=false -A; every message must be explained.
analyze_unparsable=0
analyze_set() {
  local label=$1; shift
  local rc=0 out msgs unexplained="" m code res text count=0 e idx
  analyze_unparsable=0
  out="$("$ISTIOCTL" analyze --use-kube=false --all-namespaces --output-threshold=Info \
        --failure-threshold=Info "$@" 2>&1)" || rc=$?
  msgs="$(grep -E '^(Error|Warning|Info) \[IST[0-9]+\]' <<< "$out" || true)"
  if grep -qE 'error processing' <<< "$out"; then
    analyze_unparsable=1
    local named=""
    while IFS= read -r e; do
      idx="$(sed -E 's/.*all\.yaml\[([0-9]+)\].*/\1/' <<< "$e")"
      named+="$(doc_name "$1" "$idx") (all.yaml document $idx): $(sed -E 's/.*failed parsing JSON for built-in type: //; s/ - skipping.*//' <<< "$e"); "
    done < <(grep -E 'warn.*error processing' <<< "$out" | sort -u)
    ko "$label analyze: istioctl cannot parse object(s) of the render: $named"
    return
  fi
  if [[ -z "$msgs" && $rc -ne 0 ]]; then
    ko "$label analyze: exit $rc: $(tr '\n' ' ' <<< "$out")"
    return
  fi
  while IFS= read -r m; do
    [[ -z "$m" ]] && continue
    count=$((count + 1))
    code="$(sed -E 's/^[A-Za-z]+ \[(IST[0-9]+)\].*/\1/' <<< "$m")"
    res="$(sed -E 's/^[A-Za-z]+ \[IST[0-9]+\] \(([^ )]+ [^ )]+).*/\1/' <<< "$m")"
    text="$(sed -E 's/^[A-Za-z]+ \[IST[0-9]+\] \([^)]*\) //' <<< "$m")"
    if explained analyze "$code" "$res" "$text"; then
      note_once "analyze $code $res: explained in analyze-allow.txt"
    else
      unexplained+="$m; "
    fi
  done <<< "$msgs"
  if [[ -n "$unexplained" ]]; then
    ko "$label analyze: unexplained messages: $unexplained"
  else
    ok "$label analyze --use-kube=false -A ($count message(s), all explained)"
  fi
}

# xds_input RENDER OUT: the generator check reads one OUT/all.yaml: the render's all.yaml plus the
# objects the render keeps out of it (not-appliable/: the seed mesh ConfigMap patch, the Secret with
# placeholder values).
xds_input() {
  local f
  mkdir -p "$2"
  { cat "$1/all.yaml"; for f in "$1"/not-appliable/*.yaml; do if [[ -f "$f" ]]; then echo "---"; cat "$f"; fi; done; } > "$2/all.yaml"
}

# report_subtests LABEL LOG TEST [WIDTH]: one ok/FAIL line per subtest of the Go tests whose name
# matches TEST (a regex) in LOG. A failure carries the test's "FAILED: <id>: ..." text; with WIDTH a
# pass carries its "FINDING: <id>: ..." text, cut to WIDTH characters (0: whole).
report_subtests() {
  local label=$1 log=$2 test=$3 width=${4:-} line name text
  while IFS= read -r line; do
    name="$(sed -E 's/^ *--- (PASS|FAIL): ([^ ]+).*/\2/' <<< "$line")"
    if [[ "$line" != *"--- PASS"* ]]; then
      ko "$label $name: $(grep -m1 -F "FAILED: ${name#*/}: " "$log" | sed -E 's/^.*FAILED: [^ ]+ //')"
    elif [[ -z "$width" ]]; then
      ok "$label $name"
    else
      text="$(grep -m1 -F "FINDING: ${name#*/}: " "$log" | sed -E 's/^.*FINDING: [^ ]+ //' || true)"
      [[ "$width" == 0 ]] || text="$(cut -c1-"$width" <<< "$text")"
      ok "$label $name: $text"
    fi
  done < <(grep -E "^ +--- (PASS|FAIL): ($test)/" "$log" || true)
}

is_istio() { grep -qE '^apiVersion: *(networking|security|telemetry|extensions)\.istio\.io/' "$1"; }

check_combo() {
  local v=$1 p=$2 pl=$3 dir=$4 combo="$1/$2/$3"
  local f n=0 out

  # 2. istioctl validate, one Istio object at a time (the failure names the object's file).
  for f in "$dir"/*.yaml; do
    [[ "$(basename "$f")" == all.yaml ]] && continue
    is_istio "$f" || continue
    n=$((n + 1))
    if validate_file "$f"; then
      ok "$combo validate $(basename "$f")"
    else
      ko "$combo validate $(basename "$f"): $validate_problem"
    fi
  done
  [[ $n -gt 0 ]] || ko "$combo validate: no Istio object rendered in $dir"

  # 3. istioctl analyze on the whole rendered set, all namespaces.
  analyze_set "$combo" "$dir/all.yaml"
  if [[ $analyze_unparsable -eq 1 ]]; then
    # Still analyze the Istio objects on their own, so their messages are checked too.
    local istio_files=()
    for f in "$dir"/*.yaml; do
      [[ "$(basename "$f")" == all.yaml ]] && continue
      is_istio "$f" && istio_files+=("$f")
    done
    [[ ${#istio_files[@]} -gt 0 ]] && analyze_set "$combo (Istio objects only)" "${istio_files[@]}"
  fi

  # 4. generator check + negative controls.
  if [[ -n "$xdsbin" ]]; then
    local log="$work/xds-$v-$p-$pl.log"
    rc=0
    local xin="$work/xds-in-$v-$p-$pl"
    xds_input "$dir" "$xin"
    XDSCHECK_DIR="$xin" XDSCHECK_VARIANT="$v" XDSCHECK_PLACEMENT="$pl" XDSCHECK_PROFILE="$p" \
      XDSCHECK_DUMP="$work/gateway-routes-$v-$p-$pl.json" \
      "$xdsbin" -test.v -test.count=1 > "$log" 2>&1 || rc=$?
    local line name id msg
    while IFS= read -r line; do
      name="$(sed -E 's/^ *--- (PASS|FAIL): ([^ ]+).*/\2/' <<< "$line")"
      if [[ "$line" == *"--- PASS"* ]]; then
        ok "$combo generator $name"
      else
        # The test prints "FAILED: <id>: <object>: expected <expectation>; got: <what was generated>".
        id="${name#*/}"
        msg="$(grep -m1 -F "FAILED: $id: " "$log" | sed -E 's/^.*FAILED: [^ ]+ //' || true)"
        ko "$combo generator $name: ${msg:-see $log}"
      fi
    done < <(grep -E '^ +--- (PASS|FAIL): Test[A-Za-z]+/|^--- (PASS|FAIL): TestSeedMeshConfigPatch' "$log" || true)
    if [[ $rc -ne 0 ]] && ! grep -qE '^ +--- FAIL: Test[A-Za-z]+/' "$log"; then
      grep -E 'FAILED:|panic|^FAIL|--- FAIL' "$log" | head -20 | sed 's/^/     /'
      ko "$combo generator: go test exited $rc"
    fi
    if ! grep -qE '^ +--- (PASS|FAIL): TestGeneratedConfig/' "$log"; then
      ko "$combo generator: no expectation evaluated"
      tail -20 "$log" | sed 's/^/     /'
    fi
    # 5. The gateway model (gateway-model/explain.ts) from the render and from Istio's generated routes agree.
    local dump="$work/gateway-routes-$v-$p-$pl.json" agree_out
    if [[ ! -s "$dump" ]]; then
      ko "$combo model agreement: the generator wrote no route configuration dump (see $log)"
    else
      agree_out="$(cd "$root" && npx tsx tests/istio/model-agree.ts "$dir" "$dump" "$combo" 2>&1)" || true
      while IFS= read -r line; do
        case "$line" in
          ok\ *) ok "${line#ok   }" ;;
          FAIL\ *) ko "${line#FAIL }" ;;
        esac
      done <<< "$agree_out"
      grep -qE '^(ok|FAIL) ' <<< "$agree_out" || ko "$combo model agreement: no result: $(tail -3 <<< "$agree_out" | tr '\n' ' ')"
    fi
  fi
}

# The checks below name the specification's EnvoyFilters and its one counter store
# (counterStore=single); the default split layout, with the per-path counters' own filter and
# service, is checked after them ("split layout").
ONE_STORE=(--set counterStore=single)

start=$(date +%s)
if [[ -n "${ISTIO_CHECK_RENDER_DIR:-}" ]]; then
  [[ ${#variants[@]} -eq 1 && ${#placements[@]} -eq 1 ]] || { echo "ISTIO_CHECK_RENDER_DIR needs one variant and one placement" >&2; exit 2; }
  check_combo "${variants[0]}" "${profiles[0]}" "${placements[0]}" "$ISTIO_CHECK_RENDER_DIR"
  validate_control "$ISTIO_CHECK_RENDER_DIR"
else
  for v in "${variants[@]}"; do
    for p in "${profiles[@]}"; do
      for pl in "${placements[@]}"; do
        dir="$work/$v-$p-$pl"
        if ! (cd "$root" && npm run --silent render -- --variant "$v" --profile "$p" \
                --local-placement "$pl" "${ONE_STORE[@]}" --out "$dir") > "$work/render-$v-$p-$pl.log" 2>&1; then
          ko "$v/$p/$pl render: npm run render failed: $(tail -5 "$work/render-$v-$p-$pl.log" | tr '\n' ' ')"
          continue
        fi
        check_combo "$v" "$p" "$pl" "$dir"
        [[ -n "${controlled:-}" ]] || { validate_control "$dir"; controlled=1; }
      done
    done
  done
  # Managed-API path with the tcp port mode (the matrix renders http): tests/istio/xdscheck/ingress_test.go.
  for p in "${profiles[@]}"; do
    [[ -n "$xdsbin" ]] || break
    dir="$work/ingress-tcp-$p"
    (cd "$root" && npm run --silent render -- --variant A --profile "$p" --set espPortMode=tcp "${ONE_STORE[@]}" --out "$dir") > "$dir.log" 2>&1 ||
      { ko "A/$p/tcp render failed: $(tail -3 "$dir.log" | tr '\n' ' ')"; continue; }
    XDSCHECK_DIR="$dir" XDSCHECK_VARIANT=A XDSCHECK_PROFILE="$p" XDSCHECK_PORT_MODE=tcp \
      "$xdsbin" -test.run '^TestIngress' -test.v -test.count=1 > "$dir.xds.log" 2>&1 || true
    report_subtests "A/$p/tcp generator" "$dir.xds.log" 'TestIngress[A-Za-z]*'
    grep -qE '^ +--- PASS: TestIngress/echo-route-to-esp' "$dir.xds.log" || ko "A/$p/tcp generator: managed-API route not checked (log $dir.xds.log)"
  done
  # The seed profile's mesh-wide switch: only with mutualTlsScope=mesh does the render edit the mesh
  # ConfigMap (the matrix's default renders do not, so TestSeedMeshConfigPatch skips there). Istio's
  # own mesh-config loader reads the patched text (xdscheck_test.go TestSeedMeshConfigPatch).
  if [[ -n "$xdsbin" && " ${profiles[*]} " == *" seed "* ]]; then
    dir="$work/seed-mesh-scope"
    if ! (cd "$root" && npm run --silent render -- --variant A --profile seed --set mutualTlsScope=mesh "${ONE_STORE[@]}" --out "$dir") > "$dir.log" 2>&1; then
      ko "A/seed/mutualTlsScope=mesh render failed: $(tail -3 "$dir.log" | tr '\n' ' ')"
    else
      xds_input "$dir" "$dir.xin"
      XDSCHECK_DIR="$dir.xin" XDSCHECK_VARIANT=A XDSCHECK_PROFILE=seed \
        "$xdsbin" -test.run '^TestSeedMeshConfigPatch$' -test.v -test.count=1 > "$dir.xds.log" 2>&1 || true
      if grep -qE '^--- PASS: TestSeedMeshConfigPatch' "$dir.xds.log"; then
        ok "A/seed/mutualTlsScope=mesh generator TestSeedMeshConfigPatch: $(grep -m1 -oE 'Istio loads data.mesh.*' "$dir.xds.log")"
      else
        ko "A/seed/mutualTlsScope=mesh generator TestSeedMeshConfigPatch: $(grep -m1 -oE 'FAILED: .*|--- SKIP.*' "$dir.xds.log" || echo "see $dir.xds.log")"
      fi
    fi
  fi
  # The pre-limit turned off (preLimit=false): no local filter on the gateway, no buckets on its
  # virtual host (xdscheck/prelimit.go with XDSCHECK_PRELIMIT=off); the rest of the check still passes.
  if [[ -n "$xdsbin" && "${ISTIO_CHECK_PRELIMIT_OFF:-1}" != 0 ]]; then
    dir="$work/pre-limit-off"
    if ! (cd "$root" && npm run --silent render -- --variant A --profile current --set preLimit=false "${ONE_STORE[@]}" --out "$dir") > "$dir.log" 2>&1; then
      ko "A/current/preLimit=false render failed: $(tail -3 "$dir.log" | tr '\n' ' ')"
    else
      XDSCHECK_DIR="$dir" XDSCHECK_VARIANT=A XDSCHECK_PROFILE=current XDSCHECK_PRELIMIT=off \
        "$xdsbin" -test.run '^TestGeneratedConfig$' -test.v -test.count=1 > "$dir.xds.log" 2>&1 || true
      while IFS= read -r line; do
        name="$(sed -E 's/^ *--- (PASS|FAIL): ([^ ]+).*/\2/' <<< "$line")"
        if [[ "$line" == *"--- PASS"* ]]; then
          [[ "$name" == *pre-limit* ]] && ok "A/current/preLimit=false generator $name"
        else
          ko "A/current/preLimit=false generator $name: $(grep -m1 -F "FAILED: ${name#*/}: " "$dir.xds.log" | sed -E 's/^.*FAILED: [^ ]+ //')"
        fi
      done < <(grep -E '^ +--- (PASS|FAIL): TestGeneratedConfig/' "$dir.xds.log" || true)
      grep -qE '^ +--- PASS: TestGeneratedConfig/gateway/pre-limit-buckets' "$dir.xds.log" || ko "A/current/preLimit=false generator: pre-limit not checked (log $dir.xds.log)"
    fi
  fi
  # statusOnError: the status a fail-closed refusal gets. Istio's generator must carry it into the
  # gateway's rate-limit filter as status_on_error (503 for ServiceUnavailable, the HTTP code Envoy
  # sends); every other combination checks it is absent (Envoy's 500). Control: the same render
  # checked against 429 fails.
  if [[ -n "$xdsbin" && "${ISTIO_CHECK_STATUS_ON_ERROR:-1}" != 0 ]]; then
    dir="$work/status-on-error"
    if ! (cd "$root" && npm run --silent render -- --variant A --profile current --set statusOnError=ServiceUnavailable "${ONE_STORE[@]}" --out "$dir") > "$dir.log" 2>&1; then
      ko "A/current/statusOnError render failed: $(tail -3 "$dir.log" | tr '\n' ' ')"
    else
      for want in 503 429; do
        XDSCHECK_DIR="$dir" XDSCHECK_VARIANT=A XDSCHECK_PROFILE=current XDSCHECK_STATUS_ON_ERROR="$want" \
          "$xdsbin" -test.run '^TestGeneratedConfig$/^gateway$/^ratelimit-filter-config$' -test.v -test.count=1 > "$dir.$want.log" 2>&1 || true
        if grep -qE '^ +--- PASS: TestGeneratedConfig/gateway/ratelimit-filter-config' "$dir.$want.log"; then
          [[ "$want" == 503 ]] && ok "A/current/statusOnError=ServiceUnavailable generator: the gateway's rate-limit filter has status_on_error 503" \
            || ko "A/current/statusOnError control: the check passed although it expected 429 (log $dir.$want.log)"
        else
          [[ "$want" == 429 ]] && ok "A/current/statusOnError control: expecting 429 fails ($(grep -m1 -oE 'status_on_error is [0-9a-z]+' "$dir.$want.log"))" \
            || ko "A/current/statusOnError=ServiceUnavailable generator: $(grep -m1 -F 'FAILED' "$dir.$want.log" || echo "see $dir.$want.log")"
        fi
      done
    fi
  fi
fi
# Split layout (counterStore=split, the default): the per-path counters have a rate-limit filter,
# service and Redis of their own. For A and B, Istio's generator builds the gateway from the default
# render (xdscheck TestSplitDump); the gateway model from the render and from the generated routes
# must agree on every path, descriptor and service asked, and each request of /productpage, the api
# paths and a random path must make exactly one call, to the expected service (model-agree --split).
if [[ -n "$xdsbin" && "${ISTIO_CHECK_SPLIT:-1}" != 0 ]]; then
  for v in "${variants[@]}"; do
    sdir="$work/split-$v"
    if ! (cd "$root" && npm run --silent render -- --variant "$v" --profile current --out "$sdir") > "$sdir.log" 2>&1; then
      ko "$v/split render failed: $(tail -3 "$sdir.log" | tr '\n' ' ')"
      continue
    fi
    for f in "$sdir"/*per-value*.yaml; do
      validate_file "$f" && ok "$v/split validate $(basename "$f")" || ko "$v/split validate $(basename "$f"): $validate_problem"
    done
    xds_input "$sdir" "$sdir-xds"
    XDSCHECK_SPLIT_DIR="$sdir-xds" XDSCHECK_VARIANT="$v" XDSCHECK_SPLIT_DUMP="$sdir/routes.json" \
      "$xdsbin" -test.run '^TestSplitDump$' -test.v -test.count=1 > "$sdir.xds.log" 2>&1 || true
    if [[ ! -s "$sdir/routes.json" ]]; then
      ko "$v/split generator: no dump (log $sdir.xds.log): $(grep -m1 FAILED "$sdir.xds.log" || true)"
      continue
    fi
    sagree="$(cd "$root" && npx tsx tests/istio/model-agree.ts --split "$sdir" "$sdir/routes.json" "$v/split" 2>&1)" || true
    while IFS= read -r line; do
      case "$line" in ok\ *) ok "${line#ok   }" ;; FAIL\ *) ko "${line#FAIL }" ;; esac
    done <<< "$sagree"
    grep -qE '^ok +'"$v"'/split split calls' <<< "$sagree" || ko "$v/split: the one-call check did not run: $(tail -3 <<< "$sagree" | tr '\n' ' ')"
  done
fi
# A user's gateway that is not bookinfo, limited by the package's GlobalRateLimit (typed rules):
# tests/istio/render-user.ts renders it, xdscheck/user_gateway_test.go checks what Istio generates,
# tests/istio/user-model-agree.ts compares the gateway model on both sides.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_USER:-1}" != 0 ]]; then
  udir="$work/user-gateway"
  if ! (cd "$root" && npx tsx tests/istio/render-user.ts "$udir") > "$udir.log" 2>&1; then
    ko "user gateway render failed: $(tail -3 "$udir.log" | tr '\n' ' ')"
  else
    XDSCHECK_USER_DIR="$udir" XDSCHECK_USER_DUMP="$udir/routes.json" \
      "$xdsbin" -test.run '^TestUserGateway' -test.v -test.count=1 > "$udir.xds.log" 2>&1 || true
    report_subtests "user gateway generator" "$udir.xds.log" 'TestUserGateway[A-Za-z]*'
    grep -qE '^ +--- PASS: TestUserGateway/vhost-per-client' "$udir.xds.log" || ko "user gateway generator: rules not checked (log $udir.xds.log)"
    # Every spelling of /login under each pathNormalization setting (xdscheck/path_spellings_test.go),
    # and its control (the matcher of one spelling lets /LOGIN through).
    XDSCHECK_USER_DIR="$udir" "$xdsbin" -test.run '^TestPathSpellings' -test.v -test.count=1 > "$udir.spellings.log" 2>&1 || true
    report_subtests "path spellings generator" "$udir.spellings.log" 'TestPathSpellings[A-Za-z]*'
    grep -qE '^ +--- PASS: TestPathSpellings/BASE' "$udir.spellings.log" || ko "path spellings generator: not checked (log $udir.spellings.log)"
    if grep -qE '^--- PASS: TestPathSpellingsControl' "$udir.spellings.log"; then ok "path spellings generator: control (one spelling's matcher lets /LOGIN through)"; else ko "path spellings generator: control failed (log $udir.spellings.log)"; fi
    if [[ -s "$udir/routes.json" ]]; then
      uagree="$(cd "$root" && npx tsx tests/istio/user-model-agree.ts "$udir" "$udir/routes.json" 2>&1)" || true
      while IFS= read -r line; do
        case "$line" in ok\ *) ok "${line#ok   }" ;; FAIL\ *) ko "${line#FAIL }" ;; esac
      done <<< "$uagree"
      grep -qE '^(ok|FAIL) ' <<< "$uagree" || ko "user gateway model agreement: no result: $(tail -3 <<< "$uagree" | tr '\n' ' ')"
    else
      ko "user gateway model agreement: the generator wrote no route configuration dump (see $udir.xds.log)"
    fi
  fi
fi
# GlobalRateLimit's accessLog (tests/istio/render-access-log.ts): the generator puts the replay access
# log on the limited gateway's connection manager only, with replay's fields and without the secret
# header (xdscheck/access_log_test.go); controls: without the access-log EnvoyFilter, and without its
# workload selector, the check fails.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_ACCESS_LOG:-1}" != 0 ]]; then
  adir="$work/access-log"
  if ! (cd "$root" && npx tsx tests/istio/render-access-log.ts "$adir") > "$adir.log" 2>&1; then
    ko "access log render failed: $(tail -3 "$adir.log" | tr '\n' ' ')"
  else
    if validate_file "$adir/all.yaml"; then ok "access log: istioctl validate accepts the render"; else ko "access log: istioctl validate: $validate_problem"; fi
    XDSCHECK_ACCESS_LOG_DIR="$adir" "$xdsbin" -test.run '^TestAccessLog$' -test.v -test.count=1 > "$adir.xds.log" 2>&1 || true
    report_subtests "access log generator" "$adir.xds.log" 'TestAccessLog'
    grep -qE '^ +--- PASS: TestAccessLog/shop-gateway-has-replay-log' "$adir.xds.log" || ko "access log generator: not checked (log $adir.xds.log)"
    if XDSCHECK_ACCESS_LOG_DIR="$adir" XDSCHECK_ACCESS_LOG_DROP=1 "$xdsbin" -test.run '^TestAccessLog$' -test.count=1 > "$adir.control.log" 2>&1; then
      ko "access log control: the check passes without the access-log EnvoyFilter"
    else
      ok "access log control: without the access-log EnvoyFilter the check fails"
    fi
    if XDSCHECK_ACCESS_LOG_DIR="$adir" XDSCHECK_ACCESS_LOG_WIDEN=1 "$xdsbin" -test.run '^TestAccessLog$' -test.count=1 > "$adir.widen.log" 2>&1; then
      ko "access log control: the check passes with the access log on every pod of the namespace"
    else
      ok "access log control: without its workload selector the log reaches the other gateway and the check fails"
    fi
  fi
fi
# Rules keyed by a verified identity (tests/istio/render-identity.ts): the JWT filter Istio generates
# from the component's RequestAuthentication runs before the rate-limit filter and writes the payload
# to dynamic metadata, and the rules' descriptors read the verified claim there, never a header
# (xdscheck/identity_test.go); the hand-made header recipe is the control, which must fail both.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_IDENTITY:-1}" != 0 ]]; then
  idir="$work/identity"
  if ! (cd "$root" && npx tsx tests/istio/render-identity.ts "$idir" && npx tsx tests/istio/render-identity.ts "$idir-control" --control &&
    npx tsx tests/istio/render-identity.ts "$idir-default" --default) > "$idir.log" 2>&1; then
    ko "identity render failed: $(tail -3 "$idir.log" | tr '\n' ' ')"
  else
    if validate_file "$idir/all.yaml"; then ok "identity: istioctl validate accepts the render with a RequestAuthentication"; else ko "identity: istioctl validate: $validate_problem"; fi
    XDSCHECK_IDENTITY_DIR="$idir" XDSCHECK_IDENTITY_CONTROL="$idir-control" XDSCHECK_IDENTITY_DEFAULT="$idir-default" \
      "$xdsbin" -test.run '^TestIdentity' -test.v -test.count=1 > "$idir.xds.log" 2>&1 || true
    report_subtests "identity generator" "$idir.xds.log" 'TestIdentity[A-Za-z]*'
    grep -qE '^ +--- PASS: TestIdentity/per-user-reads-verified-claim' "$idir.xds.log" || ko "identity generator: rules not checked (log $idir.xds.log)"
    grep -qE '^ +--- PASS: TestIdentityDefaultLayout/per-user-reads-verified-claim' "$idir.xds.log" || ko "identity generator: the default layout not checked (log $idir.xds.log)"
    grep -qE '^--- PASS: TestIdentityControl' "$idir.xds.log" || ko "identity generator: the header recipe control did not fail the checks (log $idir.xds.log)"
  fi
fi
# Rule costs (tests/istio/render-cost.ts): istioctl validate accepts the EnvoyFilters, and Istio's
# generator carries hits_addend and apply_on_stream_done into the generated route configuration
# (tests/istio/cost-check.ts reads TestUserGateway's dump of it); the render without costs is the control.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_COST:-1}" != 0 ]]; then
  for cmode in cost no-cost; do
    cdir="$work/cost-$cmode"
    if ! (cd "$root" && npx tsx tests/istio/render-cost.ts "$cdir" $([[ $cmode == no-cost ]] && echo --no-cost)) > "$cdir.log" 2>&1; then
      ko "cost render ($cmode) failed: $(tail -3 "$cdir.log" | tr '\n' ' ')"
      continue
    fi
    if [[ $cmode == cost ]]; then
      if validate_file "$cdir/all.yaml"; then ok "cost: istioctl validate accepts the render with costs"; else ko "cost: istioctl validate: $validate_problem"; fi
    fi
    # The dump is written before TestUserGateway's own checks, which are about the shared-layout render.
    XDSCHECK_USER_DIR="$cdir" XDSCHECK_USER_DUMP="$cdir/routes.json" \
      "$xdsbin" -test.run '^TestUserGateway$' -test.count=1 > "$cdir.xds.log" 2>&1 || true
    if [[ ! -s "$cdir/routes.json" ]]; then ko "cost ($cmode): the generator wrote no route configuration (see $cdir.xds.log)"; continue; fi
    cres="$(cd "$root" && npx tsx tests/istio/cost-check.ts "$cdir/routes.json" $([[ $cmode == no-cost ]] && echo --control) 2>&1)" || true
    while IFS= read -r line; do
      case "$line" in ok\ *) ok "${line#ok   }" ;; FAIL\ *) ko "${line#FAIL }" ;; esac
    done <<< "$cres"
    grep -qE '^(ok|FAIL) ' <<< "$cres" || ko "cost ($cmode): no result: $(tail -3 <<< "$cres" | tr '\n' ' ')"
  done
fi
# Shared-mesh scenario (xdscheck/shared_mesh_test.go): the stack next to other teams' objects, which
# the test writes itself (a tenant Gateway and VirtualService on the shared ingress gateway, a second
# gateway deployment with the same labels in team-b, an app=productpage and a legacy workload in
# namespace other). The default render must keep the stack to itself (TestSharedMesh); the render
# with the specification's literal settings must leak, each control naming its leak
# (TestSharedMeshControls). A passing line carries what the test saw ("FINDING: <id>: ...").
if [[ -n "$xdsbin" && "${ISTIO_CHECK_SHARED:-1}" != 0 && -f "$root/render/cli.ts" ]]; then
  t0=$(date +%s)
  sdir="$work/shared"
  mkdir -p "$sdir"
  declare -A sxin=()
  for kind in scoped literal; do
    flags=()
    [[ $kind == literal ]] && flags=(--set vhostScope=all --set filterNamespaces=root --set mutualTlsScope=mesh)
    if ! (cd "$root" && npm run --silent render -- --variant A --profile current "${flags[@]}" "${ONE_STORE[@]}" --out "$sdir/$kind") > "$sdir/render-$kind.log" 2>&1; then
      ko "shared mesh $kind render failed (npm run render -- --variant A --profile current ${flags[*]}): $(grep -E 'error|mesh-ratelimit:' "$sdir/render-$kind.log" | head -4 | tr '\n' ' ')"
      continue
    fi
    # As for the matrix: all.yaml plus the objects kept out of it (not-appliable/).
    xds_input "$sdir/$kind" "$sdir/xin-$kind"
    sxin[$kind]="$sdir/xin-$kind"
  done
  if [[ -n "${sxin[scoped]:-}" || -n "${sxin[literal]:-}" ]]; then
    slog="$sdir/xds.log"
    XDSCHECK_SHARED_DIR="${sxin[scoped]:-}" XDSCHECK_SHARED_LITERAL_DIR="${sxin[literal]:-}" \
      XDSCHECK_VARIANT=A XDSCHECK_PLACEMENT=all-routes \
      "$xdsbin" -test.run '^TestSharedMesh' -test.v -test.count=1 > "$slog" 2>&1 || true
    report_subtests "shared mesh generator" "$slog" 'TestSharedMesh[A-Za-z]*' 0
    # Every check and every control must have run (8 checks, 5 controls).
    if [[ -n "${sxin[scoped]:-}" ]] && (( $(grep -cE '^ +--- (PASS|FAIL): TestSharedMesh/' "$slog") < 8 )); then
      ko "shared mesh generator: not every check ran (log $slog): $(grep -E 'FAILED: input|panic' "$slog" | head -2 | tr '\n' ' ')"
    fi
    if [[ -n "${sxin[literal]:-}" ]] && (( $(grep -cE '^ +--- (PASS|FAIL): TestSharedMeshControls/' "$slog") < 5 )); then
      ko "shared mesh generator: not every control ran (log $slog): $(grep -E 'FAILED: input|panic' "$slog" | head -2 | tr '\n' ' ')"
    fi
  fi
  # A tenant with host "*" on the stack's gateway port (fixtures/tenant-star.yaml): Istio merges its
  # routes into the stack's virtual host (xdscheck/tenant_merge_test.go); the preflight names it
  # (program/host-sharers.ts, unit tier on the same file).
  if [[ -n "${sxin[scoped]:-}" ]]; then
    tlog="$sdir/tenant-star.log"
    XDSCHECK_SHARED_DIR="${sxin[scoped]}" XDSCHECK_TENANT_STAR="$here/fixtures/tenant-star.yaml" XDSCHECK_VARIANT=A XDSCHECK_PLACEMENT=all-routes \
      "$xdsbin" -test.run '^TestTenantStarMerge$' -test.v -test.count=1 > "$tlog" 2>&1 || true
    report_subtests "tenant on the stack's host" "$tlog" 'TestTenantStarMerge' 0
    (( $(grep -cE '^ +--- (PASS|FAIL): TestTenantStarMerge/' "$tlog") == 2 )) ||
      ko "tenant on the stack's host: not both checks ran (log $tlog): $(grep -E 'FAILED|panic' "$tlog" | head -2 | tr '\n' ' ')"
  fi
  # Side doors (fixtures/side-door.yaml: team-side's VirtualService with host side.example.com bound
  # to the stack's Gateway, routing to productpage; xdscheck/side_door_test.go): with the default
  # Gateway hosts (default/*) Istio binds none of it; the control renders the stack with the
  # specification's "*" (gatewayHostScope=any-namespace), where Istio makes side.example.com:8080
  # without the stack's limits. The preflight refuses that case (program/side-doors.ts, unit tier).
  if [[ -n "${sxin[scoped]:-}" ]]; then
    if ! (cd "$root" && npm run --silent render -- --variant A --profile current "${ONE_STORE[@]}" --set gatewayHostScope=any-namespace --out "$sdir/side-any") > "$sdir/render-side-any.log" 2>&1; then
      ko "side door: render with gatewayHostScope=any-namespace failed: $(grep -E 'error|mesh-ratelimit:' "$sdir/render-side-any.log" | head -4 | tr '\n' ' ')"
    else
      xds_input "$sdir/side-any" "$sdir/xin-side-any"
      dlog="$sdir/side-door.log"
      XDSCHECK_SHARED_DIR="${sxin[scoped]}" XDSCHECK_SIDE_ANY_DIR="$sdir/xin-side-any" XDSCHECK_SIDE_DOOR="$here/fixtures/side-door.yaml" \
        XDSCHECK_VARIANT=A XDSCHECK_PLACEMENT=all-routes "$xdsbin" -test.run '^TestSideDoor$' -test.v -test.count=1 > "$dlog" 2>&1 || true
      report_subtests "side door" "$dlog" 'TestSideDoor' 0
      (( $(grep -cE '^ +--- (PASS|FAIL): TestSideDoor/' "$dlog") == 2 )) ||
        ko "side door: not both checks ran (log $dlog): $(grep -E 'FAILED|panic' "$dlog" | head -2 | tr '\n' ' ')"
    fi
  fi
  echo "shared mesh: 3 renders and the generator in $(( $(date +%s) - t0 ))s"
fi
# Many teams, one gateway (issue 26; xdscheck/many_teams_test.go): team A (team-a, a.example.com) and
# team B (team-b, b.example.com) as two separate programs, each its own Gateway, VirtualService and
# GlobalRateLimit on the shared ingress gateway's port 8080 (tests/istio/render-many-teams.ts: one
# Pulumi mock run per team), plus a hand-written team C filter (route-level rate_limits on
# c.example.com, written by the test). Istio's generator builds the gateway's one listener and route
# configuration: with the per-instance layout no team's filter reads another team's virtual host,
# names are unique and each pre-limit acts on its own host only (TestManyTeams); with
# FilterLayout.Shared each of those checks must fail for the leak it names (TestManyTeamsControls).
# ISTIO_CHECK_MANY_TEAMS=0 skips the section.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_ENVOY_GOLDEN:-1}" != 0 ]]; then
  eg_t0=$(date +%s)
  envoy_golden
  echo "envoy golden: generated and compared in $(( $(date +%s) - eg_t0 ))s"
fi
if [[ -n "$xdsbin" && "${ISTIO_CHECK_MANY_TEAMS:-1}" != 0 ]]; then
  mt_t0=$(date +%s)
  mdir="$work/many-teams"
  if ! (cd "$root" && npx tsx tests/istio/render-many-teams.ts "$mdir") > "$mdir.log" 2>&1; then
    ko "many teams render failed (npx tsx tests/istio/render-many-teams.ts): $(grep -vE '^npm warn' "$mdir.log" | tail -3 | tr '\n' ' ')"
  else
    mlog="$mdir.xds.log"
    XDSCHECK_MANY_DIR="$mdir" "$xdsbin" -test.run '^TestManyTeams' -test.v -test.count=1 > "$mlog" 2>&1 || true
    report_subtests "many teams generator" "$mlog" 'TestManyTeams[A-Za-z]*' 300
    # Every check and every control must have run (5 checks, 5 controls).
    if (( $(grep -cE '^ +--- (PASS|FAIL): TestManyTeams/' "$mlog") < 5 )) || (( $(grep -cE '^ +--- (PASS|FAIL): TestManyTeamsControls/' "$mlog") < 5 )); then
      ko "many teams generator: not every check and control ran (log $mlog): $(grep -E 'FAILED: input|panic' "$mlog" | head -2 | tr '\n' ' ')"
    fi
  fi
  echo "many teams: 4 renders (2 programs x 2 layouts) and the generator in $(( $(date +%s) - mt_t0 ))s"
fi
# Platform defaults with a team override (issue 47; xdscheck/platform_test.go): the platform's
# PlatformRateLimit and team A's GlobalRateLimit as two programs on the shared gateway's port 8080
# (tests/istio/render-platform.ts). With both: team A's routes carry its descriptors and the
# overrides, the defaults filter disabled there; another host carries the defaults and the
# overrides; the filters run overrides, team, defaults; the listener model read from the renders
# agrees with the generated routes (TestPlatform). Without the platform's stack: only the team's
# descriptors, the model agreeing (TestPlatformControl). Team C's own Gateway on port 8443 of the
# same pods meets the overrides there, the port-matched defaults only on 8080 (TestPlatformEveryPort).
# The issue's rogue team (a rule that matches nothing, allVirtualHosts) leaves the defaults on another
# namespace's host; listing that host (what its preview refuses) switches them off (TestPlatformRogueSwitch).
# Each platform pre-limit sits directly before its platform filter with 2L/L buckets, the defaults'
# off with a team's switch; pre-limits anchored on each other's filter fail that (TestPlatformPreLimit).
# ISTIO_CHECK_PLATFORM=0 skips the section.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_PLATFORM:-1}" != 0 ]]; then
  pf_t0=$(date +%s)
  pdir="$work/platform"
  if ! (cd "$root" && npx tsx tests/istio/render-platform.ts "$pdir") > "$pdir.log" 2>&1; then
    ko "platform render failed (npx tsx tests/istio/render-platform.ts): $(grep -vE '^npm warn' "$pdir.log" | tail -3 | tr '\n' ' ')"
  else
    plog="$pdir.xds.log"
    XDSCHECK_PLATFORM_DIR="$pdir" "$xdsbin" -test.run '^TestPlatform' -test.v -test.count=1 > "$plog" 2>&1 || true
    report_subtests "platform generator" "$plog" 'TestPlatform[A-Za-z]*' 300
    # Every check (4) and the control's two must have run.
    if (( $(grep -cE '^ +--- (PASS|FAIL): TestPlatform/' "$plog") < 4 )) || (( $(grep -cE '^ +--- (PASS|FAIL): TestPlatformControl/' "$plog") < 2 )); then
      ko "platform generator: not every check and control ran (log $plog): $(grep -E 'FAILED: input|panic' "$plog" | head -2 | tr '\n' ' ')"
    fi
  fi
  echo "platform: 2 renders (platform, team) and the generator in $(( $(date +%s) - pf_t0 ))s"
fi
# Gateway API Gateway by name (xdscheck/gateway_api_test.go): the package's GlobalRateLimit with
# gateway.gatewayApiName shop-gw in namespace shop (tests/istio/render-gateway-api.ts) renders its
# EnvoyFilters in shop with targetRefs to Gateway shop-gw and no workloadSelector. istioctl validate
# on each filter (its warnings must be listed in gateway-api-allow.txt; a typo inside the typed
# config must be flagged), then Istio's generator for three gateway pods labelled as Istio labels a
# Gateway API Gateway's pods: shop/shop-gw (targeted), shop/other-gw and team-c/shop-gw, all serving
# the same virtual host. Only the first may get the filter and the rate_limits; the controls aim the
# filters elsewhere (other name, other namespace, root namespace, wrong group, a root-namespace label
# selector) and the matching checks must fail. ISTIO_CHECK_GWAPI=0 skips the section.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_GWAPI:-1}" != 0 ]]; then
  gw_t0=$(date +%s)
  gdir="$work/gateway-api"
  if ! (cd "$root" && npx tsx tests/istio/render-gateway-api.ts "$gdir") > "$gdir.log" 2>&1; then
    ko "gateway API render failed (npx tsx tests/istio/render-gateway-api.ts): $(grep -vE '^npm warn' "$gdir.log" | tail -3 | tr '\n' ' ')"
  else
    # validate_file reads its explanations from $allow: the Gateway API render has its own list.
    gw_allow_saved="$allow"
    allow="$here/gateway-api-allow.txt"
    gw_n=0
    for f in "$gdir"/envoyfilter_*.yaml; do
      [[ -f "$f" ]] || continue
      gw_n=$((gw_n + 1))
      if validate_file "$f"; then
        ok "gateway API validate $(basename "$f")"
      else
        ko "gateway API validate $(basename "$f"): $validate_problem"
      fi
    done
    [[ $gw_n -eq 3 ]] || ko "gateway API validate: expected 3 EnvoyFilters (filter-ratelimit, -svc, -svc-api) in $gdir, found $gw_n"
    gw_src="$gdir/envoyfilter_shop_filter-ratelimit.yaml"
    if [[ -f "$gw_src" ]]; then
      sed 's/failure_mode_deny/failure_mode_dny/' "$gw_src" > "$gdir.typo.yaml"
      if validate_file "$gdir.typo.yaml"; then
        ko "control: gateway API validate accepted a typo (failure_mode_dny) inside EnvoyFilter shop/filter-ratelimit typed_config"
      else
        ok "control: gateway API validate flags a typo inside EnvoyFilter shop/filter-ratelimit typed_config (${validate_problem:0:120}...)"
      fi
    fi
    allow="$gw_allow_saved"
    glog="$gdir.xds.log"
    XDSCHECK_GWAPI_DIR="$gdir" "$xdsbin" -test.run '^TestGatewayAPI' -test.v -test.count=1 > "$glog" 2>&1 || true
    report_subtests "gateway API generator" "$glog" 'TestGatewayAPI[A-Za-z]*' 300
    # Every check and every control must have run (8 checks, 5 controls).
    if (( $(grep -cE '^ +--- (PASS|FAIL): TestGatewayAPI/' "$glog") < 8 )) || (( $(grep -cE '^ +--- (PASS|FAIL): TestGatewayAPIControls/' "$glog") < 5 )); then
      ko "gateway API generator: not every check and control ran (log $glog): $(grep -E 'FAILED: input|panic' "$glog" | head -2 | tr '\n' ' ')"
    fi
  fi
  echo "gateway API: render, validate and the generator in $(( $(date +%s) - gw_t0 ))s"
fi
# Ambient mesh (xdscheck/ambient_test.go): the committed ambient renders (tests/golden/out/ambient-A,
# ambient-B: meshMode ambient) on Istio's generator with ambient enabled (PILOT_ENABLE_AMBIENT=true,
# Istio's ambient index): every filter aimed at the ingress reaches the Gateway API ingress's pods
# and lands in its configuration; the local bucket's filter reaches the waypoint serving productpage
# and its bucket lands on productpage's chain only (not on reviews', the other Service behind the
# waypoint), whole chain and per route (tests/golden/out/local-ambient); controls (the filters aimed at
# another Gateway, the bucket on a missing chain or another waypoint, unscoped chain or routes) must
# fail; and the earlier probes (docs/guide/ambient.md). ISTIO_CHECK_AMBIENT=0 skips the section.
if [[ -n "$xdsbin" && "${ISTIO_CHECK_AMBIENT:-1}" != 0 ]]; then
  alog="$work/ambient.xds.log"
  PILOT_ENABLE_AMBIENT=true XDSCHECK_AMBIENT_GOLDEN="$golden/out" "$xdsbin" -test.run '^TestAmbient$' -test.v -test.count=1 > "$alog" 2>&1 || true
  report_subtests "ambient generator" "$alog" 'TestAmbient' 300
  # Four checks per variant, the per-route bucket, four waypoint controls and the three probes must have run.
  if (( $(grep -cE '^ +--- (PASS|FAIL): TestAmbient/' "$alog") < 16 )); then
    ko "ambient generator: not every check and control ran (log $alog): $(grep -E 'FAILED: input|panic' "$alog" | head -2 | tr '\n' ' ')"
  fi
fi
# ---- kube-score on the rate-limit service and Redis -------------------------------------------
# kube-score (scripts/tools/build-kube-score.sh, v1.20.0) on the rendered Deployments, Services,
# PodDisruptionBudgets and NetworkPolicies of the rate-limit service and Redis (metadata label
# app.kubernetes.io/component ratelimit|redis) of the default stack, profile current, for each
# variant of the matrix (ISTIO_CHECK_RENDER_DIR: that render instead). `-o json` names each check by
# its id; every CRITICAL that ran must be accepted by kube-score-allow.txt (check id exactly, plus
# the comment's summary). `kube-score/ignore` annotations are disabled, so the render cannot silence
# a check itself. Negative controls: broken copies of the Redis Deployment must fail, each with its
# own check. ISTIO_CHECK_KUBE_SCORE=0 skips the section.
if [[ "${ISTIO_CHECK_KUBE_SCORE:-1}" != 0 ]]; then
  ks_t0=$(date +%s)
  ks_allow="$here/kube-score-allow.txt"
  ks_dir="$work/kube-score"
  mkdir -p "$ks_dir"
  declare -A ks_used=()
  ks_bin=""
  if bash "$root/scripts/tools/build-kube-score.sh" > "$CACHE/logs/kube-score-build.log" 2>&1; then
    ks_bin="$(bash "$root/scripts/tools/build-kube-score.sh" --print-path)"
  else
    tail -10 "$CACHE/logs/kube-score-build.log" | sed 's/^/     /'
    ko "kube-score: build failed (log: $CACHE/logs/kube-score-build.log)"
  fi

  # ks_files DIR: the rendered files of the four kinds labelled as the rate-limit service or Redis.
  ks_files() {
    local f
    for f in "$1"/deployment_*.yaml "$1"/service_*.yaml "$1"/poddisruptionbudget_*.yaml "$1"/networkpolicy_*.yaml; do
      if [[ -f "$f" ]] && grep -qE '^    app\.kubernetes\.io/component: (ratelimit|redis)$' "$f"; then echo "$f"; fi
    done
  }

  # ks_score OUT FILE...: kube-score -o json into OUT.json, and OUT.findings: one line per comment
  # of each CRITICAL check that ran (object<TAB>check id<TAB>container or -<TAB>summary). Returns 1, with
  # the reason in ks_problem, when kube-score failed or did not score one object per file.
  ks_problem=""
  ks_score() {
    local out=$1 rc=0 n; shift
    ks_problem=""
    "$ks_bin" score -o json --color never --kubernetes-version v1.36 \
      --disable-ignore-checks-annotations "$@" > "$out.json" 2> "$out.err" || rc=$?
    # Exit 1 is also kube-score's answer when a check is CRITICAL: the JSON decides.
    n="$(jq 'if type == "array" then length else error("not an array") end' "$out.json" 2>/dev/null || true)"
    if ((rc > 1)) || [[ ! "$n" =~ ^[0-9]+$ ]]; then
      ks_problem="kube-score exit $rc, no JSON scorecard: $(cat "$out.err" "$out.json" | head -c 300 | tr '\n' ' ')"
      return 1
    fi
    if ((n != $#)); then
      ks_problem="kube-score scored $n object(s) in $# file(s)"
      return 1
    fi
    jq -r '.[] | .object_name as $o | .checks[] | select((.skipped | not) and .grade == 1)
           | .check.id as $id
           | ((.comments // []) | if length == 0 then [{path: "", summary: ""}] else . end)[]
           | [$o, $id, (if .path == "" then "-" else .path end), .summary] | @tsv' "$out.json" > "$out.findings"
  }

  # ks_unallowed FINDINGS [mark]: prints the findings kube-score-allow.txt does not accept; with
  # mark, records which entry accepted what (for the note after the renders).
  ks_unallowed() {
    local o id path summary aid are _why hit
    while IFS=$'\t' read -r o id path summary; do
      hit=""
      while IFS=$'\t' read -r aid are _why; do
        [[ -z "$aid" || "$aid" == \#* ]] && continue
        if [[ "$id" == "$aid" && "$summary" =~ ^($are)$ ]]; then hit="$aid"; break; fi
      done < "$ks_allow"
      if [[ -z "$hit" ]]; then
        printf '%s\t%s\t%s\t%s\n' "$o" "$id" "$path" "$summary"
      elif [[ -n "${2:-}" && "${ks_used[$hit]:-}" != *"${o##*/}"* ]]; then
        ks_used[$hit]+="${ks_used[$hit]:+, }${o##*/}"
      fi
    done < "$1"
  }

  # ks_check LABEL DIR: every object checked gets an ok/FAIL line.
  ks_check() {
    local label=$1 dir=$2 files=() o bad allowed
    mapfile -t files < <(ks_files "$dir")
    if ! printf '%s\n' "${files[@]}" | grep -q '/deployment_[^/]*_ratelimit\.yaml$' ||
       ! printf '%s\n' "${files[@]}" | grep -q '/deployment_[^/]*_redis\.yaml$'; then
      ko "$label kube-score: no rate-limit or no Redis Deployment in $dir (files: ${files[*]##*/})"
      return
    fi
    local out="$ks_dir/${label//\//-}"
    if ! ks_score "$out" "${files[@]}"; then
      ko "$label kube-score: $ks_problem"
      return
    fi
    ks_unallowed "$out.findings" mark > "$out.unallowed"
    while IFS= read -r o; do
      bad="$(awk -F'\t' -v o="$o" '$1 == o { printf "%s (%s%s); ", $2, ($3 == "-" ? "" : $3 ": "), $4 }' "$out.unallowed")"
      allowed="$(awk -F'\t' -v o="$o" '$1 == o { print $2 }' "$out.findings" | sort -u | paste -sd, -)"
      if [[ -n "$bad" ]]; then
        ko "$label kube-score $o: CRITICAL not in kube-score-allow.txt: ${bad%; }"
      else
        ok "$label kube-score $o: no CRITICAL outside kube-score-allow.txt${allowed:+ (allowed: $allowed)}"
      fi
    done < <(jq -r '.[].object_name' "$out.json" | sort)
  }

  # ks_control NAME WANT DIR: a copy of DIR's files with the Redis Deployment broken by mutation
  # NAME must fail with a CRITICAL of check WANT on that Deployment.
  # The edit goes through the yaml package's Document, so every other scalar keeps its quoting
  # (a plain re-dump would write Redis's `--appendonly "no"` as a bare `no`, a boolean to kube-score).
  ks_mutate='
    const fs = require("fs"), Y = require("yaml");
    const [src, dst, what] = process.argv.slice(1);
    const doc = Y.parseDocument(fs.readFileSync(src, "utf8"));
    const i = doc.toJS().spec.template.spec.containers.findIndex((x) => x.name === "redis");
    if (i < 0) throw new Error("no container redis in " + src);
    const c = ["spec", "template", "spec", "containers", i];
    const lowUser = () => doc.setIn([...c, "securityContext", "runAsUser"], 999);
    const drop = (path) => {
      if (!doc.hasIn(path)) throw new Error("nothing to remove at " + path.join("."));
      doc.deleteIn(path);
    };
    switch (what) {
      case "runAsUser-999": lowUser(); break;
      case "no-readinessProbe": drop([...c, "readinessProbe"]); break;
      case "runAsUser-999+ignore-annotation":
        lowUser();
        doc.setIn(["metadata", "annotations", "kube-score/ignore"], "container-security-context-user-group-id");
        break;
      case "no-memory-limit": drop([...c, "resources", "limits", "memory"]); break;
      default: throw new Error("unknown mutation " + what);
    }
    fs.writeFileSync(dst, doc.toString());'
  ks_control() {
    local name=$1 want=$2 dir=$3 cdir="$ks_dir/control-$1" files=() f redis="" hit
    mapfile -t files < <(ks_files "$dir")
    mkdir -p "$cdir"
    for f in "${files[@]}"; do
      cp "$f" "$cdir/"
      if [[ "$f" == */deployment_*_redis.yaml ]]; then redis="$f"; fi
    done
    if [[ -z "$redis" ]] || ! (cd "$root" && node -e "$ks_mutate" "$redis" "$cdir/$(basename "$redis")" "$name") > "$cdir.log" 2>&1; then
      ko "control: kube-score $name: could not break the Redis Deployment: $(grep -m1 -E '^[A-Za-z]*Error: ' "$cdir.log" 2>/dev/null || echo "no rendered Redis Deployment")"
      return
    fi
    if ! ks_score "$cdir/out" "$cdir"/*.yaml; then
      ko "control: kube-score $name: $ks_problem"
      return
    fi
    ks_unallowed "$cdir/out.findings" > "$cdir/out.unallowed"
    hit="$(awk -F'\t' -v id="$want" '$1 ~ /^Deployment\/apps\/v1\/[^\/]+\/redis$/ && $2 == id { print ($3 == "-" ? "" : $3 ": ") $4; exit }' "$cdir/out.unallowed")"
    if [[ -n "$hit" ]]; then
      ok "control: kube-score check fails on the Redis Deployment with $name: CRITICAL $want ($hit)"
    else
      ko "control: kube-score check did not fail on the Redis Deployment with $name (expected CRITICAL $want; not allowed: $(cut -f1,2 "$cdir/out.unallowed" | tr '\t\n' ' ;'))"
    fi
  }

  if [[ -n "$ks_bin" ]]; then
    ks_base=""
    if [[ -n "${ISTIO_CHECK_RENDER_DIR:-}" ]]; then
      ks_check "${variants[0]}/${profiles[0]}" "$ISTIO_CHECK_RENDER_DIR"
      ks_base="$ISTIO_CHECK_RENDER_DIR"
    else
      for ks_v in "${variants[@]}"; do
        ks_rdir="$ks_dir/$ks_v-current"
        if ! (cd "$root" && npm run --silent render -- --variant "$ks_v" --profile current --out "$ks_rdir") > "$ks_rdir.log" 2>&1; then
          ko "$ks_v/current kube-score render: npm run render failed: $(tail -3 "$ks_rdir.log" | tr '\n' ' ')"
          continue
        fi
        ks_check "$ks_v/current" "$ks_rdir"
        [[ -n "$ks_base" ]] || ks_base="$ks_rdir"
      done
    fi
    if [[ -n "$ks_base" ]]; then
      ks_control runAsUser-999 container-security-context-user-group-id "$ks_base"
      ks_control no-readinessProbe pod-probes "$ks_base"
      ks_control runAsUser-999+ignore-annotation container-security-context-user-group-id "$ks_base"
      ks_control no-memory-limit container-resources "$ks_base"
    fi
    while IFS=$'\t' read -r aid _are _why; do
      [[ -z "$aid" || "$aid" == \#* ]] && continue
      echo "     kube-score-allow.txt $aid: ${ks_used[$aid]:-accepted nothing in these renders}"
    done < "$ks_allow"
  fi
  echo "kube-score: renders, checks and controls in $(( $(date +%s) - ks_t0 ))s"
fi
echo "istio checks took $(( $(date +%s) - start ))s"

if [[ $failed -gt 0 ]]; then
  echo "failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
