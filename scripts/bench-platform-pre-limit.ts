/**
 * Figure (not a test): how many requests of a flood reach the platform's service past the
 * overrides' pre-limit, on the gateway MODEL of Envoy's local bucket (gateway-model/pre-limit-model.ts).
 * The platform's overrides: a fixed ceiling of 6 a minute and a per-client rule of 100 a minute;
 * 10,000 requests in 10 s from 200 client addresses, spread round-robin over 1 and 3 gateway pods.
 * Prints the requests the pre-limit passes and the bound pods × (2L + L·τ/T).
 *
 *   npx tsx scripts/bench-platform-pre-limit.ts
 */
import { LimitUnit } from "../builders/rule-args";
import { planPlatformRateLimit } from "../components/platform-ratelimit/plan";
import { descriptorFor } from "../gateway-model/evaluate";
import { Entry } from "../gateway-model/model";
import { PreLimitPod, parseLocalConfig } from "../gateway-model/pre-limit-model";

const L = 6;
const plan = planPlatformRateLimit({
    gateway: { selector: { istio: "ingressgateway" } },
    namespace: "platform",
    overrides: {
        rules: [
            { name: "ceiling", requestsPerUnit: L, unit: LimitUnit.Minute },
            { name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Minute },
        ],
    },
});
const patch = (plan.filters[0]!.spec.configPatches as any[]).find((p) => String(p.patch.value.name).includes("local_ratelimit"));
const cfg = parseLocalConfig("overrides' pre-limit", plan.filters[0]!.name, patch.patch.value.typed_config);
for (const pods of [1, 3]) {
    const gateway = Array.from({ length: pods }, () => new PreLimitPod(cfg, 0));
    let passed = 0;
    const requests = 10000;
    for (let i = 0; i < requests; i++) {
        const client = `10.0.${i % 200}.1`;
        const descriptors = (cfg.rateLimits ?? [])
            .map((rl) => descriptorFor(rl, { ":path": "/", ":method": "GET" }, client))
            .filter((d): d is Entry[] => d !== undefined);
        if (gateway[i % pods]!.decide(descriptors, i / 1000).allowed) passed++;
    }
    console.log(
        `${pods} pod(s): ${requests} requests in 10 s, ${passed} passed to the service (bound ${pods} × (2L + L·10/60) = ${Math.floor(pods * (2 * L + (L * 10) / 60))})`,
    );
}
