/**
 * RateLimit-Policy (builders/policy-header.ts, GlobalRateLimit's plan): the policies published
 * before a client is refused, from the same rules as the limits; hidden and shadow limits never
 * published, no client data in the header.
 */
import { expect } from "chai";
import { RateLimitHeaders } from "../../builders/envoy-filters";
import { CounterStore } from "../../builders/counter-stores";
import { policyHeaderValue, policyItems } from "../../builders/policy-header";
import { GlobalLimitsInput, LimitUnit, PathKeyMode, RateLimitRuleArgs } from "../../builders/rule-args";
import { resolveCheckedLimits } from "../../components/global-ratelimit/limits-plan";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planLocalRateLimit } from "../../components/local-ratelimit/component";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { renderStack } from "../../render/render";

const M = LimitUnit.Minute;
/** The policy items of limits as given (planned, so resolved, first). */
const itemsOf = (input: GlobalLimitsInput, headers: RateLimitHeaders, route?: Parameters<typeof policyItems>[1]) =>
    policyItems(resolveCheckedLimits({ ...input, headersOn: headers === RateLimitHeaders.Draft03 }), route);
const RULES: RateLimitRuleArgs[] = [
    { name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: M },
    { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: LimitUnit.Hour, acceptEvictionRisk: true },
    { name: "flood-guard", requestsPerUnit: 1000, unit: LimitUnit.Second, rateLimitHeaders: false },
    { name: "beta", header: { name: "x-beta", value: "on" }, requestsPerUnit: 2, unit: M, shadow: true },
    { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 10, unit: M },
];
const PER_PATH = { paths: [{ path: "/cart", requestsPerUnit: 3, unit: M }], eachPath: { requestsPerUnit: 100, unit: M } };

