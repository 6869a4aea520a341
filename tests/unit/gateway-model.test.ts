/**
 * The gateway MODEL (gateway-model/explain.ts) in the unit tier: no rate-limit service needed.
 * Limits hold against the requests a client would use to get around them: query strings, path
 * variants, unmatched API paths. The real service deciding on these descriptors is the rls tier's
 * job (tests/rls/limits-hold.test.ts); the model agreeing with Istio's generator is the istio tier's.
 */
import { expect } from "chai";
import { explain as explainObjects, explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { gatewayModelFromEnvoy } from "../../gateway-model/read-envoy";
import { GatewayModel } from "../../gateway-model/model";
import { normalizePath, urlPath } from "../../gateway-model/evaluate";
import { K8sObject } from "../../lib/k8s-object";
import { renderVariant } from "../rls/harness/stack";
import { beforeAllTests } from "./helpers";

/** Memoized model per rendered object list (the fuzz tables explain thousands of paths). */
const models = new WeakMap<K8sObject[], GatewayModel>();
function explain(objs: K8sObject[], p: string) {
    let m = models.get(objs);
    if (!m) models.set(objs, (m = gatewayModel(objs)));
    return explainWith(m, p);
}
void explainObjects;

const entriesOf = (objs: K8sObject[], p: string) => explain(objs, p).descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));

/** Paths a client might send to dodge a limit (each must either match no route or be limited). */
function dodgePaths(): string[] {
    const base = [
        "/productpage",
        "/login",
        "/logout",
        "/static/app.css",
        "/api/v1/products",
        "/api/v1/products/",
        "/api/v1/products/7",
        "/api/v1/products/100",
        "/api/v1/products/0",
        "/api/v1/products/07",
        "/api/v1/products/7/reviews",
    ];
    const suffixes = ["", "?", "?x=1", "?y=2&z", `?n=${"9".repeat(5000)}`, "#frag", "?a=b#c", "/", "/.", "/..", "%3Fx=1", ";jsessionid=1", "?%00", "//"];
    const prefixes = ["", "/.", "/static/..", "//", "/%2e", "\\"];
    const out: string[] = [];
    for (const b of base) for (const s of suffixes) for (const p of prefixes) out.push(p + b + s);
    out.push("/api//v1/products/7", "/api/v1/products//7", "/api/v1/products/%37", "/productpag%65", "/PRODUCTPAGE", "/static", "/static/", "/staticx");
    return out;
}

