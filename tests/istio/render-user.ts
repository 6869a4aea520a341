/**
 * Renders a user's setup that is not bookinfo, for the istio tier's generator check
 * (tests/istio/xdscheck/user_gateway_test.go): a shop's own Gateway (port 80, pods app=shop-gateway,
 * namespace shop), VirtualService, Services and Deployments, plus what the package's GlobalRateLimit
 * creates for it from typed rules (evaluated under Pulumi's mocks). Writes <out>/all.yaml.
 *
 *   npx tsx tests/istio/render-user.ts <out dir>
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

const M = LimitUnit.Minute;
export const USER_RULES: RateLimitRuleArgs[] = [
    { name: "login-per-client", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: M },
    { name: "search", path: { prefix: "/search" }, requestsPerUnit: 100, unit: M },
    { name: "per-api-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: M },
    { name: "has-token", header: { name: "authorization" }, requestsPerUnit: 50, unit: M },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 300, unit: M },
    { name: "writes", path: { prefix: "/search" }, methods: ["POST", "DELETE"], requestsPerUnit: 10, unit: M },
    { name: "free-tier", query: { name: "tier", value: "free" }, requestsPerUnit: 20, unit: M, rateLimitHeaders: false },
    // One counter per api_key value under /api, and the untrusted-value guard's shared counter.
    { name: "per-query-key", path: { prefix: "/api" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 15, unit: M },
    { name: "checkout", route: { name: "checkout", virtualHost: "*:80" }, requestsPerUnit: 10, unit: M },
    // Client CIDRs on route partners: one counter per CIDR (two prefix lengths: two entries), and per address within one.
    {
        name: "partners-cidr",
        route: { name: "partners", virtualHost: "*:80" },
        clientCidr: { cidrs: ["10.0.0.0/8", "2001:db8::/32", "172.16.0.0/12"] },
        requestsPerUnit: 30,
        unit: M,
    },
    {
        name: "partners-per-address",
        route: { name: "partners", virtualHost: "*:80" },
        clientCidr: { cidr: "192.168.4.0/22", perAddress: true },
        requestsPerUnit: 5,
        unit: M,
    },
];

function app(name: string, port: number): K8sObject[] {
    const labels = { app: name };
    return [
        {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name, namespace: "shop" },
            spec: { selector: labels, ports: [{ name: "http", port, targetPort: port }] },
        },
        {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name, namespace: "shop" },
            spec: {
                selector: { matchLabels: labels },
                template: { metadata: { labels }, spec: { containers: [{ name, image: "example/shop", ports: [{ name: "http", containerPort: port }] }] } },
            },
        },
    ];
}

/** The shop's own objects (what the user already has). */
export const USER_OBJECTS: K8sObject[] = [
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "Gateway",
        metadata: { name: "shop-gw", namespace: "shop" },
        spec: { selector: { app: "shop-gateway" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
    },
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "shop", namespace: "shop" },
        spec: {
            hosts: ["*"],
            gateways: ["shop-gw"],
            http: [
                { name: "checkout", match: [{ uri: { prefix: "/checkout" } }], route: [{ destination: { host: "checkout", port: { number: 8080 } } }] },
                { name: "partners", match: [{ uri: { prefix: "/partners" } }], route: [{ destination: { host: "web", port: { number: 8080 } } }] },
                { name: "web", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "web", port: { number: 8080 } } }] },
            ],
        },
    },
    ...app("web", 8080),
    ...app("checkout", 8080),
];

export async function renderUserSetup(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                // The layout these checks were written for (route and virtual-host rate_limits, the
                // specification's filter names); the per-instance layout is checked by the many-teams scenario.
                filterLayout: FilterLayout.Shared,
                // One counter store: the checks of this render name the spec-shaped filters; the split is checked on the stack's render.
                counterStore: CounterStore.Single,
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: USER_RULES,
            });
        },
        "shop",
        "istio",
    );
    return [...USER_OBJECTS, ...objects];
}

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-user.ts <out dir>");
        process.exit(2);
    }
    renderUserSetup().then((objs) => {
        fs.mkdirSync(out, { recursive: true });
        fs.writeFileSync(path.join(out, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
        console.log(`${objs.length} objects written to ${path.join(out, "all.yaml")}`);
    });
}
