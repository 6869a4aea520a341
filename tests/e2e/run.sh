#!/usr/bin/env bash
# End-to-end tier: the real Pulumi engine (the CLI 3.248.0 and the Kubernetes provider 4.25.0, built
# from the Go module proxy by scripts/tools: the low end of the package's SDK peer ranges; the newest
# SDKs are proven by the consumer tier under mocks, package.json mesh-ratelimit.supported) against
# a throw-away local Kubernetes cluster
# (scripts/cluster/up.sh: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok fake
# nodes; Istio's CRDs and mesh ConfigMap). Programs run in-process (scripts/pulumi/run-in-process.ts,
# `pulumi --client`): no Node.js language host is needed. Scenarios (docs/proof/e2e.md):
#   0 the shipped dev stack exactly as it is (Pulumi.dev.yaml, generated Redis password): preview,
#     up, destroy. It needs Pulumi's Random provider, which the proxy does not serve: where the real
#     one is not in the tool cache, a MODEL of it (tests/e2e/random-model) stands in, and every
#     check of this scenario is then counted as a model pass, never as a real one.
#   1 up of the dev stack with a Redis password Secret the user manages (variant A, current) ==
#     offline render; no Random provider involved
#   2 variant B update: sensible preview, removes what B lacks, changes domain/descriptors/bucket,
#     rolls the rate-limit pods
#   3 destroy leaves nothing and the mesh ConfigMap byte-for-byte; seed profile both ways
#   4 bad configs: preview fails with the stack's message, creates nothing
#   5 timings, and pulumi up vs kubectl apply --server-side of the same render
#   3 destroy: nothing left, judged from each stack's state and from a full listing of the cluster
#   3c a second program (its own node_modules) installs the packed package and deploys with it;
#      `pulumi package add` of plugin/ needs the Node.js language host: BLOCKED where it is absent
#   3d a stack owns only what it created (other stacks, users' objects, shared cluster-wide objects)
#   3f two file backends with a stack of the same name on one cluster: the stack id keeps them apart
#      (control: the same id given to both shows the old collision)
#   3g a platform stack (PlatformRateLimit) with its admission policy: up and destroy; a team switch
#      written before it is reported and left; the team's next update refused, the platform admitted
#   3h the ambient stack (meshMode ambient, tests/e2e/ambient.sh): up, every object as rendered, the
#      Gateway API Gateway its own, every pod enrolled in ambient mode, every filter aimed at the
#      Gateway; destroy (controls: the checks fail on the sidecar render)
# --only LIST (comma-separated: 0,1,3b,3c,3d,3f,3g,3h,4,5; 1 is sections 1-3, 5 needs 1) runs only those
# sections (and always 6, nothing left behind).
# Own cluster (in a temp dir), own file backend, own PULUMI_CONFIG_PASSPHRASE; nothing in the repo
# is written. Ends with "N passed, M failed" (real passes only), a "MODEL:" line counting the checks
# that passed with the Random model, and a "BLOCKED:" line per part that cannot run here; exits
# non-zero on any failure.
# MESH_RL_E2E_KEEP=1 keeps the temp dir and cluster for inspection.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ONLY=""
while (($#)); do
  case $1 in
    --only) ONLY=${2:?--only needs a list such as 3d,3f}; shift 2 ;;
    *) echo "usage: tests/e2e/run.sh [--only 0,1,3b,3c,3d,3f,3g,3h,4,5]" >&2; exit 2 ;;
  esac
done
want() { [[ -z $ONLY || ",$ONLY," == *",$1,"* ]]; }
source "$here/../../scripts/lib/common.sh"
cd "$REPO_ROOT"

# ---------------------------------------------------------------- tools
# Built from the Go module proxy: what the cache lacks is built first (the tier's tools in
# scripts/lib/tier-tools.sh; each build script reuses a binary it finds), so the tier runs on a
# machine that never built them. A tool still missing after that is SKIPPED, which fails under CI=true.
source "$REPO_ROOT/scripts/lib/tier-tools.sh"
# No status into the folder of a background build that .ci/run may have started: its figures stay its own.
# shellcheck disable=SC2086 # the table's entry is a list of words
MESH_RL_BUILD_STATUS="" bash "$REPO_ROOT/scripts/tools/build-all.sh" ${tier_tools[e2e]} || warn "e2e: a tool build failed (above)"
missing=()
for b in "$PULUMI_BIN_DIR/pulumi" "$PULUMI_BIN_DIR/pulumi-resource-pulumi-nodejs" "$PULUMI_K8S_BIN" "$ETCD_BIN" \
  "$KUBE_BIN_DIR/kube-apiserver" "$KUBE_BIN_DIR/kube-controller-manager" "$KUBE_BIN_DIR/kube-scheduler" "$KWOK_DIR/kwok"; do
  [[ -x "$b" ]] || missing+=("$(basename "$b")")
