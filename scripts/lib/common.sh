#!/usr/bin/env bash
# Shared helpers for mesh-ratelimit scripts. Source it; do not execute it.
#   CACHE        tool/build cache outside the work tree
#   REPO_ROOT    the repository root
# Functions: log, warn, die, need_cmd, skipped, timing_record, tool_dir, go_wrapper_build,
#   go_proxy_has, blocked, reuse_or_blocked, free_port, wait_for
# shellcheck shell=bash

CACHE=${MESH_RL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mesh-ratelimit}
export CACHE
REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export REPO_ROOT
export GOTOOLCHAIN=local
export GOFLAGS=${GOFLAGS:--buildvcs=false}
# The checksum database reachable here has no entry for several github.com/pulumi module versions
# the proxy does serve (e.g. pkg/v3@v3.248.0: "sumdb ... 404 Not Found"). Skip the checksum-database
# lookup for those modules only; their content still comes from the module proxy.
export GONOSUMDB=${GONOSUMDB:-github.com/pulumi}
mkdir -p "$CACHE/tools"

log()  { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; exit 1; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "required command not found: $1"; }

# A tier whose tools are missing must never look like a pass.
# skipped <tier> <reason>: prints the loud line; returns 1 when CI=true or MESH_RL_REQUIRE_TOOLS=1.
skipped() {
  printf 'SKIPPED: %s: %s\n' "$1" "$2"
  if [[ "${CI:-}" == "true" || "${MESH_RL_REQUIRE_TOOLS:-}" == "1" ]]; then return 1; fi
  return 0
}

# timing_record <tool> <cold|warm> <seconds>
timing_record() {
  printf '%s %s %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" "$3" >> "$CACHE/timings.log"
}

# tool_dir <tool> <version> -> $CACHE/tools/<tool>-<version>
tool_dir() { printf '%s/tools/%s-%s' "$CACHE" "$1" "$2"; }

