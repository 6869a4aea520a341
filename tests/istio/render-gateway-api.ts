/**
 * Renders the package's GlobalRateLimit aimed at a Kubernetes Gateway API Gateway by name
 * (`gateway.gatewayApiName: "shop-gw"` in namespace `shop`), for the istio tier's generator check
 * tests/istio/xdscheck/gateway_api_test.go. The EnvoyFilters then carry
 * `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: shop-gw}]` and no
 * workloadSelector. The routing of the gateways (virtual host `shop.example.com:80`, routes
 * `checkout` and `web`) and the gateway pods are written by the Go test, not here.
 *
 * Writes <out>/all.yaml (everything the component creates) and one file per EnvoyFilter,
 * envoyfilter_<namespace>_<name>.yaml, for `istioctl validate -f`.
 *
 *   npx tsx tests/istio/render-gateway-api.ts <out dir>
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { CounterStore } from "../../builders/counter-stores";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";

/** The Gateway API Gateway the limits target, its namespace and the one virtual host it serves. */
export const GWAPI_GATEWAY = "shop-gw";
export const GWAPI_NAMESPACE = "shop";
export const GWAPI_VHOST = "shop.example.com:80";

const M = LimitUnit.Minute;
/** One virtual-host rule and one route rule (route `checkout` of the Go test's VirtualService). */
export const GWAPI_RULES: RateLimitRuleArgs[] = [
    { name: "per-client", perClientAddress: true, requestsPerUnit: 300, unit: M },
    { name: "checkout", route: { name: "checkout", virtualHost: GWAPI_VHOST }, requestsPerUnit: 10, unit: M },
];

export async function renderGatewayApiSetup(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-gwapi-limits", {
                domain: "shop",
                // The layout these checks were written for (route and virtual-host rate_limits, the
                // specification's filter names); the per-instance layout is checked by the many-teams scenario.
                filterLayout: FilterLayout.Shared,
                // One counter store: the checks of this render name the spec-shaped filters; the split is checked on the stack's render.
                counterStore: CounterStore.Single,
                gateway: { gatewayApiName: GWAPI_GATEWAY, namespace: GWAPI_NAMESPACE, virtualHosts: [GWAPI_VHOST] },
                namespace: GWAPI_NAMESPACE,
                rules: GWAPI_RULES,
            });
        },
        "shop",
        "gateway-api",
    );
    return objects;
}

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-gateway-api.ts <out dir>");
        process.exit(2);
    }
    renderGatewayApiSetup().then(
        (objs) => {
            fs.mkdirSync(out, { recursive: true });
            const text = (o: K8sObject) => stringify(o, { lineWidth: 0, version: "1.1" });
            fs.writeFileSync(path.join(out, "all.yaml"), objs.map(text).join("---\n"));
            let filters = 0;
            for (const o of objs) {
                if (o.kind !== "EnvoyFilter") continue;
                const meta = (o.metadata ?? {}) as { name?: string; namespace?: string };
                fs.writeFileSync(path.join(out, `envoyfilter_${meta.namespace ?? "default"}_${meta.name}.yaml`), text(o));
                filters++;
            }
            console.log(`${objs.length} objects (${filters} EnvoyFilters) written to ${out}`);
        },
        (e) => {
            console.error(e instanceof Error ? e.message : e);
            process.exit(1);
        },
    );
}
