#!/usr/bin/env bash
# Builds every tool the project's real-program tiers use, into $CACHE/tools (outside the repo).
# Each per-tool script reuses a binary already present (MESH_RL_REBUILD=1 forces a rebuild) and
# appends its wall time to $CACHE/timings.log. Builds run one at a time (2-core machines).
#   usage: scripts/tools/build-all.sh [tool...]      (default: all, in the order below)
#   MESH_RL_BUILD_KEEP_GOING=1: exit 0 even when a build failed (after saying which).
#
# A script that exits 3 reports a BLOCKED tool: one the Go module proxy does not serve at any
# version (Pulumi's Random provider; see docs/e2e.md). It is reported, not counted as a failure:
# the e2e tier runs without it (a model stands in for the one scenario that needs it, counted apart).
# Everything else, the Pulumi CLI and its Kubernetes provider included, builds on every machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"

# Cheapest and most useful first (the istio tier's istioctl and kube-score); the cluster tier's
# tools, then the rls tier's Prometheus, then the e2e group (the Pulumi CLI and Kubernetes provider;
# the Random provider's check).
all=(debian ratelimit istioctl kube-score prometheus etcd kube-apiserver kwok pulumi pulumi-kubernetes pulumi-random)
tools=("$@"); ((${#tools[@]})) || tools=("${all[@]}")
failed=() blocked_tools=()
t_all=$(date +%s)
for t in "${tools[@]}"; do
  if [[ $t == debian ]]; then script="$here/install-debian.sh"; else script="$here/build-$t.sh"; fi
  [[ -f "$script" ]] || die "build-all: unknown tool '$t' (no $(basename "$script"))"
  log "build-all: $t"
  rc=0; bash "$script" || rc=$?
  if ((rc == BLOCKED_RC)); then blocked_tools+=("$t")
  elif ((rc != 0)); then failed+=("$t"); warn "build-all: $t FAILED"; fi
done
log "build-all: done in $(( $(date +%s) - t_all ))s; timings in $CACHE/timings.log"
((${#blocked_tools[@]} == 0)) || warn "build-all: BLOCKED (not obtainable here): ${blocked_tools[*]}"
if ((${#failed[@]})); then
  # MESH_RL_BUILD_KEEP_GOING=1: report and go on (the tiers needing a missing tool print SKIPPED,
  # which fails under CI=true, so nothing looks like a pass).
  if [[ "${MESH_RL_BUILD_KEEP_GOING:-}" == 1 ]]; then warn "build-all: FAILED builds: ${failed[*]}"; exit 0; fi
  die "build-all: failed: ${failed[*]}"
fi
