/**
 * RateLimit-Policy (builders/policy-header.ts, GlobalRateLimit's plan): the policies published
 * before a client is refused, from the same rules as the limits; hidden and shadow limits never
 * published, no client data in the header.
 */
import { expect } from "chai";
import { RateLimitHeaders } from "../../builders/envoy-filters";
import { policyHeaderValue, policyItems } from "../../builders/policy-header";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { planGlobalRateLimit } from "../../components/global-ratelimit-plan";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { renderStack } from "../../render/render";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: M },
    { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: LimitUnit.Hour },
    { name: "flood-guard", requestsPerUnit: 1000, unit: LimitUnit.Second, rateLimitHeaders: false },
    { name: "beta", header: { name: "x-beta", value: "on" }, requestsPerUnit: 2, unit: M, shadow: true },
    { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 10, unit: M },
];
const PER_PATH = { paths: [{ path: "/cart", requestsPerUnit: 3, unit: M }], eachPath: { requestsPerUnit: 100, unit: M } };

describe("RateLimit-Policy: what a client is told before it is refused", () => {
    it("the virtual host: named paths, the rules on no route, each-path; quota and window in seconds", () => {
        expect(policyHeaderValue(policyItems({ rules: RULES, perPath: PER_PATH }, RateLimitHeaders.Draft03))).to.equal(
            '"/cart";q=3;w=60, "login";q=5;w=60, "per-key";q=20;w=3600, "each-path";q=100;w=60',
        );
    });
    it("a route: only the rules placed on it", () => {
        expect(policyHeaderValue(policyItems({ rules: RULES }, RateLimitHeaders.Draft03, { name: "checkout", virtualHost: "*:80" }))).to.equal(
            '"checkout";q=10;w=60',
        );
        expect(policyItems({ rules: RULES }, RateLimitHeaders.Draft03, { name: "other", virtualHost: "*:80" })).to.deep.equal([]);
    });
    it("a hidden rule (rateLimitHeaders: false) and a shadow rule are never published", () => {
        const v = policyHeaderValue(policyItems({ rules: RULES }, RateLimitHeaders.Draft03))!;
        expect(v).to.not.include("flood-guard").and.not.include("beta");
    });
    it("headers off: nothing, except a rule that switches them on", () => {
        expect(policyItems({ rules: RULES, perPath: PER_PATH }, RateLimitHeaders.Off)).to.deep.equal([]);
        const on: RateLimitRuleArgs = { name: "public", requestsPerUnit: 9, unit: M, rateLimitHeaders: true };
        expect(policyHeaderValue(policyItems({ rules: [...RULES, on] }, RateLimitHeaders.Off))).to.equal('"public";q=9;w=60');
    });
    it("no partition key: the per-client and per-key rules publish their quota, never an address or a key", () => {
        const v = policyHeaderValue(policyItems({ rules: RULES }, RateLimitHeaders.Draft03))!;
        expect(v).to.not.match(/;pk=/).and.not.include("x-api-key").and.not.include("remote_address");
    });
    it("GlobalRateLimit puts it on the virtual hosts and on the rule's route, in the HTTP filter's EnvoyFilter", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
            rules: RULES,
            perPath: PER_PATH,
        });
        expect(plan.problems).to.deep.equal([]);
        const patches = (plan.filters[0].spec.configPatches as any[]).filter((p) => p.patch.value.response_headers_to_add);
        expect(patches.map((p) => [p.applyTo, p.match.routeConfiguration.vhost.name, p.match.routeConfiguration.vhost.route.name ?? "*"])).to.deep.equal([
            ["VIRTUAL_HOST", "shop.example.com:80", "*"],
            ["HTTP_ROUTE", "shop.example.com:80", "checkout"],
        ]);
        expect(patches[1].patch.value.response_headers_to_add).to.deep.equal([
            { header: { key: "ratelimit-policy", value: '"checkout";q=10;w=60' }, append_action: "APPEND_IF_EXISTS_OR_ADD" },
        ]);
    });
    it("rateLimitHeaders off on GlobalRateLimit: no RateLimit-Policy patch and no X-RateLimit headers", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
            rules: RULES,
            rateLimitHeaders: RateLimitHeaders.Off,
        });
        const text = JSON.stringify(plan.filters);
        expect(text).to.not.include("ratelimit-policy").and.not.include("enable_x_ratelimit_headers");
    });
});

describe("RateLimit-Policy through the gateway MODEL: what explain prints", () => {
    it("variant A: the api route's own policy, then the virtual host's, in Envoy's order; a page gets the host's only", async () => {
        const m = gatewayModel((await renderStack({ variant: "A", apiProfile: "current", overrides: {} })) as any[]);
        // From the specification's presets: /productpage 1/min, the catch-all 100/min, api 2/min.
        const host = '"/productpage";q=1;w=60, "each-path";q=100;w=60';
        expect(explainWith(m, "/api/v1/products/3").rateLimitPolicy).to.deep.equal(['"api";q=2;w=60', host]);
        expect(explainWith(m, "/login").rateLimitPolicy).to.deep.equal([host]);
        // No route: Envoy answers 404 from no route, so no route or host header is added.
        expect(explainWith(m, "/nope").rateLimitPolicy).to.equal(undefined);
    });
});
