# shellcheck shell=bash
# Section 3h of the e2e tier (sourced by tests/e2e/run.sh, which defines pl, new_stack, render,
# compare, check, pass, fail, STATES and $W): the ambient stack (meshMode ambient,
# docs/guide/ambient.md) on the real engine. `pulumi up` of variant A with localBucketEnabled false
# and no managed API; every rendered object present with the same content; the Gateway API Gateway
# (the ambient ingress) the stack's; every EnvoyFilter aimed at it by targetRefs alone; every
# Deployment's pod template and every pod enrolled (istio.io/dataplane-mode ambient,
# sidecar.istio.io/inject "false", no sidecar container); `pulumi destroy`; then nothing of the
# render left (section 6 lists the whole cluster against its listing before any stack).
# Controls: the enrolment and targeting checks fail on the sidecar stack's render of the same config.

section "3h. the ambient stack (meshMode ambient): up, its objects enrolled and aimed at its Gateway, destroy"
AMB=e2e-ambient
new_stack "$AMB"
pl config set meshMode ambient --stack "$AMB"
pl config set localBucketEnabled false --stack "$AMB"
pl config set managedApi false --stack "$AMB"
amb_id=$(stack_id "$AMB")
amb_owner=organization/mesh-ratelimit/$AMB@$amb_id
render "$W/render-ambient" --stack "$AMB" --set stackId="$amb_id" --variant A --profile current \
  --set meshMode=ambient --set localBucketEnabled=false --set managedApi=false --set redisPasswordSecret=$USER_SECRET
render "$W/render-ambient-sidecar" --stack "$AMB" --set stackId="$amb_id" --variant A --profile current \
  --set meshMode=sidecar --set localBucketEnabled=true --set managedApi=false --set redisPasswordSecret=$USER_SECRET
npx tsx "$here/render-to-json.ts" "$W/render-ambient" "$W/render-ambient.json" > /dev/null
npx tsx "$here/render-to-json.ts" "$W/render-ambient-sidecar" "$W/render-ambient-sidecar.json" > /dev/null

# enrolled <list.json>: at least 5 Deployments (or Pods, their templates' labels), every one enrolled
# in ambient mode and none with a sidecar container.
enrolled() {
  jq -e '[.items[] | select(.kind == "Deployment" or .kind == "Pod")
          | (if .kind == "Deployment" then .spec.template else . end)
          | .metadata.labels["istio.io/dataplane-mode"] == "ambient" and .metadata.labels["sidecar.istio.io/inject"] == "false"
            and ([.spec.containers[].name] | index("istio-proxy") | not)]
         | length >= 5 and all' "$1" >/dev/null
}
# aimed <list.json> <gateway>: at least 3 EnvoyFilters, every one aimed at the Gateway API Gateway
# <gateway> by targetRefs and nothing else, none patching a sidecar (no local bucket).
aimed() {
  jq -e --arg g "$2" '[.items[] | select(.kind == "EnvoyFilter")
          | .spec.targetRefs == [{group: "gateway.networking.k8s.io", kind: "Gateway", name: $g}]
            and (.spec | has("workloadSelector") | not)
            and ([.spec.configPatches[].match.context] | all(. == "GATEWAY"))]
         | length >= 3 and all' "$1" >/dev/null
}
check "3h: the ambient render is enrolled and aimed at Gateway bookinfo-gateway (what the live checks compare with)" \
  bash -c "$(declare -f enrolled aimed); enrolled '$W/render-ambient.json' && aimed '$W/render-ambient.json' bookinfo-gateway"
check "3h: control: the enrolment check fails on the sidecar render of the same stack" \
  bash -c "$(declare -f enrolled); ! enrolled '$W/render-ambient-sidecar.json'"
check "3h: control: the targeting check fails on the sidecar render of the same stack" \
  bash -c "$(declare -f aimed); ! aimed '$W/render-ambient-sidecar.json' bookinfo-gateway"

