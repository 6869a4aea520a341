/**
 * Renders the shop's gateway (tests/istio/render-user.ts) with GlobalRateLimit rules keyed by a
 * verified identity, for the istio tier's generator check (tests/istio/xdscheck/identity_test.go).
 * `--control` renders the old hand-made recipe instead: a RequestAuthentication copying `sub` into
 * `x-user` (outputClaimToHeaders) and a per-value header rule on `x-user`, whose descriptor reads a
 * request header. `--default` renders the identity rules (and a fixed rule) in the component's
 * default layout: a filter of its own, the per-value counters apart. Writes <out>/all.yaml.
 *
 *   npx tsx tests/istio/render-identity.ts <out dir> [--control | --default]
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { CounterStore } from "../../builders/counter-stores";
import { FilterLayout } from "../../builders/envoy-filters";
import { MissingIdentity } from "../../builders/identity-args";
import { LimitUnit, MissingHeader, RateLimitRuleArgs } from "../../builders/rule-args";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";
import { USER_OBJECTS } from "./render-user";

export const ISSUER = "https://auth.shop.example.com";
export const JWKS = "https://auth.shop.example.com/.well-known/jwks.json";
const M = LimitUnit.Minute;
const jwt = { issuer: ISSUER, jwksUri: JWKS };
const IDENTITY_RULES: RateLimitRuleArgs[] = [
    { name: "per-user", path: { prefix: "/checkout" }, identity: { jwt }, requestsPerUnit: 10, unit: M },
    { name: "account-per-user", path: { prefix: "/account" }, identity: { jwt, missing: MissingIdentity.Refuse }, requestsPerUnit: 100, unit: M },
];
/** The recipe the field replaces: the claim copied into a header, the rule keyed by that header. */
const RECIPE_RULES: RateLimitRuleArgs[] = [
    {
        name: "per-user",
        path: { prefix: "/checkout" },
        header: { name: "x-user", perValue: true, whenMissing: MissingHeader.Refuse },
        requestsPerUnit: 10,
        unit: M,
    },
];
const RECIPE_OBJECTS: K8sObject[] = [
    {
        apiVersion: "security.istio.io/v1",
        kind: "RequestAuthentication",
        metadata: { name: "shop-jwt", namespace: "shop" },
        spec: { selector: { matchLabels: { app: "shop-gateway" } }, jwtRules: [{ ...jwt, outputClaimToHeaders: [{ header: "x-user", claim: "sub" }] }] },
    },
];

export async function renderIdentitySetup(control: boolean, defaultLayout = false): Promise<K8sObject[]> {
    const layout = defaultLayout ? {} : { filterLayout: FilterLayout.Shared, counterStore: CounterStore.Single };
    const fixed: RateLimitRuleArgs[] = defaultLayout ? [{ name: "search", path: { prefix: "/search" }, requestsPerUnit: 100, unit: M }] : [];
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                // The spec-shaped filter names the user gateway's checks read (render-user.ts), unless --default.
                ...layout,
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: control ? RECIPE_RULES : [...IDENTITY_RULES, ...fixed],
            });
        },
        "shop",
        "istio",
    );
    return [...USER_OBJECTS, ...(control ? RECIPE_OBJECTS : []), ...objects];
}

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-identity.ts <out dir> [--control | --default]");
        process.exit(2);
    }
    renderIdentitySetup(process.argv.includes("--control"), process.argv.includes("--default")).then((objs) => {
        fs.mkdirSync(out, { recursive: true });
        fs.writeFileSync(path.join(out, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
        console.log(`${objs.length} objects written to ${path.join(out, "all.yaml")}`);
    });
}
