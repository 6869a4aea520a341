#!/usr/bin/env bash
# The Pulumi Random resource provider (pulumi-resource-random) matching the npm SDK @pulumi/random,
# expected at $CACHE/tools/pulumi-random-<version>/.
#
# BLOCKED on these machines: the Go module proxy answers "403 This module version is not available"
# for every version of github.com/pulumi/pulumi-random/provider/v4 (and for its indirect
# dependencies pulumi-yaml@294c561f47f4 and pulumi-language-dotnet@6a2eb2585b50). The repo may not
# carry a recipe that builds a fetched copy of the source. A binary already present in the cache
# (placed there by hand) is reused; otherwise this script exits 3 (blocked).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
ver=$PULUMI_RANDOM_VERSION
mod=github.com/pulumi/pulumi-random/provider/v4@$PULUMI_RANDOM_COMMIT
out=$(tool_dir pulumi-random "$ver")
if [[ -x "$out/pulumi-resource-random" ]]; then
  log "pulumi-random $ver: reusing $out/pulumi-resource-random (placed by hand; see the header of this script)"
  exit 0
fi
if command -v go >/dev/null && go_proxy_has "$mod"; then
  die "the Go module proxy now serves $mod: add the wrapper build (shim module, generate step, mandatory version ldflag) to this script"
fi
blocked "pulumi-random $ver" "the Go module proxy refuses every version of github.com/pulumi/pulumi-random/provider/v4 (403); put a pulumi-resource-random $ver binary at $out/ to run the e2e tier" || exit $?
