/** Shared inputs of the platform tests: the example of a platform team's limits. */
import { LimitUnit } from "../../builders/rule-args";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit-args";

const M = LimitUnit.Minute;
export const GW = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };

/** The example: 1,000 a minute per client and a catch-all per path by default, 10,000 a minute per client on top. */
export const PLATFORM: PlatformRateLimitArgs = {
    gateway: GW,
    namespace: "platform",
    defaults: {
        rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 1000, unit: M }],
        perPath: { eachPath: { requestsPerUnit: 600, unit: M } },
    },
    overrides: { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 10000, unit: M }] },
};
