#!/usr/bin/env bash
# Builds the Pulumi Random provider (pulumi-resource-random) matching @pulumi/random into
# $CACHE/tools/pulumi-random-<version>/. The provider module replaces the shim module
# (github.com/terraform-providers/terraform-provider-random/shim => ./shim) and
# terraform-plugin-sdk/v2 with Pulumi's fork; building inside the provider module keeps both.
# The version ldflag is mandatory (the provider panics on an empty version).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
ver=$PULUMI_RANDOM_VERSION commit=$PULUMI_RANDOM_COMMIT
mod=github.com/pulumi/pulumi-random/provider/v4
src="$CACHE/src/pulumi-random-$commit"
out=$(tool_dir pulumi-random "$ver")
if [[ -x "$out/pulumi-resource-random" && "${MESH_RL_REBUILD:-}" != "1" ]]; then
  log "pulumi-random $ver: reusing $out/pulumi-resource-random"; exit 0
fi
need_cmd go
# Source: the module proxy answers 403 ("This module version is not available") for every
# version of $mod, so the pinned commit is taken from a git snapshot of pulumi/pulumi-random
# (see MESH_RL_GIT_MIRRORS in scripts/lib/common.sh); the module's own go.mod, replaces and
# go.sum then apply, and all dependencies still come from the module proxy.
if [[ ! -f "$src/.extracted" ]] && go_proxy_has "$mod@$commit"; then
  warn "the module proxy now serves $mod@$commit; this script still builds from the git snapshot"
fi
git_snapshot pulumi+pulumi-random "$commit" "$src" provider
# Two of its transitive requirements (imported by pulumi-terraform-bridge's tfgen converter, which
# the provider binary links) are refused by the module proxy ("403 This module version is not
# available") at every version: github.com/pulumi/pulumi-yaml@v1.37.1-0.20260717123218-294c561f47f4
# and github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3@v3.107.4-0.20260720135410-6a2eb2585b50.
# Take exactly those commits from git snapshots and point replaces at them (cache copy only).
yaml_commit=294c561f47f4 dotnet_commit=6a2eb2585b50
git_snapshot pulumi+pulumi-yaml "$yaml_commit" "$CACHE/src/pulumi-yaml-$yaml_commit"
git_snapshot pulumi+pulumi-dotnet "$dotnet_commit" "$CACHE/src/pulumi-dotnet-$dotnet_commit" pulumi-language-dotnet
if [[ ! -f "$src/provider/go.mod.orig" ]]; then
  cp "$src/provider/go.mod" "$src/provider/go.mod.orig"; cp "$src/provider/go.sum" "$src/provider/go.sum.orig"
  (cd "$src/provider" && go mod edit \
    -replace "github.com/pulumi/pulumi-yaml=$CACHE/src/pulumi-yaml-$yaml_commit" \
    -replace "github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3=$CACHE/src/pulumi-dotnet-$dotnet_commit/pulumi-language-dotnet")
fi
# Generate step (writes schema-embed.json etc. in the cache copy); timed as <tool>-generate.
if [[ ! -f "$src/provider/cmd/pulumi-resource-random/schema-embed.json" ]]; then
  t0=$(date +%s)
  (cd "$src/provider/cmd/pulumi-resource-random"; [[ -f schema-embed.json ]] || VERSION=$ver go run -mod=mod ./generate.go)
  timing_record pulumi-random-generate cold $(( $(date +%s) - t0 ))
  log "pulumi-random: generate step took $(( $(date +%s) - t0 ))s"
fi
go_dir_build pulumi-random "$ver" pulumi-resource-random "$src/provider" \
  ./cmd/pulumi-resource-random "-X $mod/pkg/version.Version=$ver"
