/**
 * Typed rules → Envoy actions and service config (builders/rules.ts), and a user's gateway (not
 * bookinfo) through the gateway MODEL: requests hit the config entries the rules name, queries do
 * not escape, a per-value header rule counts requests without the header in one shared counter.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { stringify } from "yaml";
import { LimitUnit, MissingHeader, PathKeyMode, PathSpellings, RateLimitRuleArgs } from "../../builders/rule-args";
import { escapeRe2, pathRegex } from "../../builders/rules";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { GlobalRateLimitPlan, planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { explainWith } from "../../gateway-model/explain";
import { GatewayModel } from "../../gateway-model/model";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { compileFullMatch } from "../../lib/formats";
import { K8sObject } from "../../lib/k8s-object";
import { beforeAllTests } from "./helpers";

const M = LimitUnit.Minute;

describe("rules: path regexes match the path without its query", () => {
    const cases: [string, Parameters<typeof pathRegex>[0], string[], string[]][] = [
        ["exact, every spelling", { exact: "/login" }, ["/login", "/login?x=1", "/login?", "/login/", "/Login"], ["/loginx", "/x/login", "/login/x"]],
        [
            "exact, this spelling only",
            { exact: "/login", spellings: PathSpellings.Exact },
            ["/login", "/login?x=1", "/login?"],
            ["/login/", "/loginx", "/x/login", "/Login"],
        ],
        ["exact with regex characters", { exact: "/a.b+(c)" }, ["/a.b+(c)", "/a.b+(c)?q"], ["/aXb+(c)", "/a.bb(c)"]],
        ["prefix", { prefix: "/api" }, ["/api", "/api/", "/api/v1/x", "/api?q=1"], ["/apiv2", "/ap", "/x/api"]],
        ["prefix ending in /", { prefix: "/static/" }, ["/static/", "/static/a.css", "/static/?v=1"], ["/static", "/staticx/"]],
        ["regex", { regex: "/items/[0-9]+" }, ["/items/1", "/items/42?sort=asc"], ["/items/", "/items/1/x", "/items/a"]],
    ];
    for (const [name, m, yes, no] of cases) {
        it(name, () => {
            const re = compileFullMatch(pathRegex(m, PathKeyMode.UrlPath));
            for (const p of yes) expect(re.test(p), p).to.equal(true);
            for (const p of no) expect(re.test(p), p).to.equal(false);
        });
    }
    it("literal mode matches the path as written: a query escapes an exact rule", () => {
        const re = compileFullMatch(pathRegex({ exact: "/login" }, PathKeyMode.Literal));
        expect(re.test("/login")).to.equal(true);
        expect(re.test("/login?x=1")).to.equal(false);
    });
    it("escapeRe2 escapes every RE2 metacharacter", () => {
        const s = "\\^$.|?*+()[]{}";
        expect(compileFullMatch(escapeRe2(s)).test(s)).to.equal(true);
    });
});

describe("rules: table of rules → actions and config entries", () => {
    // A per-value header rule sends its value only when no underscored spelling of the name is
    // present (x_api_key), and the value is one value (no comma), valid UTF-8 without control
    // characters, at most 256 bytes. Every other present value sends the rule's name and
    // untrusted_value=shared (one entry per way: a bad value, a long one, an underscored name); a
    // missing header sends missing_value=shared: both with the client's prefix (/32, /64), so one
    // client fills only its own fallback counter.
    const CHARS = "[\\x{20}-\\x{2B}\\x{2D}-\\x{7E}\\x{A0}-\\x{D7FF}\\x{E000}-\\x{10FFFF}]*";
    const LONG = "\\C{257}\\C*";
    const CLIENT = { masked_remote_address: { v4_prefix_mask_len: 32, v6_prefix_mask_len: 64 } };
    // Every spelling with '_' for some '-' (CGI maps both to HTTP_X_API_KEY).
    const noUnderscore = ["x_api-key", "x-api_key", "x_api_key"].map((name) => ({ name, present_match: true, invert_match: true }));
    const re = (regex: string, invert = false) => ({
        name: "x-api-key",
        safe_regex_match: { google_re2: {}, regex },
        ...(invert ? { invert_match: true } : {}),
    });
    const named = (rule: string, headers: unknown[]) => ({ header_value_match: { descriptor_key: "rule", descriptor_value: rule, headers } });
    const keyed = (rule: string) => named(rule, [...noUnderscore, re(CHARS), re(LONG, true)]);
    const UNTRUSTED = { generic_key: { descriptor_key: "untrusted_value", descriptor_value: "shared" } };
    const MISSING = { generic_key: { descriptor_key: "missing_value", descriptor_value: "shared" } };
    /** The fallback entries: bad value, long value, underscored name, (missing); each per client unless refusing. */
    const fallbacks = (rule: string, o: { missing: boolean; client: boolean }) => {
        const c = o.client ? [CLIENT] : [];
        return [
            [named(rule, [...noUnderscore, re(CHARS, true)]), UNTRUSTED, ...c],
            [named(rule, [...noUnderscore, re(CHARS), re(LONG)]), UNTRUSTED, ...c],
            [
                { generic_key: { descriptor_key: "rule", descriptor_value: rule } },
                { header_value_match: { descriptor_key: "untrusted_value", descriptor_value: "shared", expect_match: false, headers: noUnderscore } },
                ...c,
            ],
            ...(o.missing ? [[named(rule, [...noUnderscore, { name: "x-api-key", present_match: true, invert_match: true }]), MISSING, ...c]] : []),
        ];
    };
    const hour = (n: number) => ({ rate_limit: { unit: "hour", requests_per_unit: n } });
    const perClient = (limit: object) => ({ descriptors: [{ key: "masked_remote_address", ...limit }] });
    const table: { rule: RateLimitRuleArgs; actions: unknown[]; config: unknown; option?: string; guard?: unknown[][] }[] = [
        {
            rule: { name: "login", path: { exact: "/login", spellings: PathSpellings.Exact }, requestsPerUnit: 5, unit: M },
            actions: [
                {
                    header_value_match: {
                        descriptor_key: "rule",
                        descriptor_value: "login",
                        headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: "(?:/login)(?:\\?.*)?" } }],
                    },
                },
            ],
            config: { key: "rule", value: "login", rate_limit: { unit: "minute", requests_per_unit: 5 } },
        },
        {
            rule: { name: "beta", header: { name: "x-beta", value: "1" }, requestsPerUnit: 3, unit: LimitUnit.Second, shadow: true },
            actions: [
                { header_value_match: { descriptor_key: "rule", descriptor_value: "beta", headers: [{ name: "x-beta", string_match: { exact: "1" } }] } },
            ],
            config: { key: "rule", value: "beta", rate_limit: { unit: "second", requests_per_unit: 3 }, shadow_mode: true },
            // A shadow rule is kept out of the clients' X-RateLimit headers by default.
            option: "OFF",
        },
        {
            rule: { name: "has-token", header: { name: "authorization" }, requestsPerUnit: 50, unit: M },
            actions: [
                { header_value_match: { descriptor_key: "rule", descriptor_value: "has-token", headers: [{ name: "authorization", present_match: true }] } },
            ],
            config: { key: "rule", value: "has-token", rate_limit: { unit: "minute", requests_per_unit: 50 } },
        },
        {
            // Requests without the header share a missing counter per client, at the rule's limit.
            rule: { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 10, unit: LimitUnit.Hour },
            actions: [keyed("per-key"), { request_headers: { header_name: "x-api-key", descriptor_key: "x-api-key" } }],
            guard: fallbacks("per-key", { missing: true, client: true }),
            config: {
                key: "rule",
                value: "per-key",
                descriptors: [
                    { key: "x-api-key", ...hour(10) },
                    { key: "untrusted_value", value: "shared", ...perClient(hour(10)) },
                    { key: "missing_value", value: "shared", ...perClient(hour(10)) },
                ],
            },
        },
        {
            rule: {
                name: "per-key-refuse",
                header: { name: "x-api-key", perValue: true, whenMissing: MissingHeader.Refuse },
                requestsPerUnit: 10,
                unit: LimitUnit.Hour,
            },
            actions: [keyed("per-key-refuse"), { request_headers: { header_name: "x-api-key", descriptor_key: "x-api-key" } }],
            // Refusing everyone: no client needed.
            guard: fallbacks("per-key-refuse", { missing: true, client: false }),
            config: {
                key: "rule",
                value: "per-key-refuse",
                // An unreadable value is refused like a missing one.
                descriptors: [
                    { key: "x-api-key", ...hour(10) },
                    { key: "untrusted_value", value: "shared", ...hour(0) },
                    { key: "missing_value", value: "shared", ...hour(0) },
                ],
            },
        },
        {
            // The opt-out: requests without the header send nothing for the rule.
            rule: {
                name: "per-key-ignore",
                header: { name: "x-api-key", perValue: true, whenMissing: MissingHeader.Ignore },
                requestsPerUnit: 10,
                unit: LimitUnit.Hour,
            },
            actions: [keyed("per-key-ignore"), { request_headers: { header_name: "x-api-key", descriptor_key: "x-api-key" } }],
            // An unreadable value is not a missing one: it is counted.
            guard: fallbacks("per-key-ignore", { missing: false, client: true }),
            config: {
                key: "rule",
                value: "per-key-ignore",
                descriptors: [
                    { key: "x-api-key", ...hour(10) },
                    { key: "untrusted_value", value: "shared", ...perClient(hour(10)) },
                ],
            },
        },
        {
            rule: { name: "not-internal", header: { name: "x-env", value: "internal", invert: true }, requestsPerUnit: 7, unit: M },
            actions: [
                {
                    header_value_match: {
                        descriptor_key: "rule",
                        descriptor_value: "not-internal",
                        headers: [{ name: "x-env", string_match: { exact: "internal" }, invert_match: true, treat_missing_header_as_empty: true }],
                    },
                },
            ],
            config: { key: "rule", value: "not-internal", rate_limit: { unit: "minute", requests_per_unit: 7 } },
        },
        {
            rule: { name: "per-client", perClientAddress: true, requestsPerUnit: 100, unit: M },
            actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: "per-client" } }, CLIENT],
            config: {
                key: "rule",
                value: "per-client",
                descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 100 } }],
            },
        },
        {
            rule: { name: "login-per-client", path: { prefix: "/login", spellings: PathSpellings.Exact }, perClientAddress: true, requestsPerUnit: 2, unit: M },
            actions: [
                {
                    header_value_match: {
                        descriptor_key: "rule",
                        descriptor_value: "login-per-client",
                        headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: "/login(?:[/?].*)?" } }],
                    },
                },
                CLIENT,
            ],
            config: {
                key: "rule",
                value: "login-per-client",
                descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 2 } }],
            },
        },
        {
            rule: { name: "key-per-client", header: { name: "x-api-key", perValue: true }, perClientAddress: true, requestsPerUnit: 1, unit: LimitUnit.Day },
            actions: [keyed("key-per-client"), { request_headers: { header_name: "x-api-key", descriptor_key: "x-api-key" } }, CLIENT],
            guard: fallbacks("key-per-client", { missing: true, client: true }),
            config: {
                key: "rule",
                value: "key-per-client",
                descriptors: [
                    { key: "x-api-key", descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "day", requests_per_unit: 1 } }] },
                    { key: "untrusted_value", value: "shared", ...perClient({ rate_limit: { unit: "day", requests_per_unit: 1 } }) },
                    { key: "missing_value", value: "shared", ...perClient({ rate_limit: { unit: "day", requests_per_unit: 1 } }) },
                ],
            },
        },
        {
            rule: { name: "everything", requestsPerUnit: 1000, unit: LimitUnit.Second },
            actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: "everything" } }],
            config: { key: "rule", value: "everything", rate_limit: { unit: "second", requests_per_unit: 1000 } },
        },
    ];
    for (const { rule, actions, config, option, guard } of table) {
        it(`${rule.name}: ${guard ? "its rate_limits entry and its guard's" : "one rate_limits entry"} on the virtual host, one config entry`, () => {
            const c = compileGlobalLimits({ rules: [rule] });
            expect(c.problems).to.deep.equal([]);
            const opt = option ? { x_ratelimit_option: option } : {};
            expect(c.vhostRateLimits).to.deep.equal([{ actions, ...opt }, ...(guard ?? []).map((g) => ({ actions: g, ...opt }))]);
            expect(c.routePatches).to.deep.equal([]);
            expect(c.configDescriptors).to.deep.equal([config]);
        });
    }

    it("a route rule sits on its route (one patch per route and virtual host), not on the virtual host", () => {
        const c = compileGlobalLimits({
            rules: [
                { name: "orders", route: { name: "orders", virtualHost: "*:80" }, requestsPerUnit: 5, unit: M },
                {
                    name: "orders-post",
                    route: { name: "orders", virtualHost: "*:80" },
                    header: { name: ":method", value: "POST" },
                    requestsPerUnit: 1,
                    unit: M,
                },
                { name: "any-vh", route: { name: "cart" }, requestsPerUnit: 7, unit: M },
            ],
        });
        expect(c.vhostRateLimits).to.deep.equal([]);
        expect(c.routePatches.map((p) => [p.virtualHost, p.route, p.rateLimits.length])).to.deep.equal([
            ["*:80", "orders", 2],
            ["", "cart", 1],
        ]);
        expectGolden("rules/route-rule-first-entry", c.routePatches[0].rateLimits[0]);
        expect(c.routePatches[0].rateLimits[0].actions.map((a) => a.generic_key?.descriptor_value)).to.deep.equal(["orders"]);
    });

    it("per-path counters: the CEL url_path action, named paths first, rules, the catch-all last", () => {
        const c = compileGlobalLimits({
            perPath: { paths: [{ path: "/cart", requestsPerUnit: 3, unit: M }], eachPath: { requestsPerUnit: 60, unit: M } },
            rules: [{ name: "r", header: { name: "x" }, requestsPerUnit: 1, unit: M }],
        });
        expectGolden("rules/per-path-first-entry", c.vhostRateLimits[0]);
        expect(c.vhostRateLimits[0].actions[0].extension?.typed_config).to.include({ descriptor_key: "PATH", text: "request.url_path" });
        expect(c.configDescriptors.map((d) => `${d.key}=${d.value ?? "*"}`)).to.deep.equal(["PATH=/cart", "rule=r", "PATH=*"]);
    });
});