t0=$(now)
if pl up --yes --skip-preview --stack "$AMB" > "$W/up-ambient.log" 2>&1; then
  pass "3h: pulumi up of the ambient stack (variant A, localBucketEnabled false, managedApi false) in $(elapsed "$t0" "$(now)")s"
else
  fail "3h: pulumi up of the ambient stack"; tail -40 "$W/up-ambient.log"
fi
grep -E "Resources:|[0-9]+ created" "$W/up-ambient.log" | sed 's/^/    /' || true
pl stack export --stack "$AMB" --file "$W/state-ambient.json"
STATES+=("$W/state-ambient.json")
compare present "$W/render-ambient" --state "$W/state-ambient.json" > "$W/compare-ambient.txt" 2>&1 &&
  pass "3h: every rendered object exists with the same content ($(tail -1 "$W/compare-ambient.txt"))" ||
  { fail "3h: live objects differ from the ambient render"; grep -v "^  ok" "$W/compare-ambient.txt" | head -40; }
check "3h: Gateway API Gateway istio-system/bookinfo-gateway (class istio, listener http 8080) is the stack's ($amb_owner)" bash -c \
  "kubectl get gateways.gateway.networking.k8s.io bookinfo-gateway -n istio-system -o json | jq -e --arg o '$amb_owner' '.spec.gatewayClassName == \"istio\" and ([.spec.listeners[] | \"\(.name) \(.port)\"] == [\"http 8080\"]) and .metadata.annotations[\"mesh-ratelimit.io/owner\"] == \$o' >/dev/null"
kubectl get deploy -A -l app.kubernetes.io/part-of=mesh-ratelimit -o json > "$W/ambient-deploy.json"
kubectl get pods -A -l app.kubernetes.io/part-of=mesh-ratelimit -o json > "$W/ambient-pods.json"
kubectl get envoyfilters.networking.istio.io -A -o json |
  jq --arg o "$amb_owner" '{items: [.items[] | select(.metadata.annotations["mesh-ratelimit.io/owner"] == $o)]}' > "$W/ambient-filters.json"
check "3h: every Deployment of the stack ($(jq '.items | length' "$W/ambient-deploy.json")) has the ambient enrolment in its pod template" enrolled "$W/ambient-deploy.json"
if [[ $fake_nodes == 1 ]]; then
  check "3h: every pod of the stack ($(jq '.items | length' "$W/ambient-pods.json")) carries the enrolment labels, no sidecar container" enrolled "$W/ambient-pods.json"
  check "3h: Deployments Ready (kwok fake node)" bash -c \
    "jq -e '[.items[] | (.status.readyReplicas // 0) == .spec.replicas] | length > 5 and all' '$W/ambient-deploy.json' >/dev/null"
fi
check "3h: every EnvoyFilter of the stack ($(jq '.items | length' "$W/ambient-filters.json")) is aimed at Gateway bookinfo-gateway by targetRefs alone, none patches a sidecar" \
  aimed "$W/ambient-filters.json" bookinfo-gateway
check "3h: the mesh ConfigMap untouched" cmp -s "$W/mesh-before.json" <(mesh_data)
t0=$(now)
pl destroy --yes --skip-preview --stack "$AMB" > "$W/destroy-ambient.log" 2>&1 && pass "3h: pulumi destroy of the ambient stack in $(elapsed "$t0" "$(now)")s" ||
  { fail "3h: pulumi destroy of the ambient stack"; tail -30 "$W/destroy-ambient.log"; }
check "3h: every object in the ambient stack's state is gone (judged from the state)" gone_from_state "$W/state-ambient.json"
compare absent "$W/render-ambient" > "$W/absent-ambient.txt" 2>&1 && pass "3h: no object of the ambient render remains" ||
  { fail "3h: objects of the ambient render remain"; grep FAIL "$W/absent-ambient.txt" | head -20; }
check "3h: no Gateway API Gateway left in any namespace" bash -c "test -z \"\$(kubectl get gateways.gateway.networking.k8s.io -A -o name 2>/dev/null)\""
