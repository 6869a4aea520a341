/**
 * The gateway MODEL, the explain step (gateway-model/explain.ts), function by function, with exact expectations.
 *
 * Every expectation is reasoned from how the real components behave (docs/proof/upstream.md, docs/proof/rls.md
 * and the functions' doc comments): Envoy's path normalization (Istio's default `BASE`, RFC 3986),
 * route matching (`path`/`safe_regex` without the query, `prefix` on the whole `:path`), the
 * rate-limit actions and header matchers (route_components.proto), `vh_rate_limits`, and the
 * lookup and counter keys of envoyproxy/ratelimit. Inputs are small hand-written objects, built
 * inside each test (no results computed while the file loads, so per-test coverage sees them).
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { lookupLimit, normalizePath, selectRoute } from "../../gateway-model/evaluate";
import { explainWith } from "../../gateway-model/explain";
import { DEFAULT_CLIENT_ADDRESS, GatewayModel } from "../../gateway-model/model";
import { bookinfoModel, entries, literalPath, route } from "./gateway-model-fixtures";

describe("the gateway model: explainWith, what the gateway sends for a request", () => {
    it("a request to the limited path, with any query, fragment or dot segments, sends PATH=/productpage (1 per minute)", () => {
        for (const p of [
            "/productpage",
            "/productpage?x=1",
            "/productpage?",
            "/productpage#top",
            "/static/../productpage?x",
            "/./productpage",
            "/%2e/productpage",
            "\\productpage",
        ]) {
            const x = explainWith(bookinfoModel(), p);
            expect(x.route?.name, p).to.equal("pages");
            expect(entries(x), p).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
            expect(x.descriptors[0].limit?.entry, p).to.equal("PATH=/productpage");
            expect(x.descriptors[0].bucket, p).to.equal("ratelimit_PATH_/productpage_{window}");
            expect(x.limited, p).to.equal(true);
        }
    });

    it("the whole explanation of one request, field by field (tests/golden/values/explain/one-request.json)", () => {
        const x = explainWith(bookinfoModel(), "/static/../productpage?x=1#f");
        expectGolden("explain/one-request", x);
        // What the golden holds, asserted apart: the route, the descriptor's limit and counter, and the call.
        expect(x.route?.name).to.equal("pages");
        expect(x.descriptors[0]!.limit).to.deep.include({ entry: "PATH=/productpage", requests: 1, unit: "minute" });
        expect(x.calls.map((c) => c.responseHeaders?.["x-ratelimit-remaining"])).to.deep.equal(["0"]);
        expect(x.limited).to.equal(true);
    });

    it("no route matches: Envoy answers 404 without asking the service (no descriptor, not limited)", () => {
        for (const p of ["/nope?x=1", "/productpage/", "//productpage", "/PRODUCTPAGE", "/productpage%3Fx=1", "/api/v1/product"]) {
            const x = explainWith(bookinfoModel(), p);
            expect([x.path, x.normalizedPath, x.route, x.rateLimitsFrom.level, x.descriptors, x.calls, x.limited], p).to.deep.equal([
                p,
                normalizePath(p),
                undefined,
                "none",
                [],
                [],
                false,
            ]);
        }
        expect(explainWith(bookinfoModel(), "/nope?x=1#f").normalizedPath).to.equal("/nope?x=1");
    });

    it("INCLUDE on the api route: its own PATH=api first, then the virtual host's per-path catch-all", () => {
        const x = explainWith(bookinfoModel(), "/api/v1/products/10?x=1");
        expect(x.route).to.deep.equal({ name: "api", index: 1, match: "prefix /api/v1/products", virtualService: "VirtualService bookinfo" });
        expect(x.rateLimitsFrom).to.deep.equal({ level: "route and virtual host", envoyFilter: "filter-ratelimit-svc-api, filter-ratelimit-svc" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "api" }], [{ key: "PATH", value: "/api/v1/products/10" }]]);
        expect(x.descriptors.map((d) => [d.limit?.entry, d.limit?.requests, d.bucket])).to.deep.equal([
            ["PATH=api", 2, "ratelimit_PATH_api_{window}"],
            ["PATH (catch-all)", 100, "ratelimit_PATH_/api/v1/products/10_{window}"],
        ]);
        expect(x.limited).to.equal(true);
    });

    it("INCLUDE: api paths the regex refuses still count against the catch-all (each path its own counter)", () => {
        for (const [p, value] of [
            ["/api/v1/products/100", "/api/v1/products/100"],
            ["/api/v1/products", "/api/v1/products"],
            ["/api/v1/products/0?x", "/api/v1/products/0"],
            ["/api/v1/products%2F10", "/api/v1/products%2F10"],
            ["/api/v1/products/7/reviews", "/api/v1/products/7/reviews"],
        ]) {
            const x = explainWith(bookinfoModel(), p);
            expect(x.route?.name, p).to.equal("api");
            expect(x.rateLimitsFrom.level, p).to.equal("route and virtual host");
            expect(entries(x), p).to.deep.equal([[{ key: "PATH", value }]]);
            expect(x.descriptors[0].limit?.entry, p).to.equal("PATH (catch-all)");
            expect(x.limited, p).to.equal(true);
        }
    });

    it("OVERRIDE (Envoy's default): the route's own rate_limits replace the virtual host's", () => {
        const m = bookinfoModel({ apiMode: "OVERRIDE" });
        const x = explainWith(m, "/api/v1/products/7");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "api" }]]);
        // A path the regex refuses sends nothing at all: never limited globally.
        const y = explainWith(m, "/api/v1/products/100");
        expect(y.route?.name).to.equal("api");
        expect(y.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(y.descriptors).to.deep.equal([]);
        expect(y.limited).to.equal(false);
        // A route without its own list uses the virtual host's.
        expect(explainWith(m, "/login").rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc" });
    });

    it("IGNORE: only the route's own list; a route without one sends nothing", () => {
        const m = bookinfoModel({ apiMode: "IGNORE" });
        expect(explainWith(m, "/api/v1/products/7").rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(entries(explainWith(m, "/api/v1/products/7"))).to.deep.equal([[{ key: "PATH", value: "api" }]]);
        m.routes[0].vhRateLimits = "IGNORE";
        const x = explainWith(m, "/productpage");
        expect(x.route?.name).to.equal("pages");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "none", envoyFilter: undefined });
        expect(x.descriptors).to.deep.equal([]);
        expect(x.limited).to.equal(false);
    });

    it("INCLUDE on a route without its own list, and no virtual-host list at all", () => {
        const m = bookinfoModel();
        m.routes[0].vhRateLimits = "INCLUDE";
        expect(explainWith(m, "/login").rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc" });
        m.vhostRateLimits = [];
        const x = explainWith(m, "/login");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "none", envoyFilter: undefined });
        expect(x.descriptors).to.deep.equal([]);
        const api = explainWith(m, "/api/v1/products/7");
        expect(api.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
    });

    it("several virtual-host lists (two EnvoyFilters) are all applied, in order, and both filters are named", () => {
        const m = bookinfoModel();
        m.vhostRateLimits.push({ rateLimits: [{ actions: [{ generic_key: { descriptor_key: "PATH", descriptor_value: "api" } }] }], envoyFilter: "second" });
        const x = explainWith(m, "/login");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc, second" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "/login" }], [{ key: "PATH", value: "api" }]]);
    });

    it("pathKey=literal (request_headers :path): a query string escapes the /productpage limit (istio/istio#36153)", () => {
        const m = bookinfoModel({ vhActions: [literalPath()] });
        expect(entries(explainWith(m, "/productpage"))).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
        const x = explainWith(m, "/productpage?x=1");
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "/productpage?x=1" }]]);
        expect(x.descriptors[0].limit?.entry).to.equal("PATH (catch-all)");
        expect(x.descriptors[0].bucket).to.equal("ratelimit_PATH_/productpage?x=1_{window}");
        // The fragment is gone before the descriptor is built.
        expect(entries(explainWith(m, "/productpage#x"))).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
    });

    it("the request's headers reach the actions; `:path` and `:method` are set by the model", () => {
        const m = bookinfoModel({
            vhActions: [
                { request_headers: { header_name: ":path", descriptor_key: "P" } },
                { request_headers: { header_name: ":method", descriptor_key: "M" } },
                { request_headers: { header_name: "x-user", descriptor_key: "U" } },
            ],
        });
        const x = explainWith(m, "/login?a=1", { headers: { ":path": "/evil", ":method": "POST", "x-user": "alice" } });
        expect(entries(x)).to.deep.equal([
            [
                { key: "P", value: "/login?a=1" },
                { key: "M", value: "GET" },
                { key: "U", value: "alice" },
            ],
        ]);
        // Without the header the descriptor is dropped, the route still matches.
        const y = explainWith(m, "/login");
        expect(y.route?.name).to.equal("pages");
        expect(y.descriptors).to.deep.equal([]);
        expect(y.limited).to.equal(false);
    });

    it("remote_address uses the given client address, else DEFAULT_CLIENT_ADDRESS (192.0.2.1)", () => {
        expect(DEFAULT_CLIENT_ADDRESS).to.equal("192.0.2.1");
        const m = bookinfoModel({
            vhActions: [{ remote_address: {} }],
            config: { domain: "ratelimit", descriptors: [{ key: "remote_address", rate_limit: { unit: "second", requests_per_unit: 10 } }] },
        });
        const a = explainWith(m, "/login", { clientAddress: "198.51.100.7" });
        expect(entries(a)).to.deep.equal([[{ key: "remote_address", value: "198.51.100.7" }]]);
        expect(a.descriptors[0].bucket).to.equal("ratelimit_remote_address_198.51.100.7_{window}");
        expect(entries(explainWith(m, "/login"))).to.deep.equal([[{ key: "remote_address", value: "192.0.2.1" }]]);
    });

    it("limited: only a descriptor with a real limit counts (not unlimited, not shadow, not missing)", () => {
        const config = {
            domain: "ratelimit",
            descriptors: [
                { key: "rule", value: "shadow", shadow_mode: true, rate_limit: { unit: "minute", requests_per_unit: 1 } },
                { key: "rule", value: "free", rate_limit: { unlimited: true } },
                { key: "rule", value: "real", rate_limit: { unit: "minute", requests_per_unit: 1 } },
            ],
        };
        const gk = (v: string) => ({ actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: v } }] });
        const m = bookinfoModel({ config });
        m.vhostRateLimits = [{ rateLimits: [gk("shadow"), gk("free"), gk("none")], envoyFilter: "f" }];
        const x = explainWith(m, "/login");
        expect(x.descriptors.map((d) => [d.entries[0].value, d.limit?.shadow, d.limit?.unlimited])).to.deep.equal([
            ["shadow", true, false],
            ["free", false, true],
            ["none", undefined, undefined],
        ]);
        expect(x.limited).to.equal(false);
        m.vhostRateLimits[0].rateLimits.push(gk("real"));
        expect(explainWith(m, "/login").limited).to.equal(true);
    });

    it("a filter domain the ConfigMap does not have: descriptors are sent but nothing is ever limited", () => {
        const x = explainWith(bookinfoModel({ domain: "typo" }), "/productpage");
        expect(x.domain).to.equal("typo");
        expect(x.descriptors).to.deep.equal([{ entries: [{ key: "PATH", value: "/productpage" }] }]);
        expect(x.limited).to.equal(false);
    });

    it("an unnamed route keeps `name: undefined`, with its index and match", () => {
        const m = bookinfoModel();
        m.routes = [route(undefined, 3, [{ kind: "regex", value: "/r/[0-9]+" }])];
        expect(explainWith(m, "/r/1?q").route).to.deep.equal({
            name: undefined,
            index: 3,
            match: "regex /r/[0-9]+",
            virtualService: "VirtualService bookinfo",
        });
    });
});

describe("the gateway model: checks a mutation run showed untested (docs/proof/mutation.md)", () => {
    it("an exact route compares text, not a regex: '/v1.0' does not match '/v1x0'", () => {
        const m = { routes: [route("exact", 0, [{ kind: "exact", value: "/v1.0" }])] } as unknown as GatewayModel;
        expect(selectRoute(m, "/v1x0")).to.equal(undefined);
        expect(selectRoute(m, "/v1.0")?.route.name).to.equal("exact");
    });

    it("a prefix* wildcard of another key never matches an entry", () => {
        const config = {
            domain: "d",
            descriptors: [
                { key: "OTHER", value: "/api*", rate_limit: { unit: "hour", requests_per_unit: 1 } },
                { key: "PATH", rate_limit: { unit: "minute", requests_per_unit: 7 } },
            ],
        };
        const x = lookupLimit(config, "d", [{ key: "PATH", value: "/api/x" }]);
        expect(x.limit?.entry).to.equal("PATH (catch-all)");
        expect(x.limit?.requests).to.equal(7);
    });
});