describe("gateway model: limits hold against what clients send (unit tier, no service)", function () {
    for (const variant of ["A", "B"] as const) {
        describe(`variant ${variant}`, () => {
            let objs: K8sObject[];
            beforeAllTests(async () => {
                objs = await renderVariant(variant);
            });

            it("the limited path with any query string sends one descriptor, PATH=/productpage, limited 1 per minute", () => {
                for (const p of [
                    "/productpage",
                    "/productpage?x=1",
                    "/productpage?y=2&z",
                    "/productpage?",
                    `/productpage?q=${"a".repeat(10000)}`,
                    "/productpage#top",
                    "/static/../productpage?x",
                    "/./productpage",
                ]) {
                    const x = explain(objs, p);
                    expect(
                        x.descriptors.map((d) => d.entries),
                        p,
                    ).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
                    expect(x.descriptors[0].limit, p).to.deep.include({ entry: "PATH=/productpage", requests: 1, unit: "minute" });
                }
            });

            it("the catch-all counts per path without its query: /login?r=1 and /login?r=2 share one counter", () => {
                const buckets = new Set([1, 2, 3, 500].map((i) => explain(objs, `/login?r=${i}`).descriptors[0].bucket));
                // With the per-path counters in a store of their own, their descriptor starts with the
                // entry that says the path is none of the fixed ones (builders/counter-stores.ts).
                expect([...buckets]).to.deep.equal([
                    "ratelimit_other_paths_each_PATH_/login_{window}".replace("ratelimit", variant === "A" ? "ratelimit" : "productpage-ratelimit"),
                ]);
                expect(explain(objs, "/login?r=1").descriptors[0].limit?.requests).to.equal(100);
            });

            it("every request that reaches a route sends at least one limited descriptor (no route is globally unlimited)", () => {
                const unlimited = dodgePaths().filter((p) => {
                    const x = explain(objs, p);
                    return x.route !== undefined && !x.limited;
                });
                expect(unlimited).to.deep.equal([]);
            });

            it("a path variant either matches no route (404) or is counted under the path it normalizes to or a per-path catch-all", () => {
                for (const p of dodgePaths()) {
                    const x = explain(objs, p);
                    if (!x.route) continue;
                    const byPath = x.descriptors.find((d) => d.entries.at(-1)!.key === "PATH" && d.entries.at(-1)!.value.startsWith("/"));
                    // A path the api limit counts (2/minute, refusing before the catch-all's 100 could)
                    // is left out of the per-path counters: it must then be limited by that fixed counter.
                    if (!byPath && x.descriptors.some((d) => d.limit?.entry === "PATH=api")) continue;
                    expect(byPath, p).to.not.equal(undefined);
                    expect(byPath!.entries.at(-1)!.value, p).to.equal(urlPath(normalizePath(p)));
                }
            });

            if (variant === "A") {
                it("every /api/v1/products/<n>, n = 1..99, with or without a query, counts against the one api counter", () => {
                    const buckets = new Set<string>();
                    for (let n = 1; n <= 99; n++) {
                        for (const q of ["", "?a=b", "?", "?x=%2F&y"]) {
                            const api = explain(objs, `/api/v1/products/${n}${q}`).descriptors.filter((d) => d.limit?.entry === "PATH=api");
                            expect(api, `n=${n}${q}`).to.have.length(1);
                            buckets.add(api[0].bucket!);
                        }
                    }
                    expect([...buckets]).to.deep.equal(["ratelimit_PATH_api_{window}"]);
                });

                it("api route paths that do not match the regex fall under the catch-all, counted per path", () => {
                    for (const p of [
                        "/api/v1/products",
                        "/api/v1/products/0",
                        "/api/v1/products/07",
                        "/api/v1/products/100",
                        "/api/v1/products/7/reviews",
                        "/api/v1/products/100?x=1",
                    ]) {
                        const x = explain(objs, p);
                        expect(x.route?.name, p).to.equal("api");
                        // The catch-all's second entry, the long-path marker with the client, meets no limit on a short path.
                        expect(entriesOf(objs, p), p).to.deep.equal([
                            `other_paths=each,PATH=${urlPath(p)}`,
                            "other_paths=each,long_path=within-1024-bytes,masked_remote_address=192.0.2.1/32",
                        ]);
                        expect(x.descriptors[1]!.limit, p).to.equal(undefined);
                        expect(x.descriptors[0].limit?.entry).to.equal("other_paths=each / PATH (catch-all)");
                    }
                });

                it("negative control: pathKey=literal (the specification's tables) lets queries and unmatched api paths escape", async () => {
                    const literal = await renderVariant("A", { pathKey: "literal" });
                    expect(entriesOf(literal, "/productpage?x=1")).to.deep.equal(["other_paths=each,PATH=/productpage?x=1"]);
                    expect(explain(literal, "/productpage?x=1").descriptors[0].limit?.entry).to.equal("other_paths=each / PATH (catch-all)");
                    expect(explain(literal, "/api/v1/products/7?a=b").limited).to.equal(false);
                    expect(explain(literal, "/api/v1/products/100").limited).to.equal(false);
                    const escaped = dodgePaths().filter((p) => explain(literal, p).route && !explain(literal, p).limited);
                    expect(escaped.length).to.be.greaterThan(10);
                });
            }

            it("the API profile and the local placement do not change what the gateway sends", async () => {
                const paths = ["/productpage?x=1", "/api/v1/products/7?q", "/api/v1/products/100", "/login", "/nope"];
                const want = paths.map((p) => explain(objs, p));
                for (const profile of ["seed", "current"] as const) {
                    for (const localPlacement of ["all-routes", "single-route"]) {
                        const o = await renderVariant(variant, { localPlacement }, profile);
                        expect(
                            paths.map((p) => explain(o, p)),
                            `${profile}/${localPlacement}`,
                        ).to.deep.equal(want);
                    }
                }
            });
        });
    }
});

