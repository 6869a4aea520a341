#!/usr/bin/env bash
# Builds the Pulumi Kubernetes resource provider (pulumi-resource-kubernetes) from the Go module
# proxy into $CACHE/tools/pulumi-kubernetes-<version>/.
#
# The proxy lists no version of github.com/pulumi/pulumi-kubernetes/provider/v4 and refuses its
# tags, but it serves one pseudo-version: the commit that the upstream tag v4.25.0 points at
# ($PULUMI_K8S_PSEUDO in scripts/lib/common.sh). That is the provider of the 4.25.0 release, so it is
# built with version 4.25.0 and package.json pins the npm SDK @pulumi/kubernetes at the same release.
#
# A wrapper module does not work here: the provider's own go.mod pins the versions it was released
# with, and `go get` of it into a wrapper would re-resolve them. So the module's folder is copied
# somewhere writable and built as its own main module:
#   1. `go mod download` the pseudo-version, copy its folder (the module cache is read-only);
#   2. drop the `replace .../sdk/v4 => ../sdk` (that folder is not part of the module's zip; the
#      required sdk/v4 version is served by the proxy);
#   3. run the module's own generate step, which writes the two files main.go embeds
#      (schema-embed.json, terraform-mapping-embed.json) from the zip's schema.json and
#      terraform-mapping.json;
#   4. go build with the version ldflag (without it the provider reports an empty version).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
need_cmd go
ver=$PULUMI_K8S_VERSION
mod=github.com/pulumi/pulumi-kubernetes/provider/v4
out=$(dirname "$PULUMI_K8S_BIN")
if [[ -x "$PULUMI_K8S_BIN" && "${MESH_RL_REBUILD:-}" != 1 ]]; then
  log "pulumi-kubernetes $ver: reusing $PULUMI_K8S_BIN"; exit 0
fi
src="$CACHE/wrappers/pulumi-kubernetes-$ver"
kind=warm; [[ -f "$src/.built" ]] || kind=cold
t0=$(date +%s)
if [[ ! -f "$src/go.mod" ]]; then
  log "pulumi-kubernetes $ver: go mod download $mod@$PULUMI_K8S_PSEUDO"
  dir=$(cd "$(mktemp -d)" && go mod download -json "$mod@$PULUMI_K8S_PSEUDO" | jq -r '.Dir // empty') ||
    die "the Go module proxy does not serve $mod@$PULUMI_K8S_PSEUDO"
  [[ -n "$dir" && -d "$dir" ]] || die "go mod download gave no folder for $mod@$PULUMI_K8S_PSEUDO"
  rm -rf "$src" && mkdir -p "$(dirname "$src")"
  cp -r "$dir" "$src" && chmod -R u+w "$src"
fi
(
  cd "$src"
  export GOFLAGS="-mod=mod -buildvcs=false"
  go mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4
  cd cmd/pulumi-resource-kubernetes
  log "pulumi-kubernetes $ver: generate step (schema-embed.json, terraform-mapping-embed.json)"
  VERSION=$ver go run generate.go
  log "pulumi-kubernetes $ver: go build ($kind)"
  mkdir -p "$out"
  go build -trimpath -ldflags "-s -w -X $mod/pkg/version.Version=$ver" -o "$out/pulumi-resource-kubernetes.tmp" .
  mv "$out/pulumi-resource-kubernetes.tmp" "$PULUMI_K8S_BIN"
  touch "$src/.built"
)
secs=$(( $(date +%s) - t0 ))
timing_record pulumi-kubernetes "$kind" "$secs"
log "pulumi-kubernetes $ver: built $PULUMI_K8S_BIN in ${secs}s ($kind)"
