#!/usr/bin/env bash
# Regenerates docs/monitoring-dashboard.png: runs the rls tier's monitoring test with recording on
# (real rate-limit service, Redis and Prometheus; MESH_RL_RECORD_DASHBOARD), then draws every panel
# of the recorded dashboard with gnuplot (Debian's gnuplot-nox, installed here when missing).
#   bash scripts/render-dashboard-png.sh [out.png]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$HERE/lib/common.sh"
cd "$REPO_ROOT"
out=${1:-docs/monitoring-dashboard.png}
if ! command -v gnuplot >/dev/null 2>&1; then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnuplot-nox
fi
series=$(mktemp --suffix=.json)
trap 'rm -f "$series"' EXIT
MESH_RL_RECORD_DASHBOARD="$series" MESH_RL_REQUIRE_TOOLS=1 bash tests/rls/run.sh --grep "rls monitoring"
npx tsx scripts/plot-dashboard.ts "$series" "$out"
