/**
 * Renders the shop's gateway (tests/istio/render-user.ts's objects) with a GlobalRateLimit whose
 * rules have costs, in the per-instance layout, for the istio tier's cost check
 * (tests/istio/cost-check.ts reads what Istio's generator makes of it). Writes <out>/all.yaml.
 * With `--no-cost` the same rules without their costs: the negative control.
 *
 *   npx tsx tests/istio/render-cost.ts <out dir> [--no-cost]
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { CounterStore } from "../../builders/counter-stores";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { registerComponents } from "../../render/render";
import { USER_OBJECTS } from "./render-user";

export const COST_RULES: RateLimitRuleArgs[] = [
    { name: "bulk", path: { prefix: "/bulk" }, requestsPerUnit: 100, unit: LimitUnit.Hour, cost: { fixed: 40 } },
    // Per client: a request-header cost on a counter every client shares needs maxCost (its own entries' form).
    { name: "search-cost", path: { prefix: "/search" }, perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Hour, cost: { requestHeader: "x-cost" } },
    {
        name: "llm-tokens",
        path: { prefix: "/llm" },
        requestsPerUnit: 100_000,
        unit: LimitUnit.Month,
        cost: { responseHeader: "x-tokens-used", acceptSharedBudgetRisk: true },
    },
];

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-cost.ts <out dir> [--no-cost]");
        process.exit(2);
    }
    const rules = process.argv[3] === "--no-cost" ? COST_RULES.map(({ cost: _, ...r }) => r) : COST_RULES;
    registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                counterStore: CounterStore.Single,
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules,
            });
        },
        "shop",
        "istio",
    ).then(({ objects }) => {
        const objs = [...USER_OBJECTS, ...objects];
        fs.mkdirSync(out, { recursive: true });
        fs.writeFileSync(path.join(out, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
        console.log(`${objs.length} objects written to ${path.join(out, "all.yaml")}`);
    });
}