describe("RateLimit-Policy: what a client is told before it is refused", () => {
    it("the virtual host: named paths, the rules on no route, each-path; quota and window in seconds", () => {
        expect(policyHeaderValue(itemsOf({ rules: RULES, perPath: PER_PATH }, RateLimitHeaders.Draft03))).to.equal(
            '"/cart";q=3;w=60, "login";q=5;w=60, "per-key";q=20;w=3600, "each-path";q=100;w=60',
        );
    });
    it("a route: only the rules placed on it", () => {
        expect(policyHeaderValue(itemsOf({ rules: RULES }, RateLimitHeaders.Draft03, { name: "checkout", virtualHost: "*:80" }))).to.equal(
            '"checkout";q=10;w=60',
        );
        expect(itemsOf({ rules: RULES }, RateLimitHeaders.Draft03, { name: "other", virtualHost: "*:80" })).to.deep.equal([]);
    });
    it("a hidden rule (rateLimitHeaders: false) and a shadow rule are never published", () => {
        const v = policyHeaderValue(itemsOf({ rules: RULES }, RateLimitHeaders.Draft03))!;
        expect(v).to.not.include("flood-guard").and.not.include("beta");
    });
    it("headers off: nothing, except a rule that switches them on", () => {
        expect(itemsOf({ rules: RULES, perPath: PER_PATH }, RateLimitHeaders.Off)).to.deep.equal([]);
        const on: RateLimitRuleArgs = { name: "public", requestsPerUnit: 9, unit: M, rateLimitHeaders: true };
        expect(policyHeaderValue(itemsOf({ rules: [...RULES, on] }, RateLimitHeaders.Off))).to.equal('"public";q=9;w=60');
    });
    it("no partition key: the per-client and per-key rules publish their quota, never an address or a key", () => {
        const v = policyHeaderValue(itemsOf({ rules: RULES }, RateLimitHeaders.Draft03))!;
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

describe("RateLimit-Policy and the X-RateLimit headers: the corner cases", () => {
    const gateway = { selector: { app: "gw" }, virtualHosts: ["a.example:80", "b.example:80"] };
    const policyPatches = (plan: ReturnType<typeof planGlobalRateLimit>) =>
        (plan.filters[0].spec.configPatches as any[])
            .filter((p) => p.patch.value.response_headers_to_add)
            .map((p) => [
                p.applyTo,
                p.match.routeConfiguration.vhost.name,
                p.match.routeConfiguration.vhost.route.name ?? "*",
                p.patch.value.response_headers_to_add[0].header.value,
            ]);

    it("a route rule for every host and one for a named host on the same route: each listed once per host", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway,
            rules: [
                { name: "api-all", route: { name: "api" }, requestsPerUnit: 5, unit: M },
                { name: "api-a", route: { name: "api", virtualHost: "a.example:80" }, requestsPerUnit: 2, unit: M },
            ],
        });
        expect(plan.problems).to.deep.equal([]);
        expect(policyPatches(plan).filter((p) => p[0] === "HTTP_ROUTE")).to.deep.equal([
            ["HTTP_ROUTE", "a.example:80", "api", '"api-all";q=5;w=60, "api-a";q=2;w=60'],
            ["HTTP_ROUTE", "b.example:80", "api", '"api-all";q=5;w=60'],
        ]);
    });

    it("literal path key with route rules: no host-wide policy (a route's own rules replace the host's), the route's own only", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway,
            pathKey: PathKeyMode.Literal,
            perPath: PER_PATH,
            rules: [{ name: "checkout", route: { name: "checkout" }, requestsPerUnit: 10, unit: M }],
        });
        expect(policyPatches(plan).map((p) => p[0])).to.deep.equal(["HTTP_ROUTE", "HTTP_ROUTE"]);
        // Negative control: the default path key publishes the host's too.
        const urlPath = planGlobalRateLimit({
            domain: "shop",
            gateway,
            perPath: PER_PATH,
            rules: [{ name: "checkout", route: { name: "checkout" }, requestsPerUnit: 10, unit: M }],
        });
        expect(policyPatches(urlPath).map((p) => p[0])).to.deep.equal(["VIRTUAL_HOST", "VIRTUAL_HOST", "HTTP_ROUTE", "HTTP_ROUTE"]);
    });

    it("a rule's option is written only where it differs from the filter; the pre-limit's copies carry none", () => {
        const rules: RateLimitRuleArgs[] = [
            { name: "shown", requestsPerUnit: 5, unit: M, rateLimitHeaders: true },
            { name: "hidden", requestsPerUnit: 7, unit: M, rateLimitHeaders: false },
            { name: "plain", requestsPerUnit: 9, unit: M },
        ];
        const on = planGlobalRateLimit({ domain: "shop", gateway, rules });
        const options = (p: ReturnType<typeof planGlobalRateLimit>) => p.compiled.vhostRateLimits.map((e) => e.x_ratelimit_option ?? "-");
        expect(options(on)).to.deep.equal(["-", "OFF", "-"]);
        const off = planGlobalRateLimit({ domain: "shop", gateway, rules, rateLimitHeaders: RateLimitHeaders.Off });
        expect(options(off)).to.deep.equal(["DRAFT_VERSION_03", "-", "-"]);
        // The per-instance pre-limit gets its own copy of the entries: without the option, or the
        // local filter would add its own X-RateLimit headers (twice the limit) for "shown".
        const pre = JSON.stringify(
            (off.filters[0].spec.configPatches as any[]).filter((p) =>
                String(p.patch.value.typed_per_filter_config ? JSON.stringify(p.patch.value) : "").includes("local_ratelimit"),
            ),
        );
        expect(pre).to.include('"rate_limits"').and.not.include("x_ratelimit_option");
    });

    it("with the counters split (a per-value rule beside them), a rule's option is written against the filter's headers as with one store", () => {
        const rules: RateLimitRuleArgs[] = [
            { name: "shown", path: { prefix: "/orders" }, requestsPerUnit: 5, unit: M, rateLimitHeaders: true },
            { name: "hidden", path: { prefix: "/cart" }, requestsPerUnit: 7, unit: M, rateLimitHeaders: false },
            { name: "per-client", perClientAddress: true, requestsPerUnit: 100, unit: M },
        ];
        const count = (text: string, option: string) => text.split(`"x_ratelimit_option":"${option}"`).length - 1;
        for (const rateLimitHeaders of [RateLimitHeaders.Off, RateLimitHeaders.Draft03]) {
            const split = planGlobalRateLimit({ domain: "shop", gateway, rules, rateLimitHeaders, counterStore: CounterStore.Split });
            const single = planGlobalRateLimit({ domain: "shop", gateway, rules, rateLimitHeaders, counterStore: CounterStore.Single });
            expect(split.perValue, "the counters are split").to.not.equal(undefined);
            const [s, o] = [JSON.stringify(split.filters), JSON.stringify(single.filters)];
            // Off: only "shown" asks for headers; Draft03: only "hidden" turns them off.
            const [wanted, option] = rateLimitHeaders === RateLimitHeaders.Off ? ["shown", "DRAFT_VERSION_03"] : ["hidden", "OFF"];
            expect(count(o, option), `${rateLimitHeaders}: ${wanted}'s option with one store`).to.be.greaterThan(0);
            expect(count(s, option), `${rateLimitHeaders}: ${wanted}'s option with the counters split`).to.equal(count(o, option));
        }
    });

    it("shadow: the service's shadow mode publishes nothing and adds no headers by default; a shadow bucket adds none", () => {
        const plan = planGlobalRateLimit({ domain: "shop", gateway, perPath: PER_PATH, service: { shadowMode: true } });
        const text = JSON.stringify(plan.filters);
        expect(text).to.not.include("ratelimit-policy").and.not.include("enable_x_ratelimit_headers");
        const bucket = planLocalRateLimit("orders", { selector: { app: "orders" }, port: 8080, bucket: 5, namespace: "shop", shadow: true });
        expect(JSON.stringify(bucket.spec)).to.not.include("enable_x_ratelimit_headers");
        // Negative control: enforced, the bucket tells clients.
        const enforced = planLocalRateLimit("orders", { selector: { app: "orders" }, port: 8080, bucket: 5, namespace: "shop" });
        expect(JSON.stringify(enforced.spec)).to.include('"enable_x_ratelimit_headers":"DRAFT_VERSION_03"');
    });
});
