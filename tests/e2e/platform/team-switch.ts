/**
 * Prints, as JSON, the EnvoyFilter a team's GlobalRateLimit (namespace `e2e-team-b`) renders to
 * switch the platform's defaults off on `b.example.com:8080`, a host the platform assigns to no one,
 * renamed `e2e-team-b-early`: what the e2e tier (section 3g) applies before the platform's policy
 * exists, as a team deployed earlier would have. `--as-update` changes one annotation of it: an update,
 * which the policy then refuses to the team and admits to the platform's identity.
 */
import { planGlobalRateLimit } from "../../../components/global-ratelimit/plan";
import { LimitUnit } from "../../../builders/rule-args";

const update = process.argv.includes("--as-update");
const plan = planGlobalRateLimit({
    domain: "e2e-team-b",
    namespace: "e2e-team-b",
    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["b.example.com:8080"] },
    rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
});
if (plan.problems.length) throw new Error(plan.problems.map((p) => `${p.key}: ${p.problem}`).join("\n"));
const f = plan.filters.find((x) => JSON.stringify(x.spec).includes("typed_per_filter_config"));
if (!f) throw new Error("the team's plan renders no switch of the defaults");
const annotations = { "e2e.mesh-ratelimit/revision": update ? "2" : "1" };
const object = {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "e2e-team-b-early", namespace: "istio-system", annotations },
    spec: f.spec,
};
process.stdout.write(JSON.stringify(object) + "\n");
