#!/usr/bin/env bash
# Builds the Pulumi Kubernetes resource provider (pulumi-resource-kubernetes) matching the npm SDK
# @pulumi/kubernetes into $CACHE/tools/pulumi-kubernetes-<version>/.
# The provider's main embeds schema-embed.json and terraform-mapping-embed.json, which its
# generate.go writes (they are not in the sources): we run that generate step in the cache copy.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
ver=$PULUMI_K8S_VERSION commit=$PULUMI_K8S_COMMIT
mod=github.com/pulumi/pulumi-kubernetes/provider/v4
src="$CACHE/src/pulumi-kubernetes-$commit"
out=$(tool_dir pulumi-kubernetes "$ver")
if [[ -x "$out/pulumi-resource-kubernetes" && "${MESH_RL_REBUILD:-}" != "1" ]]; then
  log "pulumi-kubernetes $ver: reusing $out/pulumi-resource-kubernetes"; exit 0
fi
need_cmd go
# Source: the module proxy answers 403 ("This module version is not available") for every
# version of $mod, so the pinned commit is taken from a git snapshot of pulumi/pulumi-kubernetes
# (see MESH_RL_GIT_MIRRORS in scripts/lib/common.sh); the module's own go.mod, replaces and
# go.sum then apply, and all dependencies still come from the module proxy.
if [[ ! -f "$src/.extracted" ]] && go_proxy_has "$mod@$commit"; then
  warn "the module proxy now serves $mod@$commit; this script still builds from the git snapshot"
fi
git_snapshot pulumi+pulumi-kubernetes "$commit" "$src" provider
# provider/go.mod replaces sdk/v4 => ../sdk. The snapshot lacks some of sdk/'s large generated
# files, so ../sdk is filled with the published module sdk/v4@v<version> (tag sdk/v4.32.0 is the
# commit right after the provider's v4.32.0 tag, which only bumps versions).
if [[ ! -f "$src/sdk/go.mod" ]]; then
  d=$(cd "$(mktemp -d)" && go mod download -json "github.com/pulumi/pulumi-kubernetes/sdk/v4@v$ver" | jq -r .Dir)
  [[ -d "$d" ]] || die "cannot download github.com/pulumi/pulumi-kubernetes/sdk/v4@v$ver"
  mkdir -p "$src/sdk"; cp -r "$d/." "$src/sdk/"; chmod -R u+w "$src/sdk"
fi
# The module proxy refuses two of the provider's requirements ("403 This module version is not
# available"): github.com/pulumi/pulumi/pkg/v3@v3.243.0 and
# github.com/fluxcd/pkg/ssa@v0.71.1-0.20260424094917-4f94dc680419. Raising them to served versions
# does not compile (pkg v3.248.0 changed codegen/schema types), so exactly those commits are taken
# from git snapshots (pulumi/pulumi tag pkg/v3.243.0, fluxcd/pkg 4f94dc680419) and `replace`d in
# the cache copy's go.mod. go.mod.orig keeps the authors' file.
pkg_commit=917e3ae00a38   # tag pkg/v3.243.0
ssa_commit=4f94dc680419
git_snapshot pulumi+pulumi "$pkg_commit" "$CACHE/src/pulumi-pkg-v3.243.0" pkg
git_snapshot fluxcd+pkg "$ssa_commit" "$CACHE/src/fluxcd-pkg-$ssa_commit" ssa
if [[ ! -f "$src/provider/go.mod.orig" ]]; then
  cp "$src/provider/go.mod" "$src/provider/go.mod.orig"; cp "$src/provider/go.sum" "$src/provider/go.sum.orig"
  (cd "$src/provider" && go mod edit \
    -replace "github.com/pulumi/pulumi/pkg/v3=$CACHE/src/pulumi-pkg-v3.243.0/pkg" \
    -replace "github.com/fluxcd/pkg/ssa=$CACHE/src/fluxcd-pkg-$ssa_commit/ssa")
fi
# schema.json (the package schema, several MB) is one of the blobs a snapshot may lack. The
# provider uses it only to answer GetSchema and to fill inputs when it reads an object from the
# cluster without previous inputs (`pulumi import`); create/update/delete/refresh do not use it.
# When absent, embed a schema with only name and version, and say so loudly.
schema="$src/provider/cmd/pulumi-resource-kubernetes/schema.json"
if [[ ! -f "$schema" ]]; then
  warn "pulumi-kubernetes: schema.json is missing from the source; embedding a name/version-only schema (GetSchema and 'pulumi import' are degraded)"
  printf '{"name":"kubernetes","displayName":"Kubernetes","version":"%s"}\n' "$ver" > "$schema"
  echo "schema.json is a stub written by build-pulumi-kubernetes.sh" > "$src/STUB-SCHEMA"
fi
# Generate step (writes schema-embed.json etc. in the cache copy); timed as <tool>-generate.
if [[ ! -f "$src/provider/cmd/pulumi-resource-kubernetes/schema-embed.json" ]]; then
  t0=$(date +%s)
  (cd "$src/provider/cmd/pulumi-resource-kubernetes"; [[ -f schema-embed.json ]] || VERSION=$ver go run -mod=mod ./generate.go)
  timing_record pulumi-kubernetes-generate cold $(( $(date +%s) - t0 ))
  log "pulumi-kubernetes: generate step took $(( $(date +%s) - t0 ))s"
fi
go_dir_build pulumi-kubernetes "$ver" pulumi-resource-kubernetes "$src/provider" \
  ./cmd/pulumi-resource-kubernetes "-X $mod/pkg/version.Version=$ver"