# go_wrapper_build <tool> <version> <binary-name> <package> <ldflags> [go-get-spec...]
# Builds <package> inside a throw-away wrapper module $CACHE/wrappers/<tool>-<version>
# (go mod init local/<tool>; go get <specs>), output $(tool_dir)/<binary-name>.
# Hooks (optional functions defined by the caller before calling):
#   wrapper_prepare <wrapper-dir>   runs after `go mod init`, before `go get`
#   wrapper_finish  <wrapper-dir>   runs after `go get`, before `go build`
# Overrides: GWB_WRAPPER (wrapper dir name, to share one wrapper between several
# binaries of one module), GWB_OUT (output directory), GWB_TAGS (go build -tags).
# Reuses an existing binary unless MESH_RL_REBUILD=1. A build is "cold" when the
# wrapper module did not exist yet, "warm" otherwise (module + build caches populated).
go_wrapper_build() {
  local tool=$1 version=$2 bin=$3 pkg=$4 ldflags=$5; shift 5
  local out=${GWB_OUT:-$(tool_dir "$tool" "$version")}
  local wdir="$CACHE/wrappers/${GWB_WRAPPER:-$tool-$version}"
  if [[ -x "$out/$bin" && "${MESH_RL_REBUILD:-}" != "1" ]]; then
    log "$tool $version: reusing $out/$bin"; return 0
  fi
  need_cmd go
  local kind=warm
  [[ -f "$wdir/.built-$tool" ]] || kind=cold
  local t0; t0=$(date +%s)
  mkdir -p "$wdir" "$out"
  (
    cd "$wdir"
    if [[ ! -f go.mod ]]; then
      go mod init "local/$tool" >/dev/null 2>&1
    fi
    if declare -F wrapper_prepare >/dev/null; then wrapper_prepare "$wdir"; fi
    if (($#)); then go get "$@"; fi
    if declare -F wrapper_finish >/dev/null; then wrapper_finish "$wdir"; fi
    log "$tool $version: go build $pkg ($kind)"
    go build -trimpath ${GWB_TAGS:+-tags "$GWB_TAGS"} -ldflags "-s -w $ldflags" -o "$out/$bin.tmp" "$pkg"
    mv "$out/$bin.tmp" "$out/$bin"
    touch ".built-$tool"
  )
  local secs=$(( $(date +%s) - t0 ))
  timing_record "$tool" "$kind" "$secs"
  log "$tool $version: built $out/$bin in ${secs}s ($kind)"
}

# go_proxy_has <module>@<version>: true when the module proxy serves that version.
go_proxy_has() {
  (cd "$(mktemp -d)" && go mod download -json "$1" >/dev/null 2>&1)
}

# A tool that cannot be obtained on this kind of machine by any committed, permitted means (the
# Go module proxy refuses every version and the repo may not carry a recipe that builds a fetched
# copy of the source). blocked <tool> <reason>: prints a loud BLOCKED line; returns 3.
BLOCKED_RC=3
blocked() {
  printf 'BLOCKED: %s: %s\n' "$1" "$2" >&2
  return $BLOCKED_RC
}

# reuse_or_blocked <tool> <version> <binary path> <module@version> <what a build would need>
# For a tool the module proxy does not serve: reuse a binary placed in the cache by hand; stop
# loudly if the proxy has started serving the module (the script then needs its real build);
# otherwise report BLOCKED (returns 3).
reuse_or_blocked() {
  local tool=$1 version=$2 bin=$3 mod=$4 needs=$5
  if [[ -x "$bin" ]]; then
    log "$tool $version: reusing $bin (placed by hand; see the header of build-$tool.sh)"; return 0
  fi
  if command -v go >/dev/null && go_proxy_has "$mod"; then
    die "the Go module proxy now serves $mod: add its wrapper build ($needs) to build-$tool.sh"
  fi
  blocked "$tool $version" "the Go module proxy refuses every version of ${mod%@*} (403); the e2e tier uses it where a binary is at $bin"
}


# Pinned versions (keep in step with package.json's @pulumi/* SDKs).
PULUMI_VERSION=${PULUMI_VERSION:-v3.248.0}
PULUMI_LANGHOST_COMMIT=${PULUMI_LANGHOST_COMMIT:-dc7edd58bc13}
# The Kubernetes provider: the proxy serves only this pseudo-version of provider/v4, the commit the
# upstream tag v4.25.0 points at (scripts/tools/build-pulumi-kubernetes.sh); the npm SDK is 4.25.0.
PULUMI_K8S_VERSION=${PULUMI_K8S_VERSION:-4.25.0}
PULUMI_K8S_PSEUDO=${PULUMI_K8S_PSEUDO:-v4.0.0-20260115033456-f47bc2d6f199}
PULUMI_RANDOM_VERSION=${PULUMI_RANDOM_VERSION:-4.21.1}
PULUMI_RANDOM_COMMIT=${PULUMI_RANDOM_COMMIT:-f2d8b029d0f7}
ETCD_VERSION=${ETCD_VERSION:-v3.6.14}
KUBE_VERSION=${KUBE_VERSION:-v1.36.1}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
PULUMI_BIN_DIR=$(tool_dir pulumi "$PULUMI_VERSION")
PULUMI_K8S_BIN=$(tool_dir pulumi-kubernetes "$PULUMI_K8S_VERSION")/pulumi-resource-kubernetes
PULUMI_RANDOM_BIN=$(tool_dir pulumi-random "$PULUMI_RANDOM_VERSION")/pulumi-resource-random
ETCD_BIN=$(tool_dir etcd "$ETCD_VERSION")/etcd
KUBE_BIN_DIR=$(tool_dir kubernetes "$KUBE_VERSION")
KWOK_DIR=$(tool_dir kwok "$KWOK_VERSION")

# Prometheus (server and promtool) for the rls tier's monitoring checks (scripts/tools/build-prometheus.sh).
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}
PROMETHEUS_DIR=$(tool_dir prometheus "$PROMETHEUS_VERSION")

# free_port: prints a TCP port on 127.0.0.1 that nothing listens on (random in 20000-31999, below
# the kernel's ephemeral range 32768-60999, so an outgoing connection cannot be holding it).
free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

# wait_for <seconds> <description> <command...>: retries the command every 0.5 s.
wait_for() {
  local secs=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || { warn "timed out after ${secs}s waiting for $what"; return 1; }
    sleep 0.5
  done
}

CLUSTER_DIR=${MESH_RL_CLUSTER_DIR:-$CACHE/cluster}
# Istio's CRDs for the local cluster come from the same istio.io/istio module version as istioctl
# (scripts/tools/build-istioctl.sh): the proxy refuses 1.30.3 (56df41f63e51) and serves this
# release-1.30 pseudo-version.
ISTIO_MODVER=${ISTIO_MODVER:-v0.0.0-20260826214018-9739e10eb9d7}

# run_mocha_tier TIER CONFIG [mocha args...]: runs one mocha tier, echoing its output, then prints
# `TIER: N passed, M failed`. Returns mocha's exit code, or 1 when it failed without a count or when
# no test ran (a tier that ran nothing must not look like a pass).
run_mocha_tier() {
  local tier="$1" config="$2"; shift 2
  local out rc passed failed
  out="$(mktemp)"
  set +e
  npx mocha --config "$config" "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  set -e
  passed=$(sed -n 's/^ *\([0-9][0-9]*\) passing.*/\1/p' "$out" | tail -1)
  failed=$(sed -n 's/^ *\([0-9][0-9]*\) failing.*/\1/p' "$out" | tail -1)
  rm -f "$out"
  passed=${passed:-0}
  failed=${failed:-0}
  if [[ $rc -ne 0 && $failed -eq 0 ]]; then failed=1; fi
  echo "${tier}: ${passed} passed, ${failed} failed"
  if [[ $passed -eq 0 ]]; then
    echo "${tier}: no test ran" >&2
    return 1
  fi
  return "$rc"
}
