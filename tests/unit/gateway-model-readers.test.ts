/**
 * The gateway MODEL, its two readers (gateway-model/read-rendered.ts, read-envoy.ts), function by function, with exact expectations.
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
import { explain, explainWith } from "../../gateway-model/explain";
import { VhRateLimits } from "../../gateway-model/model";
import { gatewayModelFromEnvoy } from "../../gateway-model/read-envoy";
import { gatewayModel, HostNotServed, pickHost } from "../../gateway-model/read-rendered";
import { K8sObject } from "../../lib/k8s-object";
import {
    apiMatch,
    BOOKINFO_CONFIG_YAML,
    BOOKINFO_HTTP,
    bookinfoConfig,
    bookinfoObjects,
    celUrlPath,
    configMapObj,
    entries,
    envoyFilterObj,
    gatewayObj,
    globalFilterPatch,
    PER_ROUTE_TYPE,
    RL,
    routePatch,
    SELECTOR,
    vhostPatch,
    virtualServiceObj,
} from "./gateway-model-fixtures";

describe("the gateway model: gatewayModel, reading the rendered objects", () => {
    it("reads variant A's objects into the model: gateway, virtual host, routes, filters, domain and config", () => {
        const m = gatewayModel(bookinfoObjects());
        expectGolden("gateway-model/readers-variant-a-model", m);
        expect([m.gateway.name, m.gateway.port, m.virtualHost, m.domain, m.failureModeDeny]).to.deep.equal([
            "bookinfo-gateway",
            8080,
            "*:8080",
            "ratelimit",
            true,
        ]);
        expect(m.routes.map((r) => [r.name, r.vhRateLimits])).to.deep.equal([
            [undefined, "OVERRIDE"],
            ["api", "INCLUDE"],
        ]);
    });

    it("explain(objects, path) is explainWith(gatewayModel(objects), path)", () => {
        const objs = bookinfoObjects();
        for (const p of ["/productpage?x=1", "/api/v1/products/7", "/nope"]) expect(explain(objs, p), p).to.deep.equal(explainWith(gatewayModel(objs), p));
        expect(entries(explain(objs, "/api/v1/products/7", { headers: { "x-a": "b" } }))).to.deep.equal([
            [{ key: "PATH", value: "api" }],
            [{ key: "PATH", value: "/api/v1/products/7" }],
        ]);
    });

    it("VirtualService matches: no match list or no uri is prefix `/`; exact, prefix and regex map one to one", () => {
        const objs = bookinfoObjects();
        objs[1] = virtualServiceObj([
            { name: "a", match: [{ uri: { exact: "/x" } }, { name: "named", uri: { regex: "/r/[0-9]+" } }] },
            { name: "b", match: [{ name: "only-a-name" }] },
            { name: "c" },
            { name: "d", match: [{ uri: { prefix: "/p" } }] },
            // Istio: `len(http.Match) == 0` is the catch-all, an empty list included.
            { name: "e", match: [] },
            { name: "f", match: [{}] },
        ]);
        expect(gatewayModel(objs).routes.map((r) => [r.name, r.matches])).to.deep.equal([
            [
                "a",
                [
                    { kind: "exact", value: "/x" },
                    { kind: "regex", value: "/r/[0-9]+" },
                ],
            ],
            ["b", [{ kind: "prefix", value: "/" }]],
            ["c", [{ kind: "prefix", value: "/" }]],
            ["d", [{ kind: "prefix", value: "/p" }]],
            ["e", [{ kind: "prefix", value: "/" }]],
            ["f", [{ kind: "prefix", value: "/" }]],
        ]);
    });

    it("refuses VirtualService matches it does not model", () => {
        const withHttp = (http: any[]) => {
            const objs = bookinfoObjects();
            objs[1] = virtualServiceObj(http);
            return objs;
        };
        // The message names the object and the match, only the fields not modelled (uri is), and what to do.
        expect(() => gatewayModel(withHttp([{ match: [{ uri: { exact: "/x" }, headers: { a: { exact: "b" } } }] }]))).to.throw(
            /^VirtualService \S*bookinfo http\[0\]\.match\[0\] matches on headers: the model reads only a route's uri .* Remove those fields .* or leave the VirtualService out of the program/,
        );
        expect(() => gatewayModel(withHttp([{ match: [{ uri: { suffix: ".css" } }] }]))).to.throw('VirtualService uri match {"suffix":".css"} is not modelled');
    });

    it("the Gateway: exactly one, its HTTP server's port (any case of `http`) names the virtual host", () => {
        const objs = bookinfoObjects();
        objs[0] = gatewayObj("bookinfo-gateway", [
            { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["*"] },
            { port: { number: "80", name: "http", protocol: "http" }, hosts: ["*"] },
        ]);
        const m = gatewayModel(objs);
        expect(m.gateway).to.deep.equal({ name: "bookinfo-gateway", port: 80, selector: SELECTOR });
        expect(m.virtualHost).to.equal("*:80");
        // The route patch names *:8080, which no longer exists: it does not land.
        expect(m.routes[1].rateLimits).to.deep.equal([]);
        expect(m.routes[1].vhRateLimits).to.equal("OVERRIDE");

        const noHttp = bookinfoObjects();
        noHttp[0] = gatewayObj("bookinfo-gateway", [{ port: { number: 443, name: "https", protocol: "HTTPS" } }]);
        expect(() => gatewayModel(noHttp)).to.throw("Gateway bookinfo-gateway has no HTTP server");
        const http2 = bookinfoObjects();
        http2[0] = gatewayObj("bookinfo-gateway", [{ port: { number: 80, name: "h2", protocol: "HTTP2" } }]);
        expect(() => gatewayModel(http2)).to.throw("Gateway bookinfo-gateway has no HTTP server");
        expect(() => gatewayModel(bookinfoObjects().slice(1))).to.throw("expected one Gateway in the rendered objects, found 0");
        expect(() => gatewayModel(bookinfoObjects([gatewayObj("second")]))).to.throw("expected one Gateway in the rendered objects, found 2");
    });

    it("the VirtualService: exactly one bound to the Gateway (by name or namespace/name), with at least one host", () => {
        const other = virtualServiceObj([{ match: [{ uri: { prefix: "/" } }] }], ["other-gateway", "mesh"], ["*"], "other");
        const meshOnly: K8sObject = {
            apiVersion: "networking.istio.io/v1beta1",
            kind: "VirtualService",
            metadata: { name: "mesh-only" },
            spec: { hosts: ["reviews"], http: [] },
        };
        expect(gatewayModel(bookinfoObjects([other, meshOnly])).source).to.equal("VirtualService bookinfo");
        const qualified = bookinfoObjects();
        qualified[1] = virtualServiceObj(BOOKINFO_HTTP(), ["default/bookinfo-gateway"], ["*"], "qualified");
        expect(gatewayModel(qualified).source).to.equal("VirtualService qualified");
        const none = bookinfoObjects();
        none[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway-x"]);
        expect(() => gatewayModel(none)).to.throw("expected one VirtualService bound to Gateway bookinfo-gateway, found 0");
        expect(() => gatewayModel(bookinfoObjects([virtualServiceObj([], ["bookinfo-gateway"], ["*"], "dup")]))).to.throw(
            "expected one VirtualService bound to Gateway bookinfo-gateway, found 2",
        );
        const noHost = bookinfoObjects();
        noHost[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], []);
        expect(() => gatewayModel(noHost)).to.throw("VirtualService bookinfo has no host");
        const host = bookinfoObjects();
        host[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["shop.example"]);
        expect(gatewayModel(host).virtualHost).to.equal("shop.example:8080");
    });

    it("several hosts: the request's Host picks the virtual host (exact, then the longest wildcard, then '*'); a host none serves is not the stack's", () => {
        const objs = bookinfoObjects();
        objs[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["a.example", "*.shop.example", "*"]);
        expect(gatewayModel(objs).virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "a.example").virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "A.example:8080").virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "x.shop.example").virtualHost).to.equal("*.shop.example:8080");
        expect(gatewayModel(objs, "other.example").virtualHost).to.equal("*:8080");
        expect(pickHost(["a.example", "*.example", "*.b.example"], "x.b.example")).to.equal("*.b.example");
        expect(pickHost(["a.example"], "b.example")).to.equal(undefined);
        const one = bookinfoObjects();
        one[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["bookinfo.example"]);
        expect(() => gatewayModel(one, "shop.example.com")).to.throw(
            HostNotServed,
            "no host of VirtualService bookinfo (bookinfo.example) serves host shop.example.com",
        );
    });

    it("which virtual hosts are limited: a patch naming one host limits that host only; '' (or no name) limits every one", () => {
        const objs = bookinfoObjects().filter((o) => !(o.kind === "EnvoyFilter" && o.metadata.name !== "filter-ratelimit"));
        objs[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["a.example", "b.example"]);
        const named = [...objs, envoyFilterObj("only-a", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "a" } }] }], "a.example:8080")])];
        expect(gatewayModel(named).virtualHosts).to.deep.equal([
            { name: "a.example:8080", limited: true },
            { name: "b.example:8080", limited: false },
        ]);
        // Requests to b.example send nothing: the patch on a.example does not reach them.
        expect(explainWith(gatewayModel(named, "b.example"), "/productpage").descriptors).to.deep.equal([]);
        const all = [...objs, envoyFilterObj("every-host", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "a" } }] }], "")])];
        expect(gatewayModel(all).virtualHosts).to.deep.equal([
            { name: "a.example:8080", limited: true },
            { name: "b.example:8080", limited: true },
        ]);
    });

    it("the rate-limit filter on another listener port is not on the Gateway's listener (no filter: the model refuses)", () => {
        const objs = bookinfoObjects().map((o) =>
            o.kind === "EnvoyFilter" && o.metadata.name === "filter-ratelimit"
                ? {
                      ...o,
                      spec: {
                          ...o.spec,
                          configPatches: o.spec.configPatches.map((p: any) => ({
                              ...p,
                              match: { ...p.match, listener: { ...p.match.listener, portNumber: 9090 } },
                          })),
                      },
                  }
                : o,
        );
        expect(() => gatewayModel(objs)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods on port 8080");
    });

    it("only EnvoyFilters selecting the gateway's pods act on it; the local bucket of a sidecar does not", () => {
        const local = envoyFilterObj(
            "filter-local-ratelimit-svc",
            [
                {
                    applyTo: "HTTP_FILTER",
                    match: { context: "SIDECAR_INBOUND", listener: {} },
                    patch: { operation: "INSERT_BEFORE", value: { name: "envoy.filters.http.local_ratelimit" } },
                },
            ],
            { app: "productpage" },
        );
        const otherPods = envoyFilterObj("other-pods", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "x" } }] }])], { app: "productpage" });
        // Every label of the selector must be on the gateway's pods, not just one.
        const moreLabels = envoyFilterObj("more-labels", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "w" } }] }])], {
            istio: "ingressgateway",
            app: "productpage",
        });
        const sidecar = envoyFilterObj("sidecar-ctx", [
            vhostPatch([{ actions: [{ generic_key: { descriptor_value: "y" } }] }], "", undefined, "SIDECAR_INBOUND"),
        ]);
        expect(gatewayModel(bookinfoObjects([local, otherPods, moreLabels, sidecar]))).to.deep.equal(gatewayModel(bookinfoObjects()));
        // Without a workloadSelector the filter applies to every workload, the gateway included.
        const everyone = envoyFilterObj("everyone", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "z" } }] }])], undefined);
        const m = gatewayModel(bookinfoObjects([everyone]));
        expect(m.vhostRateLimits.map((v) => v.envoyFilter)).to.deep.equal(["filter-ratelimit-svc", "everyone"]);
        expect(m.filterNames).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api", "everyone"]);
    });

    it("a patch without a context, or with context ANY, applies to gateways too (Istio's default is ANY)", () => {
        const objs = bookinfoObjects();
        objs[2] = envoyFilterObj("filter-ratelimit", [globalFilterPatch("ratelimit", true, null)]);
        objs[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", undefined, "ANY")]);
        expect(gatewayModel(objs)).to.deep.equal(gatewayModel(bookinfoObjects()));
    });

    it('virtual-host patches land on `*:<port>`, `""` or no vhost name; another name is ignored', () => {
        const named = bookinfoObjects();
        named[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "*:8080")]);
        expect(gatewayModel(named).vhostRateLimits).to.deep.equal([{ rateLimits: [{ actions: [celUrlPath()] }], envoyFilter: "filter-ratelimit-svc" }]);
        const anyVhost = bookinfoObjects();
        anyVhost[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], undefined)]);
        expect(gatewayModel(anyVhost).vhostRateLimits).to.have.length(1);
        const wrong = bookinfoObjects();
        wrong[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "*:80")]);
        const m = gatewayModel(wrong);
        expect(m.vhostRateLimits).to.deep.equal([]);
        expect(m.filterNames).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc-api"]);
        expect(explainWith(m, "/productpage").descriptors).to.deep.equal([]);
    });

    it("route patches land on the VirtualService route of that name; two patches add up; a patch without a name is refused", () => {
        const objs = bookinfoObjects([
            envoyFilterObj("second-api", [routePatch("api", [{ actions: [{ generic_key: { descriptor_key: "K", descriptor_value: "v" } }] }])]),
        ]);
        const api = gatewayModel(objs).routes[1];
        expect(api.rateLimits).to.deep.equal([{ actions: [apiMatch()] }, { actions: [{ generic_key: { descriptor_key: "K", descriptor_value: "v" } }] }]);
        expect(api.envoyFilter).to.equal("filter-ratelimit-svc-api, second-api");
        expect(api.vhRateLimits).to.equal("INCLUDE");
        // A patch naming a route the VirtualService does not have changes nothing (but names its filter).
        const ghost = gatewayModel(bookinfoObjects([envoyFilterObj("ghost", [routePatch("ghost", [{ actions: [] }])])]));
        expect(ghost.routes).to.deep.equal(gatewayModel(bookinfoObjects()).routes);
        // A patch on another virtual host does not land.
        const elsewhere = gatewayModel(bookinfoObjects([envoyFilterObj("elsewhere", [routePatch("api", [{ actions: [] }], "IGNORE", "other:8080")])]));
        expect(elsewhere.routes[1].vhRateLimits).to.equal("INCLUDE");
        expect(elsewhere.filterNames).to.not.include("elsewhere");
        // Neither rate_limits nor a mode: nothing to model, even without a route name.
        expect(gatewayModel(bookinfoObjects([envoyFilterObj("empty", [routePatch(undefined, undefined)])])).filterNames).to.not.include("empty");
        expect(() => gatewayModel(bookinfoObjects([envoyFilterObj("unnamed", [routePatch(undefined, [{ actions: [] }])])]))).to.throw(
            "EnvoyFilter unnamed: a route patch without route name is not modelled",
        );
        // One filter with several patches is named once.
        const both = envoyFilterObj("both", [vhostPatch([{ actions: [] }]), routePatch("api", [{ actions: [] }]), routePatch("api", [{ actions: [] }])]);
        expect(gatewayModel(bookinfoObjects([both])).filterNames).to.deep.equal([
            "filter-ratelimit",
            "filter-ratelimit-svc",
            "filter-ratelimit-svc-api",
            "both",
        ]);
    });

    it("vh_rate_limits on a route: a name, its enum number, or absent (OVERRIDE); anything else is refused", () => {
        const mode = (m: VhRateLimits | number | null) => gatewayModel(bookinfoObjects([], { apiMode: m as any })).routes[1].vhRateLimits;
        expect(mode("INCLUDE")).to.equal("INCLUDE");
        expect(mode("IGNORE")).to.equal("IGNORE");
        expect(mode("OVERRIDE")).to.equal("OVERRIDE");
        expect(mode(0)).to.equal("OVERRIDE");
        expect(mode(1)).to.equal("INCLUDE");
        expect(mode(2)).to.equal("IGNORE");
        expect(mode(null)).to.equal("OVERRIDE");
        expect(() => mode("INCLUDE_ALL" as any)).to.throw('vh_rate_limits "INCLUDE_ALL" is not modelled');
        expect(() => mode(3)).to.throw("vh_rate_limits 3 is not modelled");
        // A per-route config without vh_rate_limits is OVERRIDE; one for another filter is no mode at all.
        const noField = bookinfoObjects();
        noField[4] = envoyFilterObj("filter-ratelimit-svc-api", [
            {
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "*:8080", route: { name: "api" } } } },
                patch: { operation: "MERGE", value: { typed_per_filter_config: { [RL]: { "@type": PER_ROUTE_TYPE } } } },
            },
        ]);
        expect(gatewayModel(noField).routes[1]).to.deep.include({ vhRateLimits: "OVERRIDE", rateLimits: [], envoyFilter: "filter-ratelimit-svc-api" });
        const otherFilter = bookinfoObjects();
        otherFilter[4] = envoyFilterObj("filter-ratelimit-svc-api", [
            {
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "*:8080", route: { name: "api" } } } },
                patch: { operation: "MERGE", value: { typed_per_filter_config: { "envoy.filters.http.local_ratelimit": {} } } },
            },
        ]);
        expectGolden("gateway-model/readers-other-filter-route", gatewayModel(otherFilter).routes[1]);
    });

    it("vh_rate_limits on the virtual host applies to every route that has no mode of its own", () => {
        // Envoy resolves RateLimitPerRoute most-specific first: the route's, else the virtual host's.
        const objs = bookinfoObjects([], { apiMode: null });
        objs[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", "INCLUDE")]);
        const m = gatewayModel(objs);
        expect(m.routes.map((r) => r.vhRateLimits)).to.deep.equal(["INCLUDE", "INCLUDE"]);
        expect(entries(explainWith(m, "/api/v1/products/100"))).to.deep.equal([[{ key: "PATH", value: "/api/v1/products/100" }]]);
        // The route's own mode wins over the virtual host's.
        const own = bookinfoObjects([], { apiMode: "OVERRIDE" });
        own[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", "IGNORE")]);
        expect(gatewayModel(own).routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "OVERRIDE"]);
        // A mode-only virtual-host patch (no rate_limits) is not a rate_limits source.
        const modeOnly = bookinfoObjects([envoyFilterObj("mode-only", [vhostPatch(undefined, "", "IGNORE")])], { apiMode: null });
        const mo = gatewayModel(modeOnly);
        expect(mo.vhostRateLimits.map((v) => v.envoyFilter)).to.deep.equal(["filter-ratelimit-svc"]);
        expect(mo.filterNames).to.not.include("mode-only");
        expect(mo.routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "IGNORE"]);
    });

    it("the rate-limit filter: its domain and failure_mode_deny (default false); one domain only; required", () => {
        const open = bookinfoObjects();
        open[2] = envoyFilterObj("filter-ratelimit", [globalFilterPatch("shop", null)]);
        open[5] = configMapObj(BOOKINFO_CONFIG_YAML.replace("domain: ratelimit", "domain: shop"));
        const m = gatewayModel(open);
        expect([m.domain, m.failureModeDeny, m.config.domain]).to.deep.equal(["shop", false, "shop"]);
        const camel = bookinfoObjects();
        camel[2] = envoyFilterObj("filter-ratelimit", [
            {
                apply_to: "HTTP_FILTER",
                match: { context: "GATEWAY" },
                patch: { value: { name: RL, typedConfig: { domain: "ratelimit", failureModeDeny: true } } },
            },
        ]);
        expect([gatewayModel(camel).domain, gatewayModel(camel).failureModeDeny]).to.deep.equal(["ratelimit", true]);
        expect(gatewayModel(bookinfoObjects([envoyFilterObj("again", [globalFilterPatch("ratelimit", false)])])).filterNames).to.deep.equal([
            "filter-ratelimit",
            "filter-ratelimit-svc",
            "filter-ratelimit-svc-api",
            "again",
        ]);
        expect(() => gatewayModel(bookinfoObjects([envoyFilterObj("second", [globalFilterPatch("other")])]))).to.throw(
            "two ratelimit filters with different domains (ratelimit, other)",
        );
        const none = bookinfoObjects();
        none.splice(2, 1);
        expect(() => gatewayModel(none)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods");
        // Another HTTP filter is not the rate-limit filter.
        const local = bookinfoObjects();
        local[2] = envoyFilterObj("filter-ratelimit", [
            {
                applyTo: "HTTP_FILTER",
                match: { context: "GATEWAY" },
                patch: { value: { name: "envoy.filters.http.local_ratelimit", typed_config: { domain: "x" } } },
            },
        ]);
        expect(() => gatewayModel(local)).to.throw(/no EnvoyFilter inserts/);
        // The rate-limit filter without a typed_config has no domain.
        const untyped = bookinfoObjects();
        untyped[2] = envoyFilterObj("filter-ratelimit", [{ applyTo: "HTTP_FILTER", match: { context: "GATEWAY" }, patch: { value: { name: RL } } }]);
        expect(() => gatewayModel(untyped)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods");
    });

    it("the ConfigMap: the one whose config.yaml has a domain; none is an error; no descriptors is an empty list", () => {
        const objs = bookinfoObjects([
            configMapObj("not: ratelimit\n", "aaa"),
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bbb" }, data: { other: "domain: x" } },
        ]);
        objs.unshift(objs.pop()!, objs.pop()!);
        expect(gatewayModel(objs).config).to.deep.equal(bookinfoConfig());
        const bare = bookinfoObjects();
        bare[5] = configMapObj("domain: ratelimit\n");
        expect(gatewayModel(bare).config).to.deep.equal({ domain: "ratelimit", descriptors: [] });
        const indented = bookinfoObjects();
        indented[5] = configMapObj("x: 1\ndomain: ratelimit\ndescriptors: []\n");
        expect(gatewayModel(indented).config).to.deep.equal({ domain: "ratelimit", descriptors: [] });
        const missing = bookinfoObjects();
        missing[5] = configMapObj("  domain: nested\n");
        expect(() => gatewayModel(missing)).to.throw("no rate-limit ConfigMap (data['config.yaml'] with a domain) in the rendered objects");
    });
});

describe("the gateway model: gatewayModelFromEnvoy, reading Istio's generated routes", () => {
    const rc = (routes: any[], vh: Record<string, unknown> = {}) => ({
        name: "http.8080",
        virtualHosts: [
            { name: "other:8080", routes: [] },
            { name: "*:8080", domains: ["*"], routes, ...vh },
        ],
    });
    const read = (config: any, vhost = "*:8080") => gatewayModelFromEnvoy(config, vhost, { domain: "ratelimit", failureModeDeny: false }, bookinfoObjects());

    it("route matches: path → exact, prefix → prefix, safe_regex → regex; rate_limits and modes per route", () => {
        const m = read(
            rc(
                [
                    { match: { path: "/productpage", caseSensitive: true }, route: {} },
                    { name: "static", match: { prefix: "/static" }, route: {} },
                    {
                        name: "api",
                        match: { safe_regex: { regex: "/api/.*" } },
                        route: { rate_limits: [{ actions: [apiMatch()] }] },
                        typed_per_filter_config: { [RL]: { vh_rate_limits: "INCLUDE" } },
                    },
                    {
                        name: "camel",
                        match: { safeRegex: { regex: "/c" } },
                        route: { rateLimits: [{ actions: [] }] },
                        typedPerFilterConfig: { [RL]: { vhRateLimits: 2 } },
                    },
                ],
                { rateLimits: [{ actions: [celUrlPath()] }] },
            ),
        );
        expectGolden("gateway-model/readers-cel-url-path-model", m);
        expect(m.routes.map((r) => [r.name, r.matches.map((x) => `${x.kind} ${x.value}`), r.vhRateLimits])).to.deep.equal([
            [undefined, ["exact /productpage"], "OVERRIDE"],
            ["static", ["prefix /static"], "OVERRIDE"],
            ["api", ["regex /api/.*"], "INCLUDE"],
            ["camel", ["regex /c"], "IGNORE"],
        ]);
    });

    it("the virtual host's vh_rate_limits is every route's default; no virtual-host rate_limits is an empty list", () => {
        const m = read(
            rc(
                [
                    { match: { prefix: "/" }, route: {} },
                    { match: { prefix: "/x" }, route: {}, typedPerFilterConfig: { [RL]: { vhRateLimits: "OVERRIDE" } } },
                ],
                { typed_per_filter_config: { [RL]: { vh_rate_limits: "IGNORE" } } },
            ),
        );
        expect(m.routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "OVERRIDE"]);
        expect(m.vhostRateLimits).to.deep.equal([]);
        expect(read({ name: "n", virtual_hosts: [{ name: "*:8080" }] }).routes).to.deep.equal([]);
    });

    it("refuses what it does not model, and a virtual host that is not there", () => {
        expect(() => read(rc([]), "*:9090")).to.throw("route configuration http.8080 has no virtual host *:9090");
        expect(() => read({}, "*:8080")).to.throw("route configuration undefined has no virtual host *:8080");
        expect(() => read(rc([{ match: { prefix: "/", headers: [] }, route: {} }]))).to.throw("Envoy route match fields headers are not modelled");
        expect(() => read(rc([{ match: { prefix: "/", case_sensitive: false }, route: {} }]))).to.throw("case-insensitive route matches are not modelled");
        expect(() => read(rc([{ match: { pathSeparatedPrefix: "/static" }, route: {} }]))).to.throw(
            'Envoy route match {"pathSeparatedPrefix":"/static"} is not modelled',
        );
        expect(() => read(rc([{ match: { path_separated_prefix: "/static" }, route: {} }]))).to.throw(
            'Envoy route match {"path_separated_prefix":"/static"} is not modelled',
        );
        expect(() => read(rc([{ route: {} }]))).to.throw("Envoy route match {} is not modelled");
    });

    it("explains the same as the model read from the rendered objects (variant A)", () => {
        const fromEnvoy = read(
            rc(
                [
                    ...["/productpage", "/login", "/logout"].map((p) => ({ match: { path: p, caseSensitive: true }, route: {} })),
                    { match: { prefix: "/static", caseSensitive: true }, route: {} },
                    {
                        name: "api",
                        match: { prefix: "/api/v1/products", caseSensitive: true },
                        route: { rateLimits: [{ actions: [apiMatch()] }] },
                        typedPerFilterConfig: { [RL]: { vhRateLimits: "INCLUDE" } },
                    },
                ],
                { rateLimits: [{ actions: [celUrlPath()] }] },
            ),
        );
        const fromObjects = gatewayModel(bookinfoObjects());
        for (const p of ["/productpage?x=1", "/login", "/static/a.css", "/api/v1/products/7?q", "/api/v1/products/100", "/nope"]) {
            const a = explainWith(fromObjects, p);
            const b = explainWith(fromEnvoy, p);
            expect([b.route?.name, b.descriptors], p).to.deep.equal([a.route?.name, a.descriptors]);
        }
    });
});
