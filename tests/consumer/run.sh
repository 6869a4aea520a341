#!/usr/bin/env bash
# Consumer tier (npm run test:consumer): builds the compiled package, packs it, installs the tarball
# into an empty temporary program with npm (the registry, or npm's cache) and runs a TypeScript and a
# JavaScript consumer under Pulumi's mocks. Prints a final `consumer: N passed, M failed` line.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=../../scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
cd "$ROOT"
rc=0
run_mocha_tier consumer tests/consumer/.mocharc.json "$@" || rc=$?
exit "$rc"