describe("gateway model: Envoy's rules it implements", () => {
    const config = {
        domain: "d",
        descriptors: [
            { key: "K", value: "own", rate_limit: { unit: "minute", requests_per_unit: 1 } },
            { key: "K", rate_limit: { unit: "minute", requests_per_unit: 5 } },
        ],
    };
    const own = [{ actions: [{ generic_key: { descriptor_key: "K", descriptor_value: "own" } }] }];
    const vh = [{ actions: [{ request_headers: { header_name: ":path", descriptor_key: "K" } }] }];
    const model = (mode: "OVERRIDE" | "INCLUDE" | "IGNORE", withOwn: boolean): GatewayModel => ({
        source: "test",
        gateway: { name: "g", port: 80, selector: {} },
        virtualHost: "*:80",
        routes: [{ name: "r", index: 0, matches: [{ kind: "prefix", value: "/" }], rateLimits: withOwn ? own : [], vhRateLimits: mode, envoyFilter: "f" }],
        domain: "d",
        failureModeDeny: true,
        filterNames: [],
        vhostRateLimits: [{ rateLimits: vh, envoyFilter: "v" }],
        config,
    });
    const sent = (m: GatewayModel) => explainWith(m, "/x").descriptors.map((d) => d.entries[0].value);

    it("vh_rate_limits: OVERRIDE (default) uses the virtual host's only when the route has none; INCLUDE adds them; IGNORE never", () => {
        expect(sent(model("OVERRIDE", true))).to.deep.equal(["own"]);
        expect(sent(model("OVERRIDE", false))).to.deep.equal(["/x"]);
        expect(sent(model("INCLUDE", true))).to.deep.equal(["own", "/x"]);
        expect(sent(model("INCLUDE", false))).to.deep.equal(["/x"]);
        expect(sent(model("IGNORE", true))).to.deep.equal(["own"]);
        expect(sent(model("IGNORE", false))).to.deep.equal([]);
    });

    it("the first action that yields nothing drops its whole descriptor; other rate_limits entries still send", () => {
        const m = model("INCLUDE", true);
        m.routes[0].rateLimits = [
            {
                actions: [
                    { generic_key: { descriptor_key: "K", descriptor_value: "own" } },
                    { request_headers: { header_name: "x-absent", descriptor_key: "H" } },
                ],
            },
        ];
        expect(sent(m)).to.deep.equal(["/x"]);
        m.routes[0].rateLimits[0].actions[1].request_headers.skip_if_absent = true;
        expect(sent(m)).to.deep.equal(["own", "/x"]);
    });

    it("normalization: dot segments (also %2E) and backslashes resolved, query kept, fragment dropped, repeated slashes kept", () => {
        const table: [string, string][] = [
            ["/a/b/../c", "/a/c"],
            ["/a/./b", "/a/b"],
            ["/a/%2E%2e/b", "/b"],
            ["/../../a", "/a"],
            ["\\a\\b", "/a/b"],
            ["/a/..?x=../y", "/?x=../y"],
            ["/a?x#f", "/a?x"],
            ["//a//b", "//a//b"],
            ["/a/%2F/b", "/a/%2F/b"],
            ["/a/.", "/a/"],
        ];
        for (const [i, o] of table) expect(normalizePath(i), i).to.equal(o);
        expect(urlPath("/a/b?c=d#e")).to.equal("/a/b");
    });

    it("exact and regex route matches ignore the query; a prefix match reads the start of the whole :path", () => {
        const m = model("OVERRIDE", false);
        m.routes = [
            { name: "e", index: 0, matches: [{ kind: "exact", value: "/p" }], rateLimits: [], vhRateLimits: "OVERRIDE" },
            { name: "r", index: 1, matches: [{ kind: "regex", value: "/r/[0-9]+" }], rateLimits: [], vhRateLimits: "OVERRIDE" },
            { name: "x", index: 2, matches: [{ kind: "prefix", value: "/q?" }], rateLimits: [], vhRateLimits: "OVERRIDE" },
        ];
        expect(explainWith(m, "/p?z").route?.name).to.equal("e");
        expect(explainWith(m, "/r/12?z").route?.name).to.equal("r");
        expect(explainWith(m, "/q?z").route?.name).to.equal("x");
        expect(explainWith(m, "/p/").route).to.equal(undefined);
    });

    it("reads the same model from Envoy's route configuration JSON (camelCase, as Istio's generator writes it)", async () => {
        // The specification's layout (one store): the hand-written route configuration below is its.
        const objs = await renderVariant("A", { counterStore: "single" });
        const fromRender = gatewayModel(objs);
        const celAction = {
            extension: {
                name: "envoy.rate_limit_descriptors.expr",
                typedConfig: {
                    "@type": "type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor",
                    descriptorKey: "PATH",
                    text: "request.url_path",
                },
            },
        };
        const rc = {
            name: "http.8080",
            virtualHosts: [
                {
                    name: "*:8080",
                    domains: ["*"],
                    rateLimits: [{ actions: [celAction] }],
                    routes: [
                        ...["/productpage", "/login", "/logout"].map((p) => ({ match: { path: p, caseSensitive: true }, route: {} })),
                        { match: { prefix: "/static", caseSensitive: true }, route: {} },
                        {
                            name: "api",
                            match: { prefix: "/api/v1/products", caseSensitive: true },
                            route: {
                                rateLimits: [
                                    {
                                        actions: [
                                            {
                                                headerValueMatch: {
                                                    descriptorKey: "PATH",
                                                    descriptorValue: "api",
                                                    headers: [{ name: ":path", safeRegexMatch: { regex: "(?:/api/v1/products/[1-9][0-9]?)(?:\\?.*)?" } }],
                                                },
                                            },
                                        ],
                                    },
                                ],
                            },
                            typedPerFilterConfig: {
                                "envoy.filters.http.ratelimit": {
                                    "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute",
                                    vhRateLimits: "INCLUDE",
                                },
                            },
                        },
                    ],
                },
            ],
        };
        const fromEnvoy = gatewayModelFromEnvoy(
            rc,
            "*:8080",
            { domain: fromRender.domain, failureModeDeny: true, ...(fromRender.service ? { cluster: fromRender.service } : {}) },
            objs,
        );
        for (const p of dodgePaths()) {
            const a = explainWith(fromRender, p);
            const b = explainWith(fromEnvoy, p);
            expect([b.route?.name, b.descriptors], p).to.deep.equal([a.route?.name, a.descriptors]);
        }
    });
});