/** A user's setup that is not bookinfo: a shop behind its own gateway on port 80. */
export function shopObjects(rules: RateLimitRuleArgs[], more: Partial<GlobalRateLimitArgs> = {}): K8sObject[] {
    const plan = planGlobalRateLimit({
        domain: "shop",
        gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
        namespace: "shop",
        rules,
        ...more,
    });
    expect(plan.problems).to.deep.equal([]);
    return [
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
                    { name: "checkout", match: [{ uri: { prefix: "/checkout" } }], route: [{ destination: { host: "checkout" } }] },
                    { name: "web", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "web" } }] },
                ],
            },
        },
        ...plan.filters.map((f) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: f.namespace },
            spec: f.spec,
        })),
        ...serviceObjects(plan),
    ] as K8sObject[];
}

/**
 * The parts of a plan's services the gateway model reads: each service's ConfigMap and a Deployment
 * (name and config volume only) that ties it to the cluster its filter calls; with a per-value side, both.
 */
export function serviceObjects(plan: GlobalRateLimitPlan): K8sObject[] {
    const sides = [
        { r: plan.service.ratelimit, text: plan.configYaml },
        ...(plan.perValue ? [{ r: plan.perValue.service.ratelimit, text: plan.perValue.configYaml }] : []),
    ];
    return sides.flatMap(({ r, text }) => [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: r.configName, namespace: r.namespace }, data: { "config.yaml": text } },
        {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: r.serviceName, namespace: r.namespace },
            spec: { template: { spec: { volumes: [{ name: "config", configMap: { name: r.configName } }] } } },
        },
    ]) as K8sObject[];
}

