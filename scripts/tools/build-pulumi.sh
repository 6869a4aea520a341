#!/usr/bin/env bash
# Builds the Pulumi CLI and, beside it, the Node.js language host (pulumi-language-nodejs) into
# $CACHE/tools/pulumi-<version>/. Both share one wrapper module pinned to pkg/sdk <version>.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
pver=$PULUMI_VERSION
ldflags="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$pver"

# pkg/v3's go.mod replaces atotto/clipboard with a fork; a wrapper must repeat that replace.
wrapper_prepare() {
  go mod edit -replace github.com/atotto/clipboard=github.com/tgummerer/clipboard@v0.0.0-20241001131231-d02d263e614e
}
GWB_WRAPPER="pulumi-$pver" go_wrapper_build pulumi "$pver" pulumi \
  github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$ldflags" \
  "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@$pver" "github.com/pulumi/pulumi/sdk/v3@$pver"

# Language host: module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 has no
# tags; the commit of pkg/v3.248.0 is the pinned one. Built against pkg/sdk $pver (not the older
# pkg its go.mod names).
lh_mod=github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3
lh_spec="$lh_mod@$PULUMI_LANGHOST_COMMIT" lh_src=""
if [[ ! -x "$PULUMI_BIN_DIR/pulumi-language-nodejs" || "${MESH_RL_REBUILD:-}" == "1" ]] &&
   ! go_proxy_has "$lh_spec"; then
  warn "module proxy does not serve $lh_spec (403); using the git snapshot of pulumi/pulumi"
  lh_src="$CACHE/src/pulumi-language-nodejs-$PULUMI_LANGHOST_COMMIT"
  git_snapshot pulumi+pulumi "$PULUMI_LANGHOST_COMMIT" "$lh_src" sdk/nodejs/cmd/pulumi-language-nodejs
  lh_spec="$lh_mod@v3.0.0"   # any version: the replace below points at the snapshot directory
fi
wrapper_prepare() {
  go mod edit -replace github.com/atotto/clipboard=github.com/tgummerer/clipboard@v0.0.0-20241001131231-d02d263e614e
  if [[ -n "$lh_src" ]]; then
    go mod edit -replace "$lh_mod=$lh_src/sdk/nodejs/cmd/pulumi-language-nodejs" -require "$lh_spec"
  fi
}
GWB_OUT="$PULUMI_BIN_DIR" GWB_WRAPPER="pulumi-$pver" go_wrapper_build pulumi-language-nodejs "$pver" pulumi-language-nodejs \
  "$lh_mod" "$ldflags" \
  "$lh_spec" "github.com/pulumi/pulumi/pkg/v3@$pver" "github.com/pulumi/pulumi/sdk/v3@$pver"

# Dynamic providers (the seed profile's mesh ConfigMap edit) run through the plugin
# `pulumi-resource-pulumi-nodejs`, which Pulumi's release archives ship as a small shell script
# beside the CLI (it is not a Go program). Write the equivalent here.
dyn="$PULUMI_BIN_DIR/pulumi-resource-pulumi-nodejs"
if [[ ! -x "$dyn" ]]; then
  cat > "$dyn" <<'SH'
#!/bin/sh
# Pulumi dynamic-provider host for Node.js programs: run from the program's directory.
exec node ./node_modules/@pulumi/pulumi/cmd/dynamic-provider "$@"
SH
  chmod +x "$dyn"
  log "wrote $dyn"
fi