done
for c in kubectl openssl jq; do command -v "$c" >/dev/null || missing+=("$c"); done
if ((${#missing[@]})); then
  skipped "e2e" "missing tools: ${missing[*]} (build them with: npm run tools)" && exit 0 || exit 1
fi
# Not served by the proxy at any version: the real one where it is in the cache, else a model (Random)
# or BLOCKED (the Node.js language host, needed only by `pulumi package add` of plugin/).
RANDOM_KIND=model
[[ -x "$PULUMI_RANDOM_BIN" ]] && RANDOM_KIND=real
LANGHOST=0
[[ -x "$PULUMI_BIN_DIR/pulumi-language-nodejs" ]] && LANGHOST=1

# From here on a failing step is reported by the checks, not by aborting the run.
set +e
PASSED=0 FAILED=0 MODEL_PASSED=0
BLOCKED_PARTS=()
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# mpass/mcheck: a check of a scenario that runs Pulumi's Random provider. With the model standing in,
# a pass is printed and counted as a MODEL pass (never among the real ones); a failure is a failure.
mpass() { if [[ $RANDOM_KIND == real ]]; then pass "$*"; else MODEL_PASSED=$((MODEL_PASSED + 1)); echo "PASS (with the Random provider MODEL, not counted as a real pass): $*"; fi; }
mcheck() { local what=$1; shift; if "$@"; then mpass "$what"; else fail "$what"; fi; }
blocked_part() { BLOCKED_PARTS+=("$1"); echo "BLOCKED: $1"; }
section() { echo; echo "=== $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
declare -A T=()

W=$(mktemp -d /tmp/mesh-rl-e2e.XXXXXX)
export MESH_RL_CLUSTER_DIR=$W/cluster
INGRESS_LOOP_PID=""
cleanup() {
  local rc=$?
  [[ -n "$INGRESS_LOOP_PID" ]] && kill "$INGRESS_LOOP_PID" 2>/dev/null
  if [[ "${MESH_RL_E2E_KEEP:-}" == 1 ]]; then
    echo "kept $W (cluster: MESH_RL_CLUSTER_DIR=$W/cluster bash scripts/cluster/down.sh)"
  else
    bash "$REPO_ROOT/scripts/cluster/down.sh" >/dev/null 2>&1 || true
    rm -rf "$W"
  fi
  exit $rc
}
trap cleanup EXIT

# ---------------------------------------------------------------- Pulumi, offline
export PULUMI_HOME=$CACHE/pulumi-home
export PULUMI_BACKEND_URL=file://$W/state
PULUMI_CONFIG_PASSPHRASE=$(openssl rand -hex 24); export PULUMI_CONFIG_PASSPHRASE
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_SKIP_CONFIRMATIONS=true PULUMI_NODEJS_SKIP_COMPILE_CHECK=true
export PATH=$PULUMI_BIN_DIR:$PATH
mkdir -p "$W/state" "$PULUMI_HOME"
pulumi plugin install resource kubernetes "$PULUMI_K8S_VERSION" --file "$PULUMI_K8S_BIN" --reinstall >/dev/null
[[ $RANDOM_KIND == real ]] && pulumi plugin install resource random "$PULUMI_RANDOM_VERSION" --file "$PULUMI_RANDOM_BIN" --reinstall >/dev/null
echo "pulumi $(pulumi version); plugins: $(pulumi plugin ls --json | jq -r '[.[] | "\(.name) \(.version)"] | join(", ")')"
echo "Random provider: $([[ $RANDOM_KIND == real ]] && echo "real, $PULUMI_RANDOM_VERSION" || echo "MODEL (tests/e2e/random-model; the Go module proxy serves no version of the real one)")"
echo "Node.js language host: $([[ $LANGHOST == 1 ]] && echo present || echo "absent (programs run in-process; pulumi package add is BLOCKED)")"
# Every program runs in-process: the SDK's own language runtime, served by this node, `pulumi --client`.
TSX_LOADER="file://$REPO_ROOT/node_modules/tsx/dist/loader.mjs"
inproc() { node --import "$TSX_LOADER" "$REPO_ROOT/scripts/pulumi/run-in-process.ts" "$@"; }

# ---------------------------------------------------------------- cluster
section "cluster"
t0=$(now)
# Fake nodes and kube-controller-manager: Deployments become Ready, and destroy's foreground
# deletion (its garbage collector) finishes.
MESH_RL_FAKE_NODES=1 bash "$REPO_ROOT/scripts/cluster/up.sh" > "$W/cluster-up.out" 2> "$W/cluster-up.err" || { cat "$W/cluster-up.err"; fail "cluster up"; echo "$PASSED passed, $FAILED failed"; exit 1; }
T[cluster_up]=$(elapsed "$t0" "$(now)")
export KUBECONFIG=$W/cluster/kubeconfig
fake_nodes=0
kubectl get node kwok-node-0 >/dev/null 2>&1 && fake_nodes=1
echo "cluster up in ${T[cluster_up]}s at $(cat "$W/cluster/server"); fake nodes (kwok): $fake_nodes"
# Istio's ingress status sync (istiod) writes the gateway's address into every Ingress of class
# istio; the provider waits for that status. Nothing here runs istiod: emulate that one write.
ingress_status_loop() {
  while sleep 1; do
    kubectl get ingress -A -o json 2>/dev/null |
      jq -r '.items[] | select((.status.loadBalancer.ingress // []) | length == 0) | "\(.metadata.namespace) \(.metadata.name)"' |
      while read -r ns name; do
        kubectl patch ingress "$name" -n "$ns" --subresource=status --type=merge \
          -p '{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.1"}]}}}' >/dev/null 2>&1
      done
  done
}
ingress_status_loop &
INGRESS_LOOP_PID=$!
mesh_data() { kubectl get configmap istio -n istio-system -o jsonpath='{.data}'; }
mesh_data > "$W/mesh-before.json"
# A full listing of the cluster: every object of every listable kind, in every namespace (events
# and leases, which the control plane writes on its own, left out).
full_listing() {
  local kinds
  kinds=$(kubectl api-resources --verbs=list -o name | grep -Ev '^(events|events\.events\.k8s\.io|leases\.coordination\.k8s\.io)$' | paste -sd, -)
  kubectl get "$kinds" -A -o json 2>/dev/null | jq -r '.items[] | "\(.apiVersion) \(.kind) \(.metadata.namespace // "-") \(.metadata.name)"' | sort -u
}
# The Redis password Secret a user manages (redisPasswordSecret): created before any stack, never
# touched by one.
USER_SECRET=e2e-redis-auth
kubectl create secret generic "$USER_SECRET" -n default --from-literal=password="$(openssl rand -hex 16)" >/dev/null
user_secret_rv=$(kubectl get secret "$USER_SECRET" -n default -o jsonpath='{.metadata.resourceVersion}')
full_listing > "$W/listing-before.txt"
echo "cluster listing before any stack: $(wc -l < "$W/listing-before.txt") objects"

# ---------------------------------------------------------------- project copy + stacks
P=$W/project
mkdir -p "$P"
cp -r Pulumi.yaml main.ts index.ts tsconfig.json package.json lib builders components mesh program cluster "$P/"
[[ -d render ]] && cp -r render "$P/"
ln -s "$REPO_ROOT/node_modules" "$P/node_modules"
if [[ $RANDOM_KIND == model ]]; then
  # The model is used through the project's plugin path, never installed as a version of the real provider.
  printf 'plugins:\n  providers:\n    - name: random\n      path: %s\n' "$here/random-model" >> "$P/Pulumi.yaml"
fi
pl() { (cd "$P" && inproc "$@"); }
new_stack() { # new_stack <name> [--generated-password|--no-id]: a stack with the dev stack's config and an id of its own
  cp "$REPO_ROOT/Pulumi.dev.yaml" "$P/Pulumi.$1.yaml"
  pl stack init "$1" >/dev/null
  # The stack's own random id (program/stack-identity.ts), as `npm run local:up` sets it.
  [[ "${2:-}" == --no-id ]] || pl config set stackId "$(openssl rand -hex 8)" --stack "$1"
  if [[ $fake_nodes == 0 ]]; then pl config set awaitRollout false --stack "$1"; fi
  # Unless the scenario is about the generated password: the user's own Secret (no Random provider).
  [[ "${2:-}" == --generated-password || "${2:-}" == --no-id ]] || pl config set --plaintext redisPasswordSecret "$USER_SECRET" --stack "$1"
}
stack_id() { pl config get stackId --stack "$1"; }
STATES=() # every stack's last state export, for the final "gone" check
render() { # render <outdir> <render args...>: run in the project copy, where --stack NAME finds Pulumi.NAME.yaml
  local out=$1; shift
  (cd "$P" && npx tsx render/cli.ts "$@" --out "$out") > "$out.log" 2>&1 || { cat "$out.log"; return 1; }
}
compare() { npx tsx "$here/compare.ts" "$@"; }
gone_from_state() { compare gone "$1" > "$1.gone.txt" 2>&1; }

# ================================================================ 0. the shipped dev stack as it is
if want 0; then
section "0. the shipped dev stack exactly as it is (generated Redis password; Random provider: $RANDOM_KIND)"
new_stack e2e-default --no-id
check "the stack's config is Pulumi.dev.yaml unchanged (the CLI merges Pulumi.yaml's defaults itself)" \
  cmp -s <(grep -v encryptionsalt "$P/Pulumi.e2e-default.yaml" | grep -v awaitRollout) "$REPO_ROOT/Pulumi.dev.yaml"
# No stack id yet: refused before anything is created, the fix giving a freshly generated id; the
# user runs that very command.
pl preview --stack e2e-default > "$W/preview-default-noid.log" 2>&1 && rc=0 || rc=$?
set_id=$(grep -Eo 'pulumi config set stackId [0-9a-f]{16}' "$W/preview-default-noid.log" | head -1)
check "without stackId: preview refused (exit $rc) under mesh-ratelimit:stackId, the fix with a fresh id ($set_id), state empty" bash -c \
  "test $rc -ne 0 && grep -q 'mesh-ratelimit:stackId' '$W/preview-default-noid.log' && test -n '$set_id' && test \"\$(cd '$P' && pulumi stack export --stack e2e-default | jq '.deployment.resources // [] | length')\" = 0"
(cd "$P" && $set_id --stack e2e-default)
pl preview --stack e2e-default > "$W/preview-default.log" 2>&1 && rc=0 || rc=$?
mcheck "pulumi preview of the shipped dev stack succeeds (exit $rc): $(grep -Eo '[0-9]+ to create' "$W/preview-default.log" | head -1)" test "$rc" -eq 0
[[ $rc -eq 0 ]] || tail -30 "$W/preview-default.log"
t0=$(now)
if pl up --yes --skip-preview --stack e2e-default > "$W/up-default.log" 2>&1; then
  mpass "pulumi up of the shipped dev stack in $(elapsed "$t0" "$(now)")s"
else
  fail "pulumi up of the shipped dev stack"; tail -40 "$W/up-default.log"
fi
pl stack export --stack e2e-default --file "$W/state-default.json"
STATES+=("$W/state-default.json")
pw=$(kubectl get secret redis-auth -n default -o jsonpath='{.data.password}' 2>/dev/null | base64 -d || true)
mcheck "generated redis password on the server (${#pw} chars)" test -n "$pw"
mcheck "state has no plaintext redis password" bash -c '! grep -qF -- "$1" "$2"' _ "$pw" "$W/state-default.json"
mcheck "RandomPassword.result is a secret in state" bash -c \
  "jq -e '[.deployment.resources[] | select(.type==\"random:index/randomPassword:RandomPassword\") | .outputs.result[\"4dabf18193072939515e22adb298388d\"]] | length > 0 and all(. == \"1b47061264138c4ac30d75fd1eb44270\")' '$W/state-default.json' >/dev/null"
mcheck "Secret redis-auth is a secret in state (outputs)" bash -c \
  "jq -e '[.deployment.resources[] | select(.type==\"kubernetes:core/v1:Secret\") | .outputs[\"4dabf18193072939515e22adb298388d\"] // .outputs.stringData[\"4dabf18193072939515e22adb298388d\"] // .outputs.data[\"4dabf18193072939515e22adb298388d\"]] | length > 0' '$W/state-default.json' >/dev/null"
mcheck "Deployments Ready (kwok fake node)" bash -c \
  "kubectl get deploy -n default -o json | jq -e '[.items[] | (.status.readyReplicas // 0) == .spec.replicas] | length > 0 and all' >/dev/null"
t0=$(now)
pl destroy --yes --skip-preview --stack e2e-default > "$W/destroy-default.log" 2>&1 && mpass "pulumi destroy of the shipped dev stack in $(elapsed "$t0" "$(now)")s" ||
  { fail "pulumi destroy of the shipped dev stack"; tail -30 "$W/destroy-default.log"; }
mcheck "every object in the shipped dev stack's state is gone" gone_from_state "$W/state-default.json"

fi

# ================================================================ 1. up (variant A, current)
if want 1; then
section "1. pulumi up: dev stack, variant A, current profile (the user's Redis password Secret: no Random provider)"
new_stack e2e-dev
render "$W/render-A" --stack e2e-dev --set stackId="$(stack_id e2e-dev)" --variant A --profile current --set redisPasswordSecret=$USER_SECRET
t0=$(now)
if pl up --yes --skip-preview --stack e2e-dev > "$W/up-A.log" 2>&1; then
  T[pulumi_up]=$(elapsed "$t0" "$(now)"); pass "pulumi up (variant A, current) in ${T[pulumi_up]}s"
else
  T[pulumi_up]=$(elapsed "$t0" "$(now)"); fail "pulumi up (variant A, current)"; tail -40 "$W/up-A.log"
fi
grep -E "Resources:|[0-9]+ (created|unchanged)" "$W/up-A.log" | sed 's/^/    /' || true
pl stack export --stack e2e-dev --file "$W/state-A.json"
STATES+=("$W/state-A.json")
compare present "$W/render-A" --state "$W/state-A.json" > "$W/compare-A.txt" 2>&1 && pass "every rendered object exists with the same content (A)" ||
  { fail "live objects differ from the render (A)"; grep -v "^  ok" "$W/compare-A.txt" | head -40; }
tail -1 "$W/compare-A.txt" | sed 's/^/    /'
pw=$(kubectl get secret "$USER_SECRET" -n default -o jsonpath='{.data.password}' | base64 -d)
check "no Random provider resource and no generated Secret in the state" bash -c \
  "jq -e '[.deployment.resources[] | select((.type | startswith(\"random:\")) or (.type==\"kubernetes:core/v1:Secret\"))] | length == 0' '$W/state-A.json' >/dev/null"
check "Redis and the service read the user's Secret" bash -c \
  "kubectl get deploy redis ratelimit -n default -o json | jq -e '[.items[].spec.template.spec.containers[].env[]? | select(.valueFrom.secretKeyRef) | .valueFrom.secretKeyRef.name] | unique == [\"$USER_SECRET\"]' >/dev/null"
check "state has no plaintext redis password" bash -c '! grep -qF -- "$1" "$2"' _ "$pw" "$W/state-A.json"
check "current profile leaves the mesh ConfigMap untouched" cmp -s "$W/mesh-before.json" <(mesh_data)
if [[ $fake_nodes == 1 ]]; then
  check "Deployments Ready (kwok fake node)" bash -c \
    "kubectl get deploy -n default -o json | jq -e '[.items[] | (.status.readyReplicas // 0) == .spec.replicas] | all' >/dev/null"
fi

# ================================================================ 2. variant B update
section "2. pulumi config set variant B; preview; up"
render "$W/render-B" --stack e2e-dev --set stackId="$(stack_id e2e-dev)" --variant B --profile current --set redisPasswordSecret=$USER_SECRET
rs_before=$(kubectl get deploy ratelimit -n default -o jsonpath='{.spec.template.metadata.annotations}')
pl config set variant B --stack e2e-dev
pl preview --stack e2e-dev --json > "$W/preview-B.json" 2> "$W/preview-B.err" || { fail "preview of variant B"; tail -20 "$W/preview-B.err"; }
echo "  preview steps (op, type, name):"
jq -r '.steps[] | select(.op != "same") | "    \(.op)\t\(.urn | split("::")[2])\t\(.urn | split("::")[3])"' "$W/preview-B.json" | sort | tee "$W/preview-B.steps"
check "preview: no replacements" bash -c "! grep -Eq '^ +(replace|create-replacement|delete-replaced)' '$W/preview-B.steps'"
check "preview: deletes EnvoyFilter filter-ratelimit-svc-api" grep -Eq '^ +delete.*EnvoyFilter.*filter-ratelimit-svc-api' "$W/preview-B.steps"
check "preview: updates ConfigMap ratelimit-config in place" grep -Eq '^ +update.*ConfigMap.*ratelimit-config' "$W/preview-B.steps"
check "preview: updates the domain in EnvoyFilter filter-ratelimit" grep -Eq '^ +update.*EnvoyFilter.*filter-ratelimit$' "$W/preview-B.steps"
check "preview: updates the local bucket (LocalRateLimit's EnvoyFilter)" grep -Eq '^ +update.*LocalRateLimit\$kubernetes:networking.istio.io/v1alpha3:EnvoyFilter' "$W/preview-B.steps"
t0=$(now)
if pl up --yes --skip-preview --stack e2e-dev > "$W/up-B.log" 2>&1; then
  T[pulumi_update]=$(elapsed "$t0" "$(now)"); pass "pulumi up (update to variant B) in ${T[pulumi_update]}s"
else
  T[pulumi_update]=$(elapsed "$t0" "$(now)"); fail "pulumi up (update to variant B)"; tail -40 "$W/up-B.log"
fi
pl stack export --stack e2e-dev --file "$W/state-B.json"
STATES+=("$W/state-B.json")
compare present "$W/render-B" --state "$W/state-B.json" > "$W/compare-B.txt" 2>&1 && pass "every rendered object exists with the same content (B)" ||
  { fail "live objects differ from the render (B)"; grep -v "^  ok" "$W/compare-B.txt" | head -40; }
compare absent "$W/render-A" --except-in "$W/render-B" > "$W/removed-B.txt" 2>&1 && pass "the update removed what variant B lacks: $(grep -c '^  ok' "$W/removed-B.txt") object(s)" ||
  { fail "objects variant B lacks are still there"; cat "$W/removed-B.txt"; }
check "ConfigMap ratelimit-config: domain productpage-ratelimit, no api descriptor" bash -c \
  "kubectl get cm ratelimit-config -n default -o jsonpath='{.data.config\.yaml}' | grep -q 'domain: productpage-ratelimit' && ! kubectl get cm ratelimit-config -n default -o jsonpath='{.data.config\.yaml}' | grep -q 'value: api'"
check "EnvoyFilter filter-ratelimit: domain productpage-ratelimit" bash -c \
  "kubectl get envoyfilter filter-ratelimit -n istio-system -o json | grep -q '\"domain\": \"productpage-ratelimit\"'"
check "EnvoyFilter filter-local-ratelimit-svc: bucket 10" bash -c \
  "kubectl get envoyfilter filter-local-ratelimit-svc -n istio-system -o json | jq -e '[.. | objects | select(has(\"max_tokens\")) | .max_tokens == 10 and .tokens_per_fill == 10] | length > 0 and all' >/dev/null"
rs_after=$(kubectl get deploy ratelimit -n default -o jsonpath='{.spec.template.metadata.annotations}')
check "rate-limit pod template changed with the config (new pods get the new config)" test "$rs_before" != "$rs_after"
if [[ $fake_nodes == 1 ]]; then
  check "rate-limit Deployment rolled out: all replicas updated and Ready" bash -c \
    "kubectl get deploy ratelimit -n default -o json | jq -e '.status.updatedReplicas == .spec.replicas and .status.readyReplicas == .spec.replicas and .status.observedGeneration == .metadata.generation' >/dev/null"
fi
check "config volume mounted without subPath (a running pod sees ConfigMap updates)" bash -c \
  "kubectl get deploy ratelimit -n default -o json | jq -e '[.spec.template.spec.containers[].volumeMounts[]? | select(.mountPath==\"/data/ratelimit/config\")] | length == 1 and (.[0].subPath == null)' >/dev/null"

# ================================================================ 3. destroy
section "3. pulumi destroy"
t0=$(now)
if pl destroy --yes --skip-preview --stack e2e-dev > "$W/destroy.log" 2>&1; then
  T[pulumi_destroy]=$(elapsed "$t0" "$(now)"); pass "pulumi destroy in ${T[pulumi_destroy]}s"
else
  T[pulumi_destroy]=$(elapsed "$t0" "$(now)"); fail "pulumi destroy"; tail -30 "$W/destroy.log"
fi
compare absent "$W/render-A" > "$W/absent-A.txt" 2>&1 && compare absent "$W/render-B" > "$W/absent-B.txt" 2>&1 &&
  pass "no object of either render remains" || { fail "objects remain after destroy"; grep FAIL "$W"/absent-*.txt; }
check "every object in the stack's state is gone (judged from the state)" gone_from_state "$W/state-B.json"
check "the user's Redis password Secret is untouched" test "$(kubectl get secret "$USER_SECRET" -n default -o jsonpath='{.metadata.resourceVersion}')" = "$user_secret_rv"
check "mesh ConfigMap byte-for-byte as before the first up" cmp "$W/mesh-before.json" <(mesh_data)

fi

if want 3b; then
section "3b. seed profile"
new_stack e2e-seed
pl config set apiProfile seed --stack e2e-seed
# Spec 2.10 literally: mesh-wide mutual TLS through the mesh ConfigMap's authPolicy (the default
# scope is the stack's own workloads, which the seed profile does with a PeerAuthentication).
pl config set mutualTlsScope mesh --stack e2e-seed
pl preview --stack e2e-seed > "$W/seed-preview.log" 2>&1 && rc=0 || rc=$?
check "seed + managedApi: preview fails (API server does not serve extensions/v1beta1)" test "$rc" -ne 0
check "  ... with the stack's message naming extensions/v1beta1 and the fix" \
  grep -q "does not serve extensions/v1beta1" "$W/seed-preview.log"
check "  ... and no provider error or stack trace" bash -c \
  "! grep -Eq 'panic:|goroutine [0-9]+|rpc error|^\s+at .*\.(js|ts):[0-9]+' '$W/seed-preview.log'"
sed -n '/error:/,$p' "$W/seed-preview.log" | head -8 | sed 's/^/    /'
pl config set managedApi false --stack e2e-seed
render "$W/render-seed" --stack e2e-seed --set stackId="$(stack_id e2e-seed)" --variant A --profile seed --set managedApi=false --set mutualTlsScope=mesh --set redisPasswordSecret=$USER_SECRET
t0=$(now)
if pl up --yes --skip-preview --stack e2e-seed > "$W/up-seed.log" 2>&1; then
  T[pulumi_up_seed]=$(elapsed "$t0" "$(now)"); pass "pulumi up (seed profile, managedApi false) in ${T[pulumi_up_seed]}s"
else
  T[pulumi_up_seed]=$(elapsed "$t0" "$(now)"); fail "pulumi up (seed profile, managedApi false)"; tail -30 "$W/up-seed.log"
fi
check "seed: mesh ConfigMap has authPolicy: MUTUAL_TLS" bash -c \
  "kubectl get cm istio -n istio-system -o jsonpath='{.data.mesh}' | grep -qx 'authPolicy: MUTUAL_TLS'"
check "seed: the rest of the mesh text is unchanged" bash -c \
  "diff <(jq -r .mesh '$W/mesh-before.json') <(kubectl get cm istio -n istio-system -o jsonpath='{.data.mesh}' | grep -vx 'authPolicy: MUTUAL_TLS') >/dev/null"
pl stack export --stack e2e-seed --file "$W/state-seed.json"
STATES+=("$W/state-seed.json")
compare present "$W/render-seed" --skip ConfigMap/istio-system/istio --state "$W/state-seed.json" > "$W/compare-seed.txt" 2>&1 && pass "seed: every rendered object exists with the same content" ||
  { fail "seed: live objects differ from the render"; grep -v "^  ok" "$W/compare-seed.txt" | head -30; }
t0=$(now)
pl destroy --yes --skip-preview --stack e2e-seed > "$W/destroy-seed.log" 2>&1 && pass "pulumi destroy (seed) in $(elapsed "$t0" "$(now)")s" ||
  { fail "pulumi destroy (seed)"; tail -30 "$W/destroy-seed.log"; }
check "seed: mesh ConfigMap byte-for-byte as before the first up" cmp "$W/mesh-before.json" <(mesh_data)
check "seed: nothing of the render remains (the mesh ConfigMap aside, which is not the stack's)" bash -c "npx tsx '$here/compare.ts' absent '$W/render-seed' --skip ConfigMap/istio-system/istio > '$W/absent-seed.txt' 2>&1"

fi

# ================================================================ 3c. a second program
if want 3c; then
# A user's own program (tests/e2e/consumer) installs the packed package, imports its components by
# name and deploys a shop's limits; then `pulumi package add` of the plugin folder (plugin/) from a
# program in another language.
section "3c. a second program consumes the package"
C=$W/shop-consumer
mkdir -p "$C" && cp "$here/consumer/Pulumi.yaml" "$here/consumer/package.json" "$here/consumer/tsconfig.json" "$here/consumer/index.ts" "$C/"
(cd "$REPO_ROOT" && npm run -s build && npm pack --ignore-scripts --pack-destination "$W") > "$W/pack.log" 2>&1 || { fail "npm pack of the package"; tail -20 "$W/pack.log"; }
# The SDKs at the low end of the package's peer ranges (its dev pins): the CLI and provider built here.
pv() { node -p "require('$REPO_ROOT/package.json').devDependencies['$1']"; }
(cd "$C" && npm install --no-audit --no-fund --prefer-offline --ignore-scripts "$W"/mesh-ratelimit-*.tgz \
  "@pulumi/pulumi@$(pv @pulumi/pulumi)" "@pulumi/kubernetes@$(pv @pulumi/kubernetes)" "@pulumi/random@$(pv @pulumi/random)") > "$W/shop-install.log" 2>&1 &&
  pass "consumer program: the packed tarball installed by npm" || { fail "consumer program: npm install of the tarball"; tail -20 "$W/shop-install.log"; }
(cd "$C" && pulumi stack init e2e-shop && pulumi config set --secret redisPassword "$(openssl rand -hex 16)") > "$W/shop-init.log" 2>&1
shop_pw=$(cd "$C" && pulumi config get redisPassword 2>/dev/null)
t0=$(now)
if (cd "$C" && inproc up --yes --skip-preview --stack e2e-shop) > "$W/up-shop.log" 2>&1; then
  pass "consumer program: pulumi up in $(elapsed "$t0" "$(now)")s"
else
  fail "consumer program: pulumi up"; tail -30 "$W/up-shop.log"
fi
check "consumer: ConfigMap shop/ratelimit-config holds the rules' entries" bash -c \
  "kubectl get cm ratelimit-config -n shop -o jsonpath='{.data.config\.yaml}' | grep -q 'value: login-per-client'"
check "consumer: the gateway filter calls the shop's rate-limit service" bash -c \
  "kubectl get envoyfilter shop-ratelimit -n istio-system -o json | grep -q 'outbound|8081||ratelimit.shop.svc.cluster.local'"
# The per-client rule's action (a client keyed by its /64 or /32 prefix), in the shop's virtual-host patches.
check "consumer: the rules' actions on virtual host shop.example:8080" bash -c \
  "kubectl get envoyfilter -n istio-system -o json | jq -e '[.items[] | select(.metadata.name | startswith(\"shop-ratelimit\")) | .. | objects | select(has(\"masked_remote_address\")) | .masked_remote_address | select(.v4_prefix_mask_len == 32 and .v6_prefix_mask_len == 64)] | length > 0' >/dev/null"
check "consumer: local bucket of 20 on the orders workload" bash -c \
  "kubectl get envoyfilter orders-bucket -n shop -o json | jq -e '[.. | objects | select(has(\"max_tokens\")) | .max_tokens == 20] | length > 0 and all' >/dev/null"
(cd "$C" && pulumi stack export --stack e2e-shop --file "$W/state-shop.json") && STATES+=("$W/state-shop.json")
check "consumer: its Redis password is a secret in the state, never in plain text" bash -c \
  "test -n '$shop_pw' && ! grep -qF -- '$shop_pw' '$W/state-shop.json' && grep -q '4dabf18193072939515e22adb298388d' '$W/state-shop.json'"
check "consumer: its Redis and rate-limit service read the shop's own Secret" bash -c \
  "kubectl get deploy -n shop -o json | jq -e '[.items[].spec.template.spec.containers[].env[]? | select(.name==\"REDIS_AUTH\" or .name==\"REDIS_PASSWORD\") | .valueFrom.secretKeyRef.name] | length == 2 and unique == [\"shop-redis-auth\"]' >/dev/null"
(cd "$C" && pulumi destroy --yes --skip-preview --stack e2e-shop) > "$W/destroy-shop.log" 2>&1 && pass "consumer program: pulumi destroy" ||
  { fail "consumer program: pulumi destroy"; tail -30 "$W/destroy-shop.log"; }
check "consumer: no EnvoyFilter of the consumer remains" bash -c \
  "! kubectl get envoyfilter -A -o name 2>/dev/null | grep -Eq 'shop-ratelimit|orders-bucket'"
# `pulumi package add` of a folder whose PulumiPlugin.yaml says `runtime: nodejs` starts the Node.js
# language host to ask the components for their schema; the Go module proxy serves no version of it.
if [[ $LANGHOST == 1 ]]; then
  Y=$W/yaml-consumer
  mkdir -p "$Y" && printf 'name: shop-yaml\nruntime: yaml\n' > "$Y/Pulumi.yaml"
  if (cd "$Y" && pulumi package add "$REPO_ROOT/plugin") > "$W/package-add.log" 2>&1; then
    pass "pulumi package add plugin/ from a YAML program (the schema from the components' Args)"
    check "  ... the program now names the mesh-ratelimit package" grep -q "mesh-ratelimit" "$Y/Pulumi.yaml"
  else
    fail "pulumi package add plugin/"; tail -30 "$W/package-add.log"
  fi
else
  blocked_part "pulumi package add plugin/: needs the Node.js language host (pulumi-language-nodejs), which the Go module proxy serves at no version (the consumer tier loads the plugin folder as the host would)"
fi

fi

# ================================================================ 3d. a stack owns only what it created
if want 3d; then
# Provider 4.25.0 creates by server-side apply: an object that exists with the same fields is shared
# silently, and the stack that "created" it deletes it on destroy. The program looks up every object
# it would create before registering any (components/common/ownership.ts, program/preflight.ts).
section "3d. a stack owns only what it created"
# Resources in a stack's state besides the stack itself (a failed `up` still records the root Stack resource).
state_count() { (cd "$P" && pulumi stack export --stack "$1" | jq '[.deployment.resources // [] | .[] | select(.type != "pulumi:pulumi:Stack")] | length'); }
rv() { kubectl get "$@" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null; }
# (a) two stacks of the program, same config, different stack names.
new_stack e2e-first
pl up --yes --skip-preview --stack e2e-first > "$W/up-first.log" 2>&1 && pass "(a) stack e2e-first: pulumi up" || { fail "(a) stack e2e-first: pulumi up"; tail -30 "$W/up-first.log"; }
pl stack export --stack e2e-first --file "$W/state-first.json"; STATES+=("$W/state-first.json")
first_owner=organization/mesh-ratelimit/e2e-first@$(stack_id e2e-first)
check "(a) every object of e2e-first carries its owner annotation ($first_owner)" bash -c \
  "kubectl get deploy,svc,cm,envoyfilter.networking.istio.io -A -l app.kubernetes.io/part-of=mesh-ratelimit -o json | jq -e '[.items[].metadata.annotations[\"mesh-ratelimit.io/owner\"]] | length > 10 and all(. == \"$first_owner\")' >/dev/null"
full_listing > "$W/listing-first.txt"
new_stack e2e-second
pl preview --stack e2e-second > "$W/preview-second.log" 2>&1 && rc=0 || rc=$?
check "(a) a second stack with the same config: preview refused (exit $rc)" test "$rc" -ne 0
check "(a)   ... naming the first stack as the owner, and the fix" bash -c \
  "grep -q 'it belongs to stack $first_owner' '$W/preview-second.log' && grep -q 'destroy stack $first_owner first' '$W/preview-second.log'"
grep -m3 'already exists and is not this stack' "$W/preview-second.log" | cut -c1-200 | sed 's/^/    /'
pl up --yes --skip-preview --stack e2e-second > "$W/up-second.log" 2>&1 && rc=0 || rc=$?
n=$(state_count e2e-second)
check "(a) pulumi up of the second stack refused too, before creating anything (exit $rc; state: $n resources besides the stack)" test "$rc" -ne 0 -a "$n" = 0
full_listing > "$W/listing-second.txt"
check "(a) the cluster lists exactly what it listed after the first stack's up" diff -q "$W/listing-first.txt" "$W/listing-second.txt"
# Negative control: what the provider did before owner annotations. A server-side apply (the
# provider's create) of the second stack's objects, as 0.2.0 rendered them (no owner annotation),
# under another field manager merges into the first stack's objects without a word.
render "$W/render-second" --stack e2e-second --variant A --profile current --set redisPasswordSecret=$USER_SECRET
npx tsx "$here/render-to-json.ts" "$W/render-second" "$W/render-second.json" > /dev/null
jq '.items |= map(del(.metadata.annotations["mesh-ratelimit.io/owner"]))' "$W/render-second.json" > "$W/render-second-0.2.json"
check "(a) negative control: kubectl apply --server-side of the second stack's objects without owner annotations succeeds on the first stack's objects (dry run)" \
  kubectl apply --server-side --dry-run=server --field-manager=pulumi-kubernetes-second -f "$W/render-second-0.2.json"
pl destroy --yes --skip-preview --stack e2e-second > "$W/destroy-second.log" 2>&1
full_listing > "$W/listing-second-destroyed.txt"
check "(a) pulumi destroy of the refused second stack leaves the first stack's objects" diff -q "$W/listing-first.txt" "$W/listing-second-destroyed.txt"
pl destroy --yes --skip-preview --stack e2e-first > "$W/destroy-first.log" 2>&1 && pass "(a) destroy of e2e-first" || { fail "(a) destroy of e2e-first"; tail -20 "$W/destroy-first.log"; }

# (b) Istio's bookinfo and a team's redis already in default, created with kubectl.
kubectl create namespace limits >/dev/null
kubectl create serviceaccount bookinfo-productpage -n default >/dev/null
kubectl create deployment productpage-v1 -n default --image=docker.io/istio/examples-bookinfo-productpage-v1:1.20.3 --port=9080 >/dev/null
kubectl label deployment productpage-v1 -n default app=productpage version=v1 --overwrite >/dev/null
kubectl create service clusterip productpage -n default --tcp=9080:9080 >/dev/null
kubectl create deployment redis -n default --image=docker.io/library/redis:7.0.15-alpine --port=6379 >/dev/null
kubectl create service clusterip redis -n default --tcp=6379:6379 >/dev/null
kubectl create secret generic redis-auth -n default --from-literal=password=team-redis >/dev/null
user_rvs() { for o in "deployment productpage-v1" "service productpage" "serviceaccount bookinfo-productpage" "deployment redis" "service redis" "secret redis-auth"; do echo "$o $(rv $o -n default)"; done; }
user_rvs > "$W/user-rvs-before.txt"
full_listing > "$W/listing-user.txt"
# The stack reads the user's own Redis password Secret (no Random provider): the team's Secret
# redis-auth is no name the stack writes then, and stays as it is.
new_stack e2e-crowded
pl preview --stack e2e-crowded > "$W/preview-crowded.log" 2>&1 && rc=0 || rc=$?
check "(b) bookinfo and a redis already in default: preview refused (exit $rc)" test "$rc" -ne 0
for o in "Deployment default/productpage-v1" "Service default/productpage" "Deployment default/redis" "Service default/redis"; do
  check "(b)   ... names $o and who manages it" bash -c "grep -F '$o already exists' '$W/preview-crowded.log' | grep -q 'field managers: '"
done
check "(b)   ... names ServiceAccount default/bookinfo-productpage" grep -qF "ServiceAccount default/bookinfo-productpage already exists" "$W/preview-crowded.log"
check "(b)   ... with the fixes: bookinfo existing, workloadNamespace, ratelimitNamespace" bash -c \
  "grep -q 'pulumi config set bookinfo existing' '$W/preview-crowded.log' && grep -q 'pulumi config set workloadNamespace' '$W/preview-crowded.log' && grep -q 'pulumi config set ratelimitNamespace' '$W/preview-crowded.log'"
pl up --yes --skip-preview --stack e2e-crowded > "$W/up-crowded.log" 2>&1 && rc=0 || rc=$?
n=$(state_count e2e-crowded)
check "(b) pulumi up refused before creating anything (exit $rc; state: $n resources besides the stack)" test "$rc" -ne 0 -a "$n" = 0
full_listing > "$W/listing-user-after.txt"
check "(b) nothing created or changed: the cluster lists the same objects, the user's objects keep their resourceVersion" bash -c \
  "diff -q '$W/listing-user.txt' '$W/listing-user-after.txt' && diff <(cat '$W/user-rvs-before.txt') <($(declare -f rv user_rvs); user_rvs)"
grep 'ownership\|checked [0-9]* objects' "$W/up-crowded.log" | head -2 | sed 's/^/    /'
# The user's choice: limits on the bookinfo that runs, rate-limit service and its Redis in a namespace of the stack's own.
pl config set bookinfo existing --stack e2e-crowded; pl config set variant B --stack e2e-crowded; pl config set ratelimitNamespace limits --stack e2e-crowded
pl up --yes --skip-preview --stack e2e-crowded > "$W/up-crowded2.log" 2>&1 && pass "(b) bookinfo existing + ratelimitNamespace limits: pulumi up" || { fail "(b) bookinfo existing: pulumi up"; tail -30 "$W/up-crowded2.log"; }
grep -o 'checked [0-9]* objects in the cluster before creating any[^"]*' "$W/up-crowded2.log" | head -1 | cut -c1-240 | sed 's/^/    /'
pl stack export --stack e2e-crowded --file "$W/state-crowded.json"; STATES+=("$W/state-crowded.json")
check "(b)   ... the stack created no bookinfo object and its Redis runs in limits" bash -c \
  "! jq -e '.deployment.resources[] | select(.outputs.metadata.name == \"productpage-v1\" or .outputs.metadata.name == \"bookinfo-gateway\")' '$W/state-crowded.json' >/dev/null && kubectl get deploy redis -n limits >/dev/null"
check "(b)   ... the user's objects unchanged (resourceVersion)" bash -c "diff <(cat '$W/user-rvs-before.txt') <($(declare -f rv user_rvs); user_rvs)"
pl destroy --yes --skip-preview --stack e2e-crowded > "$W/destroy-crowded.log" 2>&1 && pass "(b) destroy" || { fail "(b) destroy"; tail -20 "$W/destroy-crowded.log"; }
check "(b) after destroy: the user's bookinfo and redis are still there, unchanged" bash -c "diff <(cat '$W/user-rvs-before.txt') <($(declare -f rv user_rvs); user_rvs)"
kubectl delete deployment productpage-v1 redis -n default >/dev/null; kubectl delete service productpage redis -n default >/dev/null
kubectl delete serviceaccount bookinfo-productpage -n default >/dev/null; kubectl delete secret redis-auth -n default >/dev/null; kubectl delete namespace limits --wait=true >/dev/null

# (d) an object that merges without conflict: the stack's own ConfigMap, the same fields, applied by
# someone else (no owner annotation). Server-side apply would share it; the stack refuses it.
new_stack e2e-merge # first: the render reads its Pulumi.e2e-merge.yaml
render "$W/render-d" --stack e2e-merge --variant A --profile current --set redisPasswordSecret=$USER_SECRET
npx tsx "$here/render-to-json.ts" "$W/render-d" "$W/render-d.json" > /dev/null
jq '.items[] | select(.kind=="ConfigMap" and .metadata.name=="ratelimit-config") | del(.metadata.annotations["mesh-ratelimit.io/owner"])' "$W/render-d.json" > "$W/cm-d.json"
kubectl apply --server-side --field-manager=another-team -f "$W/cm-d.json" >/dev/null
cm_rv=$(rv configmap ratelimit-config -n default)
pl up --yes --skip-preview --stack e2e-merge > "$W/up-merge.log" 2>&1 && rc=0 || rc=$?
check "(d) the same ConfigMap, identical fields, someone else's: pulumi up refused (exit $rc), naming it and its manager another-team" bash -c \
  "test $rc -ne 0 && grep -q 'ConfigMap default/ratelimit-config already exists' '$W/up-merge.log' && grep -q 'field managers: another-team' '$W/up-merge.log'"
check "(d) never adopted: state empty, ConfigMap unchanged (resourceVersion), no owner annotation" bash -c \
  "test '$(state_count e2e-merge)' = 0 && test \"\$(kubectl get cm ratelimit-config -n default -o jsonpath='{.metadata.resourceVersion}')\" = '$cm_rv' && test -z \"\$(kubectl get cm ratelimit-config -n default -o jsonpath='{.metadata.annotations.mesh-ratelimit\.io/owner}')\""
kubectl delete configmap ratelimit-config -n default >/dev/null

# (c) another team's Ingress of class istio: the stack creates IngressClass istio (absent before), and
# pulumi destroy leaves it, since team-c's Ingress uses it. (Without another user, section 3 shows
# destroy deleting it: no object of either render remains.)
kubectl create namespace team-c >/dev/null
kubectl create ingress web -n team-c --class=istio --rule="team-c.example.com/*=web:80" >/dev/null
new_stack e2e-class
pl up --yes --skip-preview --stack e2e-class > "$W/up-class.log" 2>&1 && pass "(c) pulumi up with team-c's Ingress of class istio in the cluster" || { fail "(c) pulumi up"; tail -20 "$W/up-class.log"; }
check "(c)   ... it says destroy will leave IngressClass istio, naming team-c/web" grep -q "IngressClass istio: other Ingresses use it (team-c/web); pulumi destroy will leave it in place" "$W/up-class.log"
check "(c)   ... and the stack created the class (owner annotation organization/mesh-ratelimit/e2e-class@<its id>)" bash -c \
  "test \"\$(kubectl get ingressclass istio -o jsonpath='{.metadata.annotations.mesh-ratelimit\.io/owner}')\" = organization/mesh-ratelimit/e2e-class@$(stack_id e2e-class)"
pl stack export --stack e2e-class --file "$W/state-class.json"
pl destroy --yes --skip-preview --stack e2e-class > "$W/destroy-class.log" 2>&1 && pass "(c) pulumi destroy" || { fail "(c) pulumi destroy"; tail -20 "$W/destroy-class.log"; }
check "(c) after destroy: IngressClass istio is still there for team-c/web, the stack's Deployments are gone" bash -c \
  "kubectl get ingressclass istio >/dev/null && kubectl get ingress web -n team-c >/dev/null && test -z \"\$(kubectl get deploy -n default -o name)\""
kubectl delete namespace team-c --wait=true >/dev/null; kubectl delete ingressclass istio >/dev/null
STATES+=("$W/state-class.json")

# (c) the same for the mesh-wide PeerAuthentication default (mutualTlsScope=mesh): a workload with a
# sidecar in team-m runs under it, so destroy leaves it.
kubectl create namespace team-m >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: team-m}
spec:
  containers:
    - {name: app, image: docker.io/library/busybox:1.36}
    - {name: istio-proxy, image: docker.io/istio/proxyv2:1.30.0}
YAML
new_stack e2e-meshtls
pl config set mutualTlsScope mesh --stack e2e-meshtls
pl up --yes --skip-preview --stack e2e-meshtls > "$W/up-meshtls.log" 2>&1 && pass "(c) pulumi up with mutualTlsScope=mesh and a sidecar in team-m" || { fail "(c) pulumi up (mesh scope)"; tail -20 "$W/up-meshtls.log"; }
check "(c)   ... it says destroy will leave PeerAuthentication istio-system/default, naming team-m" grep -q "PeerAuthentication istio-system/default: workloads outside the stack's namespaces run under it (sidecars in team-m); pulumi destroy will leave it in place" "$W/up-meshtls.log"
pl stack export --stack e2e-meshtls --file "$W/state-meshtls.json"
pl destroy --yes --skip-preview --stack e2e-meshtls > "$W/destroy-meshtls.log" 2>&1 && pass "(c) pulumi destroy (mesh scope)" || { fail "(c) pulumi destroy (mesh scope)"; tail -20 "$W/destroy-meshtls.log"; }
check "(c) after destroy: PeerAuthentication istio-system/default (STRICT) is still there, the stack's Deployments are gone" bash -c \
  "test \"\$(kubectl get peerauthentication.security.istio.io default -n istio-system -o jsonpath='{.spec.mtls.mode}')\" = STRICT && test -z \"\$(kubectl get deploy -n default -o name)\""
kubectl delete namespace team-m --wait=true >/dev/null; kubectl delete peerauthentication.security.istio.io default -n istio-system >/dev/null
STATES+=("$W/state-meshtls.json")

# (c) the same stack config where nobody else runs under the mesh-wide PeerAuthentication: sidecars
# only in the stack's own namespace (default). Preview says destroy deletes it, and destroy does.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: own-app, namespace: default}
spec:
  containers:
    - {name: app, image: docker.io/library/busybox:1.36}
    - {name: istio-proxy, image: docker.io/istio/proxyv2:1.30.0}
YAML
new_stack e2e-meshtls-alone
pl config set mutualTlsScope mesh --stack e2e-meshtls-alone
pl up --yes --skip-preview --stack e2e-meshtls-alone > "$W/up-meshtls-alone.log" 2>&1 && pass "(c) pulumi up with mutualTlsScope=mesh, sidecars only in the stack's namespace default" || { fail "(c) pulumi up (mesh scope, alone)"; tail -20 "$W/up-meshtls-alone.log"; }
check "(c)   ... it says destroy will delete PeerAuthentication istio-system/default, nobody else running under it" grep -q "PeerAuthentication istio-system/default: no workload outside the stack's namespaces runs under it (sidecars only in the stack's own namespaces: default); pulumi destroy will delete it with the stack" "$W/up-meshtls-alone.log"
check "(c)   ... the stack created it: STRICT, with its owner annotation" bash -c \
  "test \"\$(kubectl get peerauthentication.security.istio.io default -n istio-system -o jsonpath='{.spec.mtls.mode} {.metadata.annotations.mesh-ratelimit\.io/owner}')\" = 'STRICT organization/mesh-ratelimit/e2e-meshtls-alone@$(stack_id e2e-meshtls-alone)'"
pl stack export --stack e2e-meshtls-alone --file "$W/state-meshtls-alone.json"
pl destroy --yes --skip-preview --stack e2e-meshtls-alone > "$W/destroy-meshtls-alone.log" 2>&1 && pass "(c) pulumi destroy (mesh scope, alone)" || { fail "(c) pulumi destroy (mesh scope, alone)"; tail -20 "$W/destroy-meshtls-alone.log"; }
check "(c) after destroy: PeerAuthentication istio-system/default is gone with the stack (the keep case above is its control), the stack's Deployments too" bash -c \
  "! kubectl get peerauthentication.security.istio.io default -n istio-system >/dev/null 2>&1 && test -z \"\$(kubectl get deploy -n default -o name)\""
kubectl delete pod own-app -n default --wait=true >/dev/null
STATES+=("$W/state-meshtls-alone.json")

# (e) a tenant on the stack's host and port (tests/istio/fixtures/tenant-star.yaml: a Gateway and a
# VirtualService for "*" on port 8080, which Istio merges into the stack's virtual host *:8080; the
# istio tier shows the merge in Istio's generated routes): preview names both and the fix.
kubectl create namespace team-star >/dev/null
kubectl apply -f "$REPO_ROOT/tests/istio/fixtures/tenant-star.yaml" >/dev/null
pl preview --stack e2e-merge > "$W/preview-tenant.log" 2>&1
check "(e) preview names the tenant's VirtualService merged into the stack's virtual host *:8080, and the fix" bash -c \
  "grep -q 'VirtualService team-star/star (host \*, Gateway team-star/star-gateway) is merged by Istio into the stack.s virtual host \*:8080' '$W/preview-tenant.log' && grep -q 'pulumi config set gatewayHosts' '$W/preview-tenant.log'"
check "(e)   ... and the tenant's Gateway server for * on port 8080" grep -q "Gateway team-star/star-gateway has a server on the stack's gateway port 8080 for host \*" "$W/preview-tenant.log"
kubectl delete namespace team-star --wait=true >/dev/null

fi

# ================================================================ 3f. two backends, one stack name
# Two people, each with a checkout and a file backend of their own, deploy stack `local` to one
# cluster. Every self-managed backend reports the organization `organization`, so without the stack
# id both owner values would be organization/mesh-ratelimit/local (program/stack-identity.ts).
if want 3f; then
section "3f. two file backends, one stack name (local), one cluster: the stack id keeps the owners apart"
# person <n>: a project copy (no stack files) and a file backend of its own.
person() { local d=$W/person-$1; mkdir -p "$d/state" && cp -a "$P" "$d/project" && find "$d/project" -maxdepth 1 -name 'Pulumi.*.yaml' -delete; }
plp() { local n=$1; shift; (cd "$W/person-$n/project" && PULUMI_BACKEND_URL=file://$W/person-$n/state inproc "$@"); }
local_stack() { # local_stack <n> <stack id>
  person "$1"
  cp "$REPO_ROOT/Pulumi.dev.yaml" "$W/person-$1/project/Pulumi.local.yaml"
  plp "$1" stack init local >/dev/null
  plp "$1" config set stackId "$2" --stack local
  plp "$1" config set --plaintext redisPasswordSecret "$USER_SECRET" --stack local
  if [[ $fake_nodes == 0 ]]; then plp "$1" config set awaitRollout false --stack local; fi
}
local_count() { (cd "$W/person-$1/project" && PULUMI_BACKEND_URL=file://$W/person-$1/state pulumi stack export --stack local) | jq '[.deployment.resources // [] | .[] | select(.type | startswith("kubernetes:"))] | length'; }
# Every object of every listable kind that carries owner value $1, with its resourceVersion.
owned_by() {
  local kinds
  kinds=$(kubectl api-resources --verbs=list -o name | grep -Ev '^(events|events\.events\.k8s\.io|leases\.coordination\.k8s\.io)$' | paste -sd, -)
  kubectl get "$kinds" -A -o json 2>/dev/null | jq -r --arg o "$1" \
    '.items[] | select(.metadata.annotations["mesh-ratelimit.io/owner"] == $o) | "\(.kind) \(.metadata.namespace // "-")/\(.metadata.name) \(.metadata.resourceVersion)"' | sort
}
id1=$(openssl rand -hex 8); id2=$(openssl rand -hex 8)
owner1=organization/mesh-ratelimit/local@$id1
local_stack 1 "$id1"
plp 1 up --yes --skip-preview --stack local > "$W/up-local-1.log" 2>&1 && pass "person 1 (backend 1): pulumi up of stack local" || { fail "person 1: pulumi up of stack local"; tail -30 "$W/up-local-1.log"; }
plp 1 stack export --stack local --file "$W/state-local-1.json"; STATES+=("$W/state-local-1.json")
owned_by "$owner1" > "$W/owned-1.txt"; n1=$(wc -l < "$W/owned-1.txt")
check "person 1's objects carry $owner1: $n1 in the cluster, $(local_count 1) Kubernetes resources in the state" test "$n1" -gt 20
full_listing > "$W/listing-local-1.txt"
local_stack 2 "$id2"
plp 2 preview --stack local > "$W/preview-local-2.log" 2>&1 && rc=0 || rc=$?
check "person 2 (backend 2, stack local, own id): preview refused (exit $rc), naming person 1's owner value with its id" bash -c \
  "test $rc -ne 0 && grep -q 'it belongs to stack $owner1' '$W/preview-local-2.log' && grep -q 'destroy stack $owner1 first' '$W/preview-local-2.log'"
grep -m1 'already exists and' "$W/preview-local-2.log" | cut -c1-220 | sed 's/^/    /'
plp 2 up --yes --skip-preview --stack local > "$W/up-local-2.log" 2>&1 && rc=0 || rc=$?
n2=$(local_count 2)
check "person 2: pulumi up refused before creating anything (exit $rc; state: $n2 Kubernetes resources)" test "$rc" -ne 0 -a "$n2" = 0
full_listing > "$W/listing-local-2.txt"; owned_by "$owner1" > "$W/owned-1-after-2.txt"
check "  ... nothing created or changed: the cluster lists the same objects, and each of person 1's $n1 keeps its resourceVersion" bash -c \
  "diff -q '$W/listing-local-1.txt' '$W/listing-local-2.txt' && diff '$W/owned-1.txt' '$W/owned-1-after-2.txt'"
plp 2 destroy --yes --skip-preview --stack local > "$W/destroy-local-2.log" 2>&1
owned_by "$owner1" > "$W/owned-1-after-2d.txt"
check "person 2: pulumi destroy leaves person 1's objects ($n1 before, $(wc -l < "$W/owned-1-after-2d.txt") after, resourceVersions unchanged)" diff "$W/owned-1.txt" "$W/owned-1-after-2d.txt"
# The checks ask the provider's cluster (cluster/kube-target.ts): the cluster's kubeconfig given only
# as the secret config kubernetes:kubeconfig, while KUBECONFIG points at a kubeconfig whose
# current-context is another (unreachable) cluster. Preview must see person 1's objects and refuse.
EK=$W/elsewhere-kubeconfig
kubectl config --kubeconfig "$EK" set-cluster elsewhere --server https://127.0.0.1:9 >/dev/null
kubectl config --kubeconfig "$EK" set-credentials nobody --token nothing >/dev/null
kubectl config --kubeconfig "$EK" set-context elsewhere --cluster elsewhere --user nobody >/dev/null
kubectl config --kubeconfig "$EK" use-context elsewhere >/dev/null
new_stack e2e-kubeconfig
KUBECONFIG=$EK pl preview --stack e2e-kubeconfig > "$W/preview-kc-control.log" 2>&1 && rc=0 || rc=$?
check "control: with KUBECONFIG's current-context elsewhere and no kubernetes:kubeconfig, the checks reach no cluster (exit $rc, 'could not look up')" bash -c \
  "test $rc -ne 0 && grep -q 'could not look up the [0-9]* objects the stack would create with kubectl' '$W/preview-kc-control.log'"
pl config set --secret kubernetes:kubeconfig "$(cat "$KUBECONFIG")" --stack e2e-kubeconfig
mkdir -p "$W/tmp-kc"
KUBECONFIG=$EK TMPDIR=$W/tmp-kc pl preview --stack e2e-kubeconfig > "$W/preview-kc.log" 2>&1 && rc=0 || rc=$?
key_data=$(kubectl config view --raw -o jsonpath='{.users[0].user.client-key-data}')
check "kubernetes:kubeconfig (secret) with KUBECONFIG elsewhere: the checks ask the provider's cluster (exit $rc, refused naming $owner1), no kubectl warning, the key never in the output" bash -c \
  "test $rc -ne 0 && grep -q 'it belongs to stack $owner1' '$W/preview-kc.log' && ! grep -q 'could not' '$W/preview-kc.log' && ! grep -qF -- '${key_data:0:40}' '$W/preview-kc.log'"
check "  ... and its temp kubeconfig is gone (no mesh-rl-kubeconfig-* in the preview's own TMPDIR)" bash -c "! ls -d '$W/tmp-kc'/mesh-rl-kubeconfig-* >/dev/null 2>&1"
# Negative control: a third backend's stack local given person 1's id is one owner with it again:
# the collision the id prevents (up passes and writes person 1's objects; destroy deletes them).
local_stack 3 "$id1"
plp 3 up --yes --skip-preview --stack local > "$W/up-local-3.log" 2>&1 && rc=0 || rc=$?
owned_by "$owner1" > "$W/owned-1-after-3.txt"
changed=$(comm -23 "$W/owned-1.txt" "$W/owned-1-after-3.txt" | wc -l)
n3=$(local_count 3)
check "negative control (same id in backend 3): its up passes (exit $rc) and takes person 1's objects: $n3 resources in its state, $changed of person 1's $n1 objects written (resourceVersion changed)" \
  test "$rc" -eq 0 -a "$n3" -gt 20
plp 3 stack export --stack local --file "$W/state-local-3.json"; STATES+=("$W/state-local-3.json")
plp 3 destroy --yes --skip-preview --stack local > "$W/destroy-local-3.log" 2>&1
left=$(owned_by "$owner1" | wc -l)
check "negative control: its destroy deletes person 1's objects ($n1 listed before, $left after)" test "$left" -lt "$n1"
plp 1 destroy --yes --skip-preview --stack local > "$W/destroy-local-1.log" 2>&1 && pass "person 1: pulumi destroy (its objects already deleted by the control)" || { fail "person 1: pulumi destroy"; tail -20 "$W/destroy-local-1.log"; }
fi

# ================================================================ 3g. a platform and its admission policy
if want 3g; then
# A platform team's program (tests/e2e/platform): PlatformRateLimit with its admission policy, up
# and destroy on the real engine. Before it, a team's switch of the defaults on a host the platform
# assigns to no one (as a team deployed earlier wrote it): the platform's up reports it and does not
# break it; once the policy exists, the team's next update of it is refused at the API server and the
# platform's identity (this kubeconfig's admin) is admitted.
section "3g. a platform stack with its admission policy"
PF=$W/platform
mkdir -p "$PF" && printf 'name: e2e-platform\nruntime: nodejs\nmain: index.ts\n' > "$PF/Pulumi.yaml"
# The program imports the package entry of the repository itself (read only; nothing is written there).
sed "s#\"\.\./\.\./\.\./index\"#\"$REPO_ROOT/index\"#" "$here/platform/index.ts" > "$PF/index.ts"
ln -s "$REPO_ROOT/node_modules" "$PF/node_modules"
plf() { (cd "$PF" && E2E_PLATFORM_REDIS_PASSWORD=$platform_pw inproc "$@"); }
platform_pw=$(openssl rand -hex 16)
team_b=system:serviceaccount:e2e-team-b:deployer
kubectl create role e2e-team-envoyfilters -n istio-system --verb=get,list,create,update,patch,delete --resource=envoyfilters.networking.istio.io >/dev/null
kubectl create rolebinding e2e-team-envoyfilters -n istio-system --role=e2e-team-envoyfilters --user="$team_b" >/dev/null
npx tsx "$here/platform/team-switch.ts" > "$W/team-early.json" && npx tsx "$here/platform/team-switch.ts" --as-update > "$W/team-update.json"
check "a team's switch of the defaults on an unassigned host, written before the policy (as team b)" \
  kubectl --as="$team_b" apply --server-side --field-manager=e2e-team-b -f "$W/team-early.json"
(cd "$PF" && pulumi stack init e2e-platform) > "$W/platform-init.log" 2>&1
t0=$(now)
if plf up --yes --skip-preview --stack e2e-platform > "$W/up-platform.log" 2>&1; then
  pass "platform: pulumi up in $(elapsed "$t0" "$(now)")s"
else
  fail "platform: pulumi up"; tail -30 "$W/up-platform.log"
fi
check "platform: the ValidatingAdmissionPolicy and its binding exist" bash -c \
  "kubectl get validatingadmissionpolicies.admissionregistration.k8s.io -o name | grep -q platform-ratelimit && kubectl get validatingadmissionpolicybindings.admissionregistration.k8s.io -o name | grep -q platform-ratelimit"
check "platform: its up names the team's earlier switch (e2e-team-b-early), and leaves it in place" bash -c \
  "grep -q 'e2e-team-b-early' '$W/up-platform.log' && kubectl get envoyfilter e2e-team-b-early -n istio-system >/dev/null"
if kubectl --as="$team_b" apply --server-side --field-manager=e2e-team-b -f "$W/team-update.json" > "$W/team-update.log" 2>&1; then
  fail "platform: the team's update of its switch was admitted"
else
  check "platform: the team's update of its switch is refused at admission, naming the rule" grep -q "defaults-switch-host" "$W/team-update.log"
fi
# Control: the platform's identity (the admin of this kubeconfig, system:masters) is admitted.
check "platform: the same update by the platform's identity is admitted (control)" \
  kubectl apply --server-side --force-conflicts --field-manager=e2e-team-b -f "$W/team-update.json"
(cd "$PF" && pulumi stack export --stack e2e-platform --file "$W/state-platform.json") && STATES+=("$W/state-platform.json")
check "platform: its Redis password is a secret in the state, never in plain text" bash -c "! grep -qF -- '$platform_pw' '$W/state-platform.json'"
kubectl delete envoyfilter e2e-team-b-early -n istio-system >/dev/null 2>&1 || true
kubectl delete rolebinding,role e2e-team-envoyfilters -n istio-system >/dev/null 2>&1 || true
(cd "$PF" && pulumi destroy --yes --skip-preview --stack e2e-platform) > "$W/destroy-platform.log" 2>&1 && pass "platform: pulumi destroy" ||
  { fail "platform: pulumi destroy"; tail -30 "$W/destroy-platform.log"; }
check "platform: no admission policy or binding of the platform remains" bash -c \
  "! kubectl get validatingadmissionpolicies.admissionregistration.k8s.io,validatingadmissionpolicybindings.admissionregistration.k8s.io -o name 2>/dev/null | grep -q platform-ratelimit"
fi

# ================================================================ 3h. the ambient stack
if want 3h; then
# shellcheck source=ambient.sh
source "$here/ambient.sh"
fi

# ================================================================ 4. bad config
if want 4; then
section "4. bad config: preview fails with the stack's message and creates nothing"
new_stack e2e-bad
bad_case() { # bad_case <description> <expected text> <key=value>...
  local what=$1 expect=$2; shift 2
  local kv
  for kv in "$@"; do pl config set --stack e2e-bad -- "${kv%%=*}" "${kv#*=}"; done
  local rc=0
  pl preview --stack e2e-bad > "$W/bad.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]] && grep -qF -- "$expect" "$W/bad.log" && ! grep -Eq 'panic:|goroutine [0-9]+|rpc error' "$W/bad.log"; then
    pass "bad config ($what): exit $rc, message: $(grep -m1 -F -- "$expect" "$W/bad.log" | sed 's/^ *//' | cut -c1-110)"
  else
    fail "bad config ($what): exit $rc, expected '$expect'"; tail -15 "$W/bad.log"
  fi
  for kv in "$@"; do pl config rm --stack e2e-bad "${kv%%=*}" >/dev/null; done
  pl config set --stack e2e-bad variant A
}
bad_case "unknown variant" "mesh-ratelimit:variant = \"C\"" variant=C
bad_case "unknown unit" "mesh-ratelimit:unit = \"fortnight\"" unit=fortnight
bad_case "apiLimit in variant B" "mesh-ratelimit:apiLimit" variant=B apiLimit=5
bad_case "negative limit" "mesh-ratelimit:limitedPathLimit" limitedPathLimit=-1
bad_case "fill interval below 50ms" "mesh-ratelimit:localFillInterval" localFillInterval=10ms
bad_case "invalid route regex" "mesh-ratelimit:apiRouteRegex" "apiRouteRegex=/api/v1/products/([0-9"
bad_case "misspelt key" "mesh-ratelimit:varient" varient=B
bad_state=$(cd "$P" && pulumi stack export --stack e2e-bad | jq '.deployment.resources // [] | length')
# (Section 6 also finds the cluster listing exactly what it listed before any stack.)
check "bad configs created nothing (state of e2e-bad: $bad_state resources)" test "$bad_state" = 0

fi

# ================================================================ 5. kubectl apply --server-side of the same render
if want 5 && want 1; then
section "5. kubectl apply --server-side of the same render (variant A, current)"
npx tsx "$here/render-to-json.ts" "$W/render-A" "$W/render-A.json" > /dev/null
t0=$(now)
kubectl apply --server-side --field-manager=e2e-kubectl -f "$W/render-A.json" > "$W/kubectl-apply.log" 2>&1 && ok=1 || ok=0
T[kubectl_apply]=$(elapsed "$t0" "$(now)")
check "kubectl apply --server-side of the render in ${T[kubectl_apply]}s" test $ok = 1
if [[ $fake_nodes == 1 ]]; then
  rollout_ok=1
  for d in $(kubectl get deploy -n default -o name); do kubectl rollout status -n default "$d" --timeout=60s >/dev/null || rollout_ok=0; done
  check "kubectl: every Deployment rolled out" test $rollout_ok = 1
  T[kubectl_apply_rollout]=$(elapsed "$t0" "$(now)")
  echo "  kubectl apply + rollout status of every Deployment: ${T[kubectl_apply_rollout]}s"
fi
kubectl delete -f "$W/render-A.json" --wait=true > /dev/null 2>&1 || true
base=${T[kubectl_apply_rollout]:-${T[kubectl_apply]}}
ratio=$(awk -v a="${T[pulumi_up]}" -v b="$base" 'BEGIN{printf "%.1f", a/b}')
T[ratio_up]=$ratio
# The same comparison without waiting on either side: a stack with awaitRollout=false (the
# provider's skipAwait on workloads) against the bare kubectl apply.
new_stack e2e-nowait
pl config set awaitRollout false --stack e2e-nowait
t0=$(now)
pl up --yes --skip-preview --stack e2e-nowait > "$W/up-nowait.log" 2>&1 && ok=1 || ok=0
T[pulumi_up_nowait]=$(elapsed "$t0" "$(now)")
check "pulumi up without awaiting rollouts in ${T[pulumi_up_nowait]}s" test $ok = 1
pl stack export --stack e2e-nowait --file "$W/state-nowait.json" && STATES+=("$W/state-nowait.json")
pl destroy --yes --skip-preview --stack e2e-nowait > "$W/destroy-nowait.log" 2>&1 || fail "destroy of e2e-nowait"
T[ratio_nowait]=$(awk -v a="${T[pulumi_up_nowait]}" -v b="${T[kubectl_apply]}" 'BEGIN{printf "%.1f", a/b}')
echo "  pulumi up ${T[pulumi_up]}s vs kubectl apply$([[ $fake_nodes == 1 ]] && echo " + rollout status") ${base}s: ratio ${T[ratio_up]}"
echo "  pulumi up (no awaits) ${T[pulumi_up_nowait]}s vs kubectl apply ${T[kubectl_apply]}s: ratio ${T[ratio_nowait]}"
# The issue's goal is a ratio <= 2. It is not met (see docs/proof/e2e.md: node start-up and the provider's
# fixed await polling dominate at this size), so the ratio is reported, not asserted; what is
# asserted is a bound that catches a real regression such as a 10-minute await.
echo "MEASURED: pulumi-up/kubectl-apply ratio ${T[ratio_up]} (goal <= 2: $(awk -v r="${T[ratio_up]}" 'BEGIN{print (r <= 2.0) ? "met" : "NOT met"}'))"
check "pulumi up of the dev stack finishes within 120s (${T[pulumi_up]}s)" awk -v t="${T[pulumi_up]}" 'BEGIN{exit !(t <= 120)}'

fi

# ================================================================ 6. nothing left behind
section "6. nothing left behind: every stack's state, and a full listing of the cluster"
for st in "${STATES[@]}"; do
  check "gone: every object in $(basename "$st")" gone_from_state "$st" || sed -n '/FAIL/p' "$st.gone.txt"
done
# The pods and ReplicaSets of the kubectl comparison go with their Deployments, a moment later.
settled=0
for _ in $(seq 1 60); do
  full_listing > "$W/listing-after.txt"
  if diff -q "$W/listing-before.txt" "$W/listing-after.txt" >/dev/null; then settled=1; break; fi
  sleep 1
done
check "the cluster lists exactly the objects it listed before the first stack ($(wc -l < "$W/listing-before.txt") objects of every listable kind, in every namespace)" test $settled = 1 ||
  diff "$W/listing-before.txt" "$W/listing-after.txt" | head -30
check "the mesh ConfigMap is byte-for-byte as before the first stack" cmp "$W/mesh-before.json" <(mesh_data)

# ---------------------------------------------------------------- timings
section "timings (seconds)"
for k in cluster_up pulumi_up pulumi_update pulumi_destroy pulumi_up_seed pulumi_up_nowait kubectl_apply kubectl_apply_rollout ratio_up ratio_nowait; do
  [[ -n "${T[$k]:-}" ]] && printf '  %-22s %s\n' "$k" "${T[$k]}"
  [[ -n "${T[$k]:-}" && $k != ratio* ]] && timing_record "e2e-$k" run "${T[$k]}"
done
echo
if [[ $RANDOM_KIND == model ]]; then
  echo "MODEL: $MODEL_PASSED check(s) of scenario 0 passed with the Random provider MODEL standing in (tests/e2e/random-model); not counted as passes"
fi
for b in "${BLOCKED_PARTS[@]}"; do echo "BLOCKED: $b"; done
echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
