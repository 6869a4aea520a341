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
reuse_or_blocked pulumi-random "$PULUMI_RANDOM_VERSION" "$PULUMI_RANDOM_BIN" "github.com/pulumi/pulumi-random/provider/v4@$PULUMI_RANDOM_COMMIT" "shim module, generate step, mandatory version ldflag" || exit $?
