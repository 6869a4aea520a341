#!/usr/bin/env bash
# `npm run local:up`: the real `pulumi up` of the dev stack on a local cluster, on any machine.
#   1. builds what is missing (etcd, kube-apiserver + controller-manager + scheduler, kwok, the Pulumi
#      CLI, the Pulumi Kubernetes provider) into the tool cache, from the Go module proxy;
#   2. starts a local cluster (scripts/cluster/up.sh: fake nodes, Istio's CRDs and mesh ConfigMap);
#   3. copies the project's tracked files to $CACHE/local/project (nothing is written in your work
#      tree) and runs `pulumi up` of stack `local`, config = Pulumi.dev.yaml, through the in-process
#      runtime (scripts/pulumi/run-in-process.ts), with a local state backend in $CACHE/local/state;
#   4. prints what it created and how to take it all down (`npm run local:down`).
# Pulumi's Random provider is not served by the Go module proxy: unless its binary is in the cache,
# the in-cluster Redis gets its password from a Secret this script creates (redisPasswordSecret).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
L=$CACHE/local
P=$L/project
mkdir -p "$L/state"
chmod 700 "$L"

log "local: building what is missing (reused when present)"
bash "$REPO_ROOT/scripts/tools/build-all.sh" debian etcd kube-apiserver kwok pulumi pulumi-kubernetes

log "local: starting the local cluster"
MESH_RL_FAKE_NODES=1 bash "$REPO_ROOT/scripts/cluster/up.sh" >/dev/null
export KUBECONFIG=$CLUSTER_DIR/kubeconfig

log "local: the project's tracked files -> $P"
rm -rf "$P" && mkdir -p "$P"
(cd "$REPO_ROOT" && git ls-files -z | xargs -0 cp --parents -t "$P")
ln -s "$REPO_ROOT/node_modules" "$P/node_modules"

export PULUMI_HOME=$CACHE/pulumi-home PULUMI_BACKEND_URL=file://$L/state
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true PULUMI_SKIP_CONFIRMATIONS=true
# The passphrase that encrypts the stack's secrets: made once, kept beside the state, readable by you only.
[[ -s "$L/passphrase" ]] || (umask 077 && openssl rand -hex 24 > "$L/passphrase")
export PULUMI_CONFIG_PASSPHRASE_FILE=$L/passphrase
export PATH=$PULUMI_BIN_DIR:$PATH
pulumi plugin install resource kubernetes "$PULUMI_K8S_VERSION" --file "$PULUMI_K8S_BIN" >/dev/null
inproc() { (cd "$P" && node --import "file://$REPO_ROOT/node_modules/tsx/dist/loader.mjs" "$REPO_ROOT/scripts/pulumi/run-in-process.ts" "$@"); }

cp "$REPO_ROOT/Pulumi.dev.yaml" "$P/Pulumi.local.yaml"
[[ -f "$L/Pulumi.local.yaml" ]] && cp "$L/Pulumi.local.yaml" "$P/Pulumi.local.yaml" # the salt of an existing stack
(cd "$P" && pulumi stack select local 2>/dev/null || pulumi stack init local >/dev/null)
# The stack's own random id (mesh-ratelimit:stackId, docs/operations.md "The stack's identity"): made
# once, kept in $L/Pulumi.local.yaml with the stack; someone else's stack `local` gets another one.
if ! (cd "$P" && pulumi config get stackId --stack local >/dev/null 2>&1); then
  (cd "$P" && pulumi config set stackId "$(openssl rand -hex 8)" --stack local)
fi
if [[ -x "$PULUMI_RANDOM_BIN" ]]; then
  pulumi plugin install resource random "$PULUMI_RANDOM_VERSION" --file "$PULUMI_RANDOM_BIN" >/dev/null
else
  if ! kubectl get secret local-redis-auth -n default >/dev/null 2>&1; then
    kubectl create secret generic local-redis-auth -n default --from-literal=password="$(openssl rand -hex 16)" >/dev/null
  fi
  (cd "$P" && pulumi config set --plaintext redisPasswordSecret local-redis-auth)
  log "local: Pulumi's Random provider is not in the cache: the in-cluster Redis uses Secret default/local-redis-auth"
fi
cp "$P/Pulumi.local.yaml" "$L/Pulumi.local.yaml"

log "local: pulumi up (stack local)"
inproc up --yes --stack local
echo
echo "Created (from the stack's state):"
(cd "$P" && pulumi stack export --stack local) |
  jq -r '.deployment.resources[] | select(.type | startswith("kubernetes:")) | "  \(.type | sub("^kubernetes:"; ""))  \(.id)"'
cat <<MSG

The cluster:   export KUBECONFIG=$KUBECONFIG; kubectl get deploy,svc,envoyfilter -A
Pulumi:        cd $P && PULUMI_BACKEND_URL=$PULUMI_BACKEND_URL PULUMI_CONFIG_PASSPHRASE_FILE=$PULUMI_CONFIG_PASSPHRASE_FILE $PULUMI_BIN_DIR/pulumi stack
Take it down:  npm run local:down   (pulumi destroy of stack local, then the cluster stops)
MSG
