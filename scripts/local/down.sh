#!/usr/bin/env bash
# `npm run local:down`: `pulumi destroy` of the stack `npm run local:up` made, then stops the local
# cluster. Removes only what local:up wrote ($CACHE/local and the cluster's folder).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
L=$CACHE/local
P=$L/project
export KUBECONFIG=$CLUSTER_DIR/kubeconfig
export PULUMI_HOME=$CACHE/pulumi-home PULUMI_BACKEND_URL=file://$L/state PULUMI_CONFIG_PASSPHRASE_FILE=$L/passphrase
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true PULUMI_SKIP_CONFIRMATIONS=true
export PATH=$PULUMI_BIN_DIR:$PATH
if [[ -d "$P" ]] && (cd "$P" && pulumi stack select local >/dev/null 2>&1); then
  log "local: pulumi destroy (stack local)"
  (cd "$P" && pulumi destroy --yes --stack local && pulumi stack rm --yes local)
fi
bash "$REPO_ROOT/scripts/cluster/down.sh"
rm -rf "$L"
log "local: destroyed the stack, stopped the cluster, removed $L"
