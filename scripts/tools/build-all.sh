#!/usr/bin/env bash
# Builds every tool the project's real-program tiers use, into $CACHE/tools (outside the repo).
# Each per-tool script reuses a binary already present (MESH_RL_REBUILD=1 forces a rebuild) and
# appends its wall time to $CACHE/timings.log. Builds run one at a time (2-core machines).
#   usage: scripts/tools/build-all.sh [tool...]      (default: all, in the order below)
#   MESH_RL_BUILD_KEEP_GOING=1: exit 0 even when a build failed (after saying which).
#   MESH_RL_BUILD_STATUS=<dir>: after each tool, write <dir>/<tool> ("ok", "failed" or "blocked" and
#     its seconds), and <dir>/all-done at the end. `.ci/run` runs the builds in the background this
#     way and `npm test` (scripts/test-all.sh) starts each tier as soon as the tools it needs are done.
#
# A script that exits 3 reports a BLOCKED tool: one the Go module proxy does not serve at any
# version (Pulumi's Random provider; see docs/proof/e2e.md). It is reported, not counted as a failure:
# the e2e tier runs without it (a model stands in for the one scenario that needs it, counted apart).
# Everything else, the Pulumi CLI and its Kubernetes provider included, builds on every machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"

# In the order the tiers need them (scripts/test-all.sh runs rls, istio, cluster, e2e): the rls
# tier's service and Prometheus, the istio tier's istioctl and kube-score (the cluster tier also reads
# istioctl's injection template), the cluster tier's control plane and kwok, then the e2e group (the
# Pulumi CLI and Kubernetes provider; the Random provider's check). Run beside the tiers, only the
# e2e tier waits for the last build.
all=(debian ratelimit prometheus istioctl kube-score etcd kube-apiserver kwok pulumi pulumi-kubernetes pulumi-random)
tools=("$@"); ((${#tools[@]})) || tools=("${all[@]}")
failed=() blocked_tools=()
status_dir=${MESH_RL_BUILD_STATUS:-}
[[ -z $status_dir ]] || mkdir -p "$status_dir"
# status <tool> <word> <seconds>: what a waiting tier reads (nothing without MESH_RL_BUILD_STATUS).
status() { [[ -z $status_dir ]] || printf '%s %s\n' "$2" "$3" > "$status_dir/$1"; }
# script_of <tool>: the script that builds (or installs) it.
script_of() { if [[ $1 == debian ]]; then echo "$here/install-debian.sh"; else echo "$here/build-$1.sh"; fi; }
# Every name is checked before the first build, so a typo stops the run before anything is built.
for t in "${tools[@]}"; do
  [[ -f "$(script_of "$t")" ]] || { status all-done failed 0; die "build-all: unknown tool '$t' (no $(basename "$(script_of "$t")"))"; }
done
t_all=$(date +%s)
for t in "${tools[@]}"; do
  script=$(script_of "$t")
  log "build-all: $t"
  t0=$(date +%s)
  rc=0; bash "$script" || rc=$?
  secs=$(( $(date +%s) - t0 ))
  if ((rc == BLOCKED_RC)); then blocked_tools+=("$t"); status "$t" blocked "$secs"
  elif ((rc != 0)); then failed+=("$t"); warn "build-all: $t FAILED"; status "$t" failed "$secs"
  else status "$t" ok "$secs"; fi
  log "build-all: $t ${secs}s"
done
log "build-all: done in $(( $(date +%s) - t_all ))s; timings in $CACHE/timings.log"
status all-done "$( ((${#failed[@]})) && echo failed || echo ok)" "$(( $(date +%s) - t_all ))"
((${#blocked_tools[@]} == 0)) || warn "build-all: BLOCKED (not obtainable here): ${blocked_tools[*]}"
if ((${#failed[@]})); then
  # MESH_RL_BUILD_KEEP_GOING=1: report and go on (the tiers needing a missing tool print SKIPPED,
  # which fails under CI=true, so nothing looks like a pass).
  if [[ "${MESH_RL_BUILD_KEEP_GOING:-}" == 1 ]]; then warn "build-all: FAILED builds: ${failed[*]}"; exit 0; fi
  die "build-all: failed: ${failed[*]}"
fi
