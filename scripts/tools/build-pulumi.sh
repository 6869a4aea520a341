#!/usr/bin/env bash
# Builds the Pulumi CLI into $CACHE/tools/pulumi-<version>/ from the Go module proxy, writes the
# dynamic-provider launcher beside it. No Node.js language host is needed: programs run in-process
# (scripts/pulumi/run-in-process.ts); one found beside the CLI is used by `pulumi package add` only.
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

# Language host: module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 (no tags;
# pkg/v3.248.0's commit is dc7edd58bc13). The Go module proxy refuses every version of it (403). It
# is not needed to run a program (see above); only `pulumi package add` of plugin/ needs it, and the
# e2e tier reports that part BLOCKED. A binary already beside the CLI (placed by hand) is used.
lh_spec=github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3@$PULUMI_LANGHOST_COMMIT
if [[ -x "$PULUMI_BIN_DIR/pulumi-language-nodejs" ]]; then
  log "pulumi-language-nodejs: reusing $PULUMI_BIN_DIR/pulumi-language-nodejs (placed by hand; see this script)"
elif go_proxy_has "$lh_spec"; then
  GWB_OUT="$PULUMI_BIN_DIR" GWB_WRAPPER="pulumi-$pver" go_wrapper_build pulumi-language-nodejs "$pver" pulumi-language-nodejs \
    "${lh_spec%@*}" "$ldflags" "$lh_spec" "github.com/pulumi/pulumi/pkg/v3@$pver" "github.com/pulumi/pulumi/sdk/v3@$pver"
else
  log "pulumi-language-nodejs: not served by the Go module proxy (403); programs run in-process, and the e2e tier reports 'pulumi package add' BLOCKED"
fi
