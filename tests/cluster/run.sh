#!/usr/bin/env bash
# Cluster tier (npm run test:cluster): the stack's objects against a real Kubernetes API server.
# Starts a throw-away control plane on 127.0.0.1 with scripts/cluster/up.sh (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok fake nodes, Istio's CRDs), exports KUBECONFIG, runs
# tests/cluster/**/*.test.ts with mocha and always stops and wipes the cluster at the end.
# No Pulumi engine is needed. Prints a final `cluster: N passed, M failed` line; exits non-zero on
# any failure. Missing tools: a loud SKIPPED line, non-zero under CI=true or MESH_RL_REQUIRE_TOOLS=1.
#   extra arguments go to mocha, e.g. `npm run test:cluster -- --grep mesh`
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
cd "$ROOT"

missing=()
command -v kubectl >/dev/null 2>&1 || missing+=("kubectl (Debian package, scripts/tools/install-debian.sh)")
command -v openssl >/dev/null 2>&1 || missing+=("openssl")
[[ -x "$ETCD_BIN" ]] || missing+=("etcd ($ETCD_BIN)")
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  [[ -x "$KUBE_BIN_DIR/$c" ]] || missing+=("$c ($KUBE_BIN_DIR/$c)")
done
[[ -x "$KWOK_DIR/kwok" ]] || missing+=("kwok ($KWOK_DIR/kwok)")
if ((${#missing[@]})); then
  skipped "cluster" "not built: ${missing[*]}; run 'npm run tools' (scripts/tools/build-all.sh etcd kube-apiserver kwok)" || exit 1
  exit 0
fi

# A cluster of its own (never a developer's `npm run cluster:up` one), wiped on exit.
export MESH_RL_CLUSTER_DIR="$CACHE/cluster-tier-$$"
export MESH_RL_FAKE_NODES=1
cleanup() {
  local rc=$?
  if [[ -d "$MESH_RL_CLUSTER_DIR/logs" ]]; then
    rm -rf "$CACHE/logs/cluster-tier-last"; mkdir -p "$CACHE/logs"
    cp -r "$MESH_RL_CLUSTER_DIR/logs" "$CACHE/logs/cluster-tier-last" 2>/dev/null || true
  fi
  bash "$ROOT/scripts/cluster/down.sh" >/dev/null 2>&1 || warn "cluster: down.sh failed; state in $MESH_RL_CLUSTER_DIR"
  exit "$rc"
}
trap cleanup EXIT

t0=$(date +%s)
env_line=$(bash "$ROOT/scripts/cluster/up.sh") || die "cluster: scripts/cluster/up.sh failed (logs: $MESH_RL_CLUSTER_DIR/logs, kept in $CACHE/logs/cluster-tier-last)"
export KUBECONFIG="${env_line#export KUBECONFIG=}"
[[ -f "$KUBECONFIG" ]] || die "cluster: up.sh printed no kubeconfig ('$env_line')"
log "cluster: control plane up in $(( $(date +%s) - t0 ))s (kube-apiserver $KUBE_VERSION)"

# istioctl (built by the istio tier / `npm run tools`, never built here): its injection template for
# tests/cluster/sidecar-injection.test.ts; that test alone is SKIPPED when it is missing.
istioctl_bin=$(bash "$ROOT/scripts/tools/build-istioctl.sh" --print-path 2>/dev/null || true)
if [[ -n "$istioctl_bin" && -x "$istioctl_bin" ]]; then export MESH_RL_ISTIOCTL="$istioctl_bin"; fi

rc=0
run_mocha_tier cluster tests/cluster/.mocharc.json "$@" || rc=$?
log "cluster: whole tier $(( $(date +%s) - t0 ))s"
exit "$rc"
