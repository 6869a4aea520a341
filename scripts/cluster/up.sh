#!/usr/bin/env bash
# Starts a throw-away Kubernetes control plane on 127.0.0.1 for trying the stack end to end:
# etcd + kube-apiserver (+ kube-controller-manager, kube-scheduler and kwok fake nodes when built,
# so Deployments become Ready without a kubelet), then loads Istio's CRDs, the Gateway API's
# standard CRDs, namespace istio-system and the mesh ConfigMap `istio`. Idempotent: when the
# cluster is already up it only prints the KUBECONFIG line. State lives in $CACHE/cluster
# (MESH_RL_CLUSTER_DIR); `npm run cluster:down` stops it and wipes that directory.
#   MESH_RL_FAKE_NODES=0   start only etcd + kube-apiserver (Deployments then never become Ready:
#                          use the stack's `awaitRollout: false`)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"
need_cmd kubectl; need_cmd openssl
CL=$CLUSTER_DIR
KUBECONFIG_FILE=$CL/kubeconfig
kc() { kubectl --kubeconfig "$KUBECONFIG_FILE" "$@"; }

print_env() {
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
}

if [[ -f "$KUBECONFIG_FILE" ]] && kc get --raw /readyz >/dev/null 2>&1; then
  log "cluster already up ($(cat "$CL/server" 2>/dev/null))"
  print_env; exit 0
fi
if [[ -d "$CL" ]]; then
  log "stale cluster state in $CL: stopping it first"
  bash "$here/down.sh" >&2
fi

# Only the cluster's tools (`npm run tools` builds them too, among the rest).
build_cmd="bash scripts/tools/build-all.sh etcd kube-apiserver kwok"
[[ -x "$ETCD_BIN" ]] || die "etcd not built ($ETCD_BIN): run '$build_cmd'"
[[ -x "$KUBE_BIN_DIR/kube-apiserver" ]] || die "kube-apiserver not built ($KUBE_BIN_DIR): run '$build_cmd'"
fake_nodes=${MESH_RL_FAKE_NODES:-auto}
if [[ $fake_nodes != 0 ]]; then
  if [[ -x "$KUBE_BIN_DIR/kube-controller-manager" && -x "$KUBE_BIN_DIR/kube-scheduler" && -x "$KWOK_DIR/kwok" ]]; then
    fake_nodes=1
  elif [[ $fake_nodes == 1 ]]; then
    die "MESH_RL_FAKE_NODES=1 but kube-controller-manager/kube-scheduler/kwok are not all built: run '$build_cmd'"
  else
    warn "kube-controller-manager/kube-scheduler/kwok not all built: control plane only (Deployments will not become Ready); build them with: $build_cmd"
    fake_nodes=0
  fi
fi

t0=$(date +%s)
mkdir -p "$CL/pki" "$CL/logs" "$CL/pids" "$CL/etcd"
pki=$CL/pki

# ---- certificates (openssl): a CA, the API server's serving cert, an admin client cert, SA keys
ossl() { openssl "$@" 2>>"$CL/logs/openssl.log"; }
ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=mesh-rl-local-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
cat > "$pki/apiserver.ext" <<EXT
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth
keyUsage=digitalSignature,keyEncipherment
EXT
ossl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr"
ossl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
  -days 2 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt"
printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' > "$pki/client.ext"
ossl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=mesh-rl-admin" -keyout "$pki/admin.key" -out "$pki/admin.csr"
ossl x509 -req -in "$pki/admin.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
  -days 2 -extfile "$pki/client.ext" -out "$pki/admin.crt"
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
chmod 600 "$pki"/*.key

# ---- ports (random free ports on loopback)
etcd_port=$(free_port); etcd_peer=$(free_port); api_port=$(free_port)
server="https://127.0.0.1:$api_port"
echo "$server" > "$CL/server"

start() { # start <name> <cmd...>: background process, own session, log + pid file
  local name=$1; shift
  setsid "$@" >"$CL/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$CL/pids/$name.pid"
}

# ---- etcd (plain HTTP on loopback only; fsync off: throw-away data)
start etcd "$ETCD_BIN" --name local --data-dir "$CL/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-cluster "local=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --log-level warn
wait_for 30 "etcd" curl -sf "http://127.0.0.1:$etcd_port/health" || { tail -20 "$CL/logs/etcd.log" >&2; die "etcd did not start"; }

# ---- kube-apiserver
# --endpoint-reconciler-type=none: the `kubernetes` Endpoints object cannot hold a loopback address.
# The service CIDR only hands out virtual addresses stored in the API; no proxy routes them.
start kube-apiserver "$KUBE_BIN_DIR/kube-apiserver" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
  --authorization-mode=Node,RBAC --allow-privileged=true --profiling=false \
  --cert-dir="$CL/pki/apiserver-generated"

kubectl config --kubeconfig "$KUBECONFIG_FILE" set-cluster mesh-rl-local --server "$server" \
  --certificate-authority "$pki/ca.crt" --embed-certs >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_FILE" set-credentials mesh-rl-admin \
  --client-certificate "$pki/admin.crt" --client-key "$pki/admin.key" --embed-certs >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_FILE" set-context mesh-rl-local --cluster mesh-rl-local \
  --user mesh-rl-admin --namespace default >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_FILE" use-context mesh-rl-local >/dev/null
chmod 600 "$KUBECONFIG_FILE"
wait_for 90 "kube-apiserver /readyz" kc get --raw /readyz ||
  { tail -30 "$CL/logs/kube-apiserver.log" >&2; die "kube-apiserver did not become ready"; }
wait_for 30 "namespace default" kc get namespace default || die "namespace default missing"
log "control plane ready at $server ($(( $(date +%s) - t0 ))s)"

# ---- controller-manager, scheduler, kwok (fake node): Deployments become Ready without kubelets
if [[ $fake_nodes == 1 ]]; then
  start kube-controller-manager "$KUBE_BIN_DIR/kube-controller-manager" \
    --kubeconfig="$KUBECONFIG_FILE" --authentication-kubeconfig="$KUBECONFIG_FILE" \
    --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$(free_port)" --leader-elect=false \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --use-service-account-credentials=false --controllers='*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route'
  start kube-scheduler "$KUBE_BIN_DIR/kube-scheduler" \
    --kubeconfig="$KUBECONFIG_FILE" --authentication-kubeconfig="$KUBECONFIG_FILE" \
    --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$(free_port)" --leader-elect=false
  # kwok's own stages: node initialise + lease heartbeat, pod ready/complete/delete ("fast" set).
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    cat "$KWOK_DIR/stage/$f"; echo "---"
  done > "$CL/kwok-stages.yaml"
  start kwok "$KWOK_DIR/kwok" --kubeconfig="$KUBECONFIG_FILE" --config="$CL/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 --server-address="127.0.0.1:$(free_port)" --node-lease-duration-seconds=40
  kc apply -f - >/dev/null <<'NODE'
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 100Gi}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 100Gi}
NODE
  wait_for 60 "fake node Ready" bash -c "kubectl --kubeconfig '$KUBECONFIG_FILE' get node kwok-node-0 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" ||
    { tail -20 "$CL/logs/kwok.log" >&2; die "kwok did not make the fake node Ready"; }
  wait_for 60 "default service account" kc get serviceaccount default -n default ||
    { tail -20 "$CL/logs/kube-controller-manager.log" >&2; die "controller-manager did not create service accounts"; }
  log "fake node kwok-node-0 Ready (kwok + controller-manager + scheduler)"
fi

# ---- Istio: CRDs from the istio.io/istio module (crd-all.gen.yaml at $ISTIO_MODVER) + base objects
crd_file=$CACHE/src/istio-crds-$ISTIO_MODVER/crd-all.gen.yaml
if [[ ! -f "$crd_file" ]]; then
  gm=$(cd "$(mktemp -d)" && go mod download -json "istio.io/istio@$ISTIO_MODVER" | jq -r '.Dir // empty') ||
    die "cannot download istio.io/istio@$ISTIO_MODVER from the Go module proxy (Istio's CRDs)"
  [[ -f "$gm/manifests/charts/base/files/crd-all.gen.yaml" ]] || die "istio.io/istio@$ISTIO_MODVER has no manifests/charts/base/files/crd-all.gen.yaml"
  mkdir -p "$(dirname "$crd_file")"; cp "$gm/manifests/charts/base/files/crd-all.gen.yaml" "$crd_file"
fi
kc apply --server-side --field-manager=istio-install -f "$crd_file" >/dev/null
# ---- Gateway API: the standard channel's CRDs (Gateway, GatewayClass, HTTPRoute, ...; the ambient
# stack's ingress is a Gateway) from sigs.k8s.io/gateway-api at the version istio.io/istio@$ISTIO_MODVER
# requires in its go.mod, so the two agree. The module cache first (go mod download reuses it).
gw_crds=$CACHE/src/gateway-api-crds-$ISTIO_MODVER/standard.yaml
if [[ ! -f "$gw_crds" ]]; then
  tmp_mod=$(mktemp -d)
  gm=$(cd "$tmp_mod" && go mod download -json "istio.io/istio@$ISTIO_MODVER" | jq -r '.Dir // empty') ||
    die "cannot download istio.io/istio@$ISTIO_MODVER from the Go module proxy (it names the Gateway API version)"
  gw_ver=$(awk '$1 == "sigs.k8s.io/gateway-api" {print $2; exit}' "$gm/go.mod")
  [[ -n "$gw_ver" ]] || die "istio.io/istio@$ISTIO_MODVER's go.mod names no sigs.k8s.io/gateway-api version"
  gwm=$(cd "$tmp_mod" && go mod download -json "sigs.k8s.io/gateway-api@$gw_ver" | jq -r '.Dir // empty') ||
    die "cannot download sigs.k8s.io/gateway-api@$gw_ver from the Go module proxy (the Gateway API CRDs)"
  rm -rf "$tmp_mod"
  shopt -s nullglob
  gw_files=("$gwm"/config/crd/standard/gateway.networking.k8s.io_*.yaml)
  shopt -u nullglob
  ((${#gw_files[@]})) || die "sigs.k8s.io/gateway-api@$gw_ver has no config/crd/standard/gateway.networking.k8s.io_*.yaml"
  mkdir -p "$(dirname "$gw_crds")"
  # The CRDs only: the channel's upgrade guard (a ValidatingAdmissionPolicy, _vap_) is not one.
  for f in "${gw_files[@]}"; do [[ $f == *_vap_* ]] && continue; cat "$f"; printf '\n---\n'; done > "$gw_crds.tmp"
  mv "$gw_crds.tmp" "$gw_crds"
  echo "$gw_ver" > "$(dirname "$gw_crds")/version"
fi
kc apply --server-side --field-manager=gateway-api-install -f "$gw_crds" >/dev/null
kc wait --for=condition=Established --timeout=60s crd --all >/dev/null
kc apply --server-side --field-manager=istio-install -f "$here/istio-install.yaml" >/dev/null
log "Istio CRDs ($(grep -c '^kind: CustomResourceDefinition' "$crd_file")), Gateway API CRDs ($(grep -c '^kind: CustomResourceDefinition' "$gw_crds"), sigs.k8s.io/gateway-api $(cat "$(dirname "$gw_crds")/version")), namespace istio-system and ConfigMap istio loaded"
log "cluster up in $(( $(date +%s) - t0 ))s; stop and wipe with: npm run cluster:down"
print_env
