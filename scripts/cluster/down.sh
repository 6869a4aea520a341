#!/usr/bin/env bash
# Stops the local cluster started by up.sh (only the processes whose pids it recorded) and wipes
# its state directory.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
CL=$CLUSTER_DIR
if [[ ! -d "$CL" ]]; then log "no cluster state in $CL"; exit 0; fi
# Stop in reverse order of start: clients first, etcd last.
for name in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  f=$CL/pids/$name.pid
  [[ -f "$f" ]] || continue
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then warn "$name ($pid) still running: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
    log "stopped $name ($pid)"
  fi
done
rm -rf "$CL"
log "cluster state $CL removed"
