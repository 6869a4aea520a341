#!/usr/bin/env bash
# Builds every tool the project's real-program tiers use, into $CACHE/tools (outside the repo).
# Each per-tool script reuses a binary already present (MESH_RL_REBUILD=1 forces a rebuild) and
# appends its wall time to $CACHE/timings.log. Builds run one at a time (2-core machines).
#   usage: scripts/tools/build-all.sh [tool...]      (default: all, in the order below)
#   MESH_RL_BUILD_KEEP_GOING=1: exit 0 even when a build failed (after saying which).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"

all=(debian etcd kube-apiserver pulumi pulumi-kubernetes pulumi-random kwok ratelimit istioctl)
tools=("$@"); ((${#tools[@]})) || tools=("${all[@]}")
failed=()
t_all=$(date +%s)
for t in "${tools[@]}"; do
  if [[ $t == debian ]]; then script="$here/install-debian.sh"; else script="$here/build-$t.sh"; fi
  if [[ ! -f "$script" ]]; then
    # build-ratelimit.sh and build-istioctl.sh belong to other parts of the project.
    log "build-all: no $(basename "$script"), skipping $t"; continue
  fi
  log "build-all: $t"
  if ! bash "$script"; then failed+=("$t"); warn "build-all: $t FAILED"; fi
done
log "build-all: done in $(( $(date +%s) - t_all ))s; timings in $CACHE/timings.log"
if ((${#failed[@]})); then
  # MESH_RL_BUILD_KEEP_GOING=1: report and go on (the tiers needing a missing tool print SKIPPED,
  # which fails under CI=true, so nothing looks like a pass).
  if [[ "${MESH_RL_BUILD_KEEP_GOING:-}" == 1 ]]; then warn "build-all: FAILED builds: ${failed[*]}"; exit 0; fi
  die "build-all: failed: ${failed[*]}"
fi
