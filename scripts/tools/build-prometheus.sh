#!/usr/bin/env bash
# Build Prometheus (github.com/prometheus/prometheus: the server and promtool) from the Go module
# proxy into $CACHE/tools/prometheus-<version>/. The rls tier starts the server on loopback, lets it
# scrape the real rate-limit service and Redis, and evaluates every dashboard query and alert
# expression the stack ships through its HTTP API; promtool checks the shipped rule groups
# (tests/rls/monitoring.test.ts, docs/monitoring.md).
# Idempotent: reuses the binaries when both are present and report the pinned version. Options:
# --force or MESH_RL_REBUILD=1 (rebuild), --print-path (the directory). Timings go to
# $CACHE/timings.log.
#
# Since Prometheus 3.0 the Go module is versioned v0.<major><minor>.<patch>: module v0.316.0 is
# release 3.16.0 (the module's VERSION file says which; it is read after `go get` and put into the
# binaries). Both programs are built in one throw-away wrapper module (go_wrapper_build, docs/proof/tools.md),
# against the dependency versions Prometheus's own go.mod lists. Without the `builtinassets` build tag
# the web UI's assets are not embedded: the HTTP API, all the tier uses, works without them. The
# release build (promu) sets the version fields of github.com/prometheus/common/version by ldflags;
# without them `prometheus --version` prints an empty version.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/common.sh
source "$HERE/../lib/common.sh"

PROMETHEUS_MODULE=github.com/prometheus/prometheus
OUT=$PROMETHEUS_DIR

for a in "$@"; do
  case "$a" in
    --force) export MESH_RL_REBUILD=1 ;;
    --print-path) echo "$OUT"; exit 0 ;;
    *) echo "usage: $0 [--force] [--print-path]" >&2; exit 2 ;;
  esac
done

reports_pin() { [[ -x "$1" ]] && "$1" --version 2>/dev/null | grep -qF "(branch: module-$PROMETHEUS_VERSION,"; }
if [[ "${MESH_RL_REBUILD:-}" != "1" ]] && reports_pin "$OUT/prometheus" && reports_pin "$OUT/promtool"; then
  timing_record "prometheus-$PROMETHEUS_VERSION" warm 0
  log "prometheus $PROMETHEUS_VERSION: reusing $OUT"
  exit 0
fi

need_cmd go
# Ask the proxy first, so a refusal ends with a message that says what happened.
probe=$(mktemp -d)
if ! (cd "$probe" && go mod init local/probe >/dev/null 2>&1 && go list -m "$PROMETHEUS_MODULE@$PROMETHEUS_VERSION" >/dev/null); then
  rm -rf "$probe"
  die "the Go module proxy did not serve $PROMETHEUS_MODULE@$PROMETHEUS_VERSION (see go's message above; 'This module version is not available' is a final answer for that version)"
fi
rm -rf "$probe"

t0=$(date +%s)
export GWB_WRAPPER="prometheus-$PROMETHEUS_VERSION"
# Without its service-discovery plugins (the module's own build tag): the tests scrape static
# targets on loopback, and the plugins (AWS, Azure, GCE, OCI, ... SDKs) are about 59 % of the Go
# source the two binaries compile (135 MB of it with them, 56 MB without). cmd/prometheus imports
# Kubernetes discovery directly, so kubernetes_sd_configs still parse.
export GWB_TAGS=remove_all_sd
export MESH_RL_REBUILD=1   # binaries present but reporting another version are rebuilt
wdir="$CACHE/wrappers/$GWB_WRAPPER"
mkdir -p "$wdir" "$OUT"
if [[ ! -f "$wdir/go.mod" ]]; then (cd "$wdir" && go mod init local/prometheus >/dev/null 2>&1); fi
(cd "$wdir" && go get "$PROMETHEUS_MODULE/cmd/prometheus@$PROMETHEUS_VERSION" "$PROMETHEUS_MODULE/cmd/promtool@$PROMETHEUS_VERSION")
release=$(cat "$(cd "$wdir" && go list -m -f '{{.Dir}}' "$PROMETHEUS_MODULE")/VERSION")
v=github.com/prometheus/common/version
ldflags="-X $v.Version=$release -X $v.Revision=module-$PROMETHEUS_VERSION -X $v.Branch=module-$PROMETHEUS_VERSION -X $v.BuildUser=mesh-ratelimit -X $v.BuildDate=module-proxy"
go_wrapper_build prometheus "$PROMETHEUS_VERSION" prometheus "$PROMETHEUS_MODULE/cmd/prometheus" "$ldflags"
go_wrapper_build prometheus "$PROMETHEUS_VERSION" promtool "$PROMETHEUS_MODULE/cmd/promtool" "$ldflags"
timing_record "prometheus+promtool-$PROMETHEUS_VERSION" total $(( $(date +%s) - t0 ))
"$OUT/prometheus" --version | head -1
"$OUT/promtool" --version | head -1