export const SHOP_RULES: RateLimitRuleArgs[] = [
    { name: "login-per-client", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: M },
    { name: "search", path: { prefix: "/search" }, requestsPerUnit: 100, unit: M },
    { name: "items", path: { regex: "/items/[0-9]+" }, requestsPerUnit: 50, unit: M },
    { name: "per-api-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: M },
    { name: "beta", header: { name: "x-beta", value: "on" }, requestsPerUnit: 2, unit: M, shadow: true },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 300, unit: M },
    { name: "checkout", route: { name: "checkout", virtualHost: "*:80" }, requestsPerUnit: 10, unit: M },
];

describe("a user's gateway (not bookinfo) through the gateway model", () => {
    // Built before each test in a mutation run (helpers.ts): built once while the file loads, it
    // would be computed from the unmutated code and hide mutants of the builders.
    let m: GatewayModel;
    beforeAllTests(() => {
        m = gatewayModel(shopObjects(SHOP_RULES));
    });
    const hits = (p: string, headers: Record<string, string | string[]> = {}, clientAddress = "198.51.100.7") =>
        explainWith(m, p, { headers, clientAddress }).descriptors.map(
            (d) =>
                `${d.entries.map((e) => `${e.key}=${e.value}`).join(",")} -> ${d.limit ? `${d.limit.requests}/${d.limit.unit}${d.limit.shadow ? " shadow" : ""}` : "none"}`,
        );

    it("the model reads the user's Gateway, VirtualService and the component's filters and config", () => {
        expect(m.domain).to.equal("shop");
        expect(m.virtualHost).to.equal("*:80");
        // Per-instance layout (the default): no route or virtual-host rate_limits of the filter's stage;
        // the checkout route's RateLimitPerRoute holds its one action and then the virtual host's.
        expect(m.routes.map((r) => [r.name, r.rateLimits.length, r.perFilter?.rateLimits.length ?? 0])).to.deep.equal([
            ["checkout", 0, 1 + m.vhostPerFilter!.rateLimits.length],
            ["web", 0, 0],
        ]);
        expect(m.vhostRateLimits).to.deep.equal([]);
        expect(m.vhostPerFilter!.rateLimits.length).to.be.greaterThan(0);
        expect(m.routes[0].perFilter!.rateLimits.slice(1)).to.deep.equal(m.vhostPerFilter!.rateLimits);
        expect(m.httpFilterName).to.match(/^envoy\.filters\.http\.ratelimit\/shop\//);
    });

    it("/login per client: with any query, each client its own counter", () => {
        for (const q of ["", "?next=/x", "?a=1&b=2", `?pad=${"x".repeat(3000)}`]) {
            expect(hits(`/login${q}`), q).to.deep.equal([
                "rule=login-per-client,masked_remote_address=198.51.100.7/32 -> 5/minute",
                // Without x-api-key the request still counts for per-api-key, in its shared counter.
                "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
                "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
            ]);
        }
        const b1 = explainWith(m, "/login", { clientAddress: "198.51.100.7" }).descriptors[0].bucket;
        const b2 = explainWith(m, "/login", { clientAddress: "203.0.113.9" }).descriptors[0].bucket;
        expect(b1).to.not.equal(b2);
        // Another spelling of /login is the same path to a backend: counted too.
        for (const p of ["/login/", "/LOGIN", "/login;jsessionid=1"])
            expect(hits(p)[0], p).to.equal("rule=login-per-client,masked_remote_address=198.51.100.7/32 -> 5/minute");
        expect(hits("/login/x")).to.deep.equal([
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
    });

    it("prefix and regex rules match with queries and not beyond their paths", () => {
        expect(hits("/search?q=shoes")[0]).to.equal("rule=search -> 100/minute");
        expect(hits("/search/deep/x")[0]).to.equal("rule=search -> 100/minute");
        expect(hits("/searchx")).to.deep.equal([
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
        expect(hits("/items/17?color=red")[0]).to.equal("rule=items -> 50/minute");
        // Not the items rule: only the header-less per-api-key counter and the per-client one.
        expect(hits("/items/x")).to.deep.equal([
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
    });

    it("a per-value header rule: each value apart; requests without the header share one counter at the same limit (leaving it out never escapes)", () => {
        expect(hits("/", { "x-api-key": "k1" })).to.deep.equal([
            "rule=per-api-key,x-api-key=k1 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
        const k1 = explainWith(m, "/", { headers: { "x-api-key": "k1" } }).descriptors[0].bucket;
        const k2 = explainWith(m, "/", { headers: { "x-api-key": "k2" } }).descriptors[0].bucket;
        expect(k1).to.not.equal(k2);
        expect(hits("/")).to.deep.equal([
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
        // One counter for every header-less request, apart from every keyed one.
        const none1 = explainWith(m, "/", {}).descriptors[0].bucket;
        const none2 = explainWith(m, "/other", {}).descriptors[0].bucket;
        expect(none1).to.equal(none2);
        expect(none1).to.not.equal(k1);
    });

    it("a repeated header (Envoy: request_headers sends the first value, header_value_match compares the values joined with ',')", () => {
        // Repeated, or one value holding a comma: no value is sent, one shared counter (the first value could be a fresh one).
        expect(hits("/", { "x-api-key": ["k1", "k2"] })[0]).to.equal(
            "rule=per-api-key,untrusted_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
        );
        expect(hits("/", { "x-api-key": ["", "k2"] })[0]).to.equal(
            "rule=per-api-key,untrusted_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
        );
        expect(hits("/", { "x-api-key": "k1,k2" })[0]).to.equal("rule=per-api-key,untrusted_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute");
        expect(hits("/", { "x-api-key": ["k1"] })[0]).to.equal("rule=per-api-key,x-api-key=k1 -> 20/minute");
        expect(hits("/", { "x-beta": ["on"] })).to.include("rule=beta -> 2/minute shadow");
        expect(hits("/", { "x-beta": ["on", "on"] })).to.not.include("rule=beta -> 2/minute shadow");
        expect(hits("/", { "x-api-key": [] })[0]).to.equal("rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute");
    });

    it("a shadow rule is counted but does not make the request limited", () => {
        const x = explainWith(m, "/", { headers: { "x-beta": "on" }, clientAddress: "198.51.100.7" });
        expect(hits("/", { "x-beta": "on" })).to.include("rule=beta -> 2/minute shadow");
        expect(x.descriptors.find((d) => d.limit?.shadow)).to.not.equal(undefined);
        expect(hits("/", { "x-beta": "off" })).to.not.include("rule=beta -> 2/minute shadow");
    });

    it("the route rule applies on its route only, and the route keeps the virtual host's rules (INCLUDE)", () => {
        expect(hits("/checkout/pay?x=1")).to.deep.equal([
            "rule=checkout -> 10/minute",
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
        expect(hits("/cart")).to.deep.equal([
            "rule=per-api-key,missing_value=shared,masked_remote_address=198.51.100.7/32 -> 20/minute",
            "rule=per-client,masked_remote_address=198.51.100.7/32 -> 300/minute",
        ]);
    });

    it("every descriptor the gateway can send has a config entry (the two sides agree), on many requests", () => {
        const paths = ["/", "/login", "/login?x", "/search", "/search?q", "/items/1", "/items/22?x", "/checkout", "/checkout/a", "/other"];
        const headerSets: Record<string, string>[] = [{}, { "x-api-key": "a" }, { "x-beta": "on" }, { "x-api-key": "b", "x-beta": "on" }];
        for (const p of paths) {
            for (const h of headerSets) {
                const x = explainWith(m, p, { headers: h, clientAddress: "192.0.2.44" });
                for (const d of x.descriptors) expect(d.limit, `${p} ${JSON.stringify(h)} ${JSON.stringify(d.entries)}`).to.not.equal(undefined);
                expect(x.limited, p).to.equal(true);
            }
        }
    });

    it("the config.yaml is what the rules say (read back as YAML): the fixed rules in one, the per-value ones in the other", () => {
        const configs = shopObjects(SHOP_RULES).filter((o) => o.kind === "ConfigMap");
        expect(configs.map((c) => c.metadata.name)).to.deep.equal(["ratelimit-config", "ratelimit-config-per-value"]);
        const text = (descriptors: unknown[]) => stringify({ domain: "shop", descriptors }, { lineWidth: 0 });
        expect(configs[0]!.data["config.yaml"]).to.equal(
            text([
                { key: "rule", value: "search", rate_limit: { unit: "minute", requests_per_unit: 100 } },
                { key: "rule", value: "items", rate_limit: { unit: "minute", requests_per_unit: 50 } },
                { key: "rule", value: "beta", rate_limit: { unit: "minute", requests_per_unit: 2 }, shadow_mode: true },
                { key: "rule", value: "checkout", rate_limit: { unit: "minute", requests_per_unit: 10 } },
            ]),
        );
        expect(configs[1]!.data["config.yaml"]).to.equal(
            text([
                {
                    key: "rule",
                    value: "login-per-client",
                    descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 5 } }],
                },
                {
                    key: "rule",
                    value: "per-api-key",
                    descriptors: [
                        { key: "x-api-key", rate_limit: { unit: "minute", requests_per_unit: 20 } },
                        {
                            key: "untrusted_value",
                            value: "shared",
                            descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 20 } }],
                        },
                        {
                            key: "missing_value",
                            value: "shared",
                            descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 20 } }],
                        },
                    ],
                },
                { key: "rule", value: "per-client", descriptors: [{ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 300 } }] },
            ]),
        );
    });
});

describe("rules: a header that is missing, or inverted (what a client would use to get around a header rule)", () => {
    const R = (header: Record<string, unknown>): RateLimitRuleArgs => ({ name: "h", header: header as any, requestsPerUnit: 3, unit: LimitUnit.Minute });
    const problems = (header: Record<string, unknown>) => compileGlobalLimits({ rules: [R(header)] }).problems;

    it("checks: invert needs a value; whenMissing needs perValue", () => {
        expect(problems({ name: "x-env", value: "a", invert: true })).to.deep.equal([]);
        expect(problems({ name: "x-env", invert: true })).to.deep.equal([
            {
                key: "rules[0].header.invert",
                value: true,
                problem: "needs header.value (it counts the requests whose header is not that value)",
                fix: "give header.value, or remove invert",
            },
        ]);
        // invert a boolean and whenMissing a known choice: tests/unit/field-rules.test.ts (one row each).
        expect(problems({ name: "x-key", perValue: true, whenMissing: MissingHeader.Refuse })).to.deep.equal([]);
        expect(problems({ name: "x-key", whenMissing: MissingHeader.Refuse })).to.deep.equal([
            {
                key: "rules[0].header.whenMissing",
                value: "refuse",
                problem: "applies only with header.perValue",
                fix: "remove whenMissing, or set perValue to true",
            },
        ]);
    });

    it("through the gateway model: an inverted match counts a missing header and any other value, never the value itself", () => {
        const objs = shopObjects([R({ name: "x-env", value: "internal", invert: true })]);
        const m = gatewayModel(objs);
        const sent = (headers: Record<string, string>) =>
            explainWith(m, "/", { headers }).descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));
        expect(sent({})).to.deep.equal(["rule=h"]);
        expect(sent({ "x-env": "other" })).to.deep.equal(["rule=h"]);
        expect(sent({ "x-env": "" })).to.deep.equal(["rule=h"]);
        expect(sent({ "x-env": "internal" })).to.deep.equal([]);
    });

    it("through the gateway model: whenMissing Refuse sends the rule and missing_value and the config answers it with a limit of 0; Ignore sends nothing", () => {
        const refuse = gatewayModel(shopObjects([R({ name: "x-key", perValue: true, whenMissing: MissingHeader.Refuse })]));
        const [d] = explainWith(refuse, "/", {}).descriptors;
        expect(d.entries).to.deep.equal([
            { key: "rule", value: "h" },
            { key: "missing_value", value: "shared" },
        ]);
        expect(d.limit?.requests).to.equal(0);
        expect(explainWith(refuse, "/", { headers: { "x-key": "k" } }).descriptors[0].limit?.requests).to.equal(3);
        const ignore = gatewayModel(shopObjects([R({ name: "x-key", perValue: true, whenMissing: MissingHeader.Ignore })]));
        expect(explainWith(ignore, "/", {}).descriptors).to.deep.equal([]);
    });
});
