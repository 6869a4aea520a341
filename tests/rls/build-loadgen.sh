#!/usr/bin/env bash
# Build the project's own Go load generator (tests/rls/loadgen) into $CACHE/tools/rls-loadgen/.
# Idempotent: reuses the binary while the module's sources (go.mod, go.sum, *.go) are unchanged
# (their hash is kept in $CACHE/tools/rls-loadgen/SOURCE_HASH); MESH_RL_REBUILD=1 forces a build.
# Dependencies come from the Go module proxy (versions pinned in go.sum; nothing vendored); they
# are the versions envoyproxy/ratelimit itself builds with, so the Go build cache is shared.
# A build is "cold" when this output directory had no binary yet, "warm" otherwise.
# Timing: $CACHE/timings.log. Prints the binary's path on stdout.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$HERE/../../scripts/lib/common.sh"
SRC="$HERE/loadgen"
OUT="$CACHE/tools/rls-loadgen"
BIN="$OUT/rls-loadgen"
need_cmd go
hash=$(cd "$SRC" && cat go.mod go.sum $(ls ./*.go | sort) | sha256sum | cut -c1-16)
if [[ -x "$BIN" && "$(cat "$OUT/SOURCE_HASH" 2>/dev/null)" == "$hash" && "${MESH_RL_REBUILD:-}" != "1" ]]; then
  timing_record rls-loadgen warm 0
  log "rls-loadgen: reusing $BIN ($hash)"
  echo "$BIN"; exit 0
fi
kind=warm
[[ -x "$BIN" ]] || kind=cold
mkdir -p "$OUT"
t0=$(date +%s)
log "rls-loadgen: go build ($kind)"
# -mod=readonly: the committed go.mod/go.sum must be complete; the build never writes to the repo.
(cd "$SRC" && go build -mod=readonly -trimpath -ldflags "-s -w" -o "$BIN.tmp" .)
mv "$BIN.tmp" "$BIN"
echo "$hash" > "$OUT/SOURCE_HASH"
secs=$(( $(date +%s) - t0 ))
timing_record rls-loadgen "$kind" "$secs"
log "rls-loadgen: built $BIN in ${secs}s ($kind)"
echo "$BIN"
