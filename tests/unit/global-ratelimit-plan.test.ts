/**
 * GlobalRateLimit's plan (components/global-ratelimit/plan.ts): the defaults from config-schema.ts,
 * given values passed through to the objects, its helpers, and checks a mutation run showed
 * untested. Expected values are written from the doc comments, not read from the code.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { parse } from "yaml";
import { FilterLayout } from "../../builders/envoy-filters";
import { RedisModeName } from "../../builders/redis-connection";
import { PathKeyMode } from "../../builders/rule-args";
import { argsError, dnsProblem, portProblem, selectorProblems } from "../../components/common/arg-checks";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LocalRateLimit } from "../../components/local-ratelimit/component";
import { redisOptionsOf } from "../../components/service/redis-options";
import { ServiceLogLevel } from "../../components/service/settings";
import { InputError } from "../../lib/problems";
import { CONFIG_KEYS, configDefault } from "../../program/config-keys";
import { resolveSettings } from "../../program/config-args";
import {
    EXISTING_ONLY,
    EXT,
    G,
    GW,
    LABEL,
    LABEL_BAD,
    LABEL_BAD_FIX,
    M,
    REDIS,
    SELECTOR_EMPTY,
    SELECTOR_EMPTY_FIX,
    SUBDOMAIN,
    SVC,
    TIMEOUT,
    PORT_RANGE,
    VHOST,
    VHOST_FIX,
} from "./global-ratelimit-fixtures";

describe("GlobalRateLimit arguments: the plan (defaults from config-schema.ts, given values passed through)", () => {
    const HTTP_TYPE = "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit";

    it("defaults: the service, its Redis, the filters, the gRPC address; no policies without accessPolicy", () => {
        const plan = planGlobalRateLimit(G());
        expect(plan.problems).to.deep.equal([]);
        expectGolden("global-ratelimit/service-defaults", plan.service);
        expect(plan.grpcAddress).to.equal("ratelimit.default.svc.cluster.local:8081");
        expect(plan.policies).to.deep.equal([]);
        // Per-instance layout (the default): named after the service's namespace and name, unique in the cluster.
        expect(plan.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["default-ratelimit", "istio-system"],
            ["default-ratelimit-svc", "istio-system"],
        ]);
        expect(plan.httpFilterNames).to.deep.equal({
            global: "envoy.filters.http.ratelimit/default/ratelimit",
            local: "envoy.filters.http.local_ratelimit/default/ratelimit",
        });
        expect(plan.listenerKeys).to.deep.equal([]);
        // The specification's names with the shared layout.
        const shared = planGlobalRateLimit(G({ filterLayout: FilterLayout.Shared }));
        expect(shared.filters.map((f) => f.name)).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc"]);
        expect(shared.httpFilterNames.global).to.equal("envoy.filters.http.ratelimit");
        const http = plan.filters[0].spec as any;
        expect(http.workloadSelector).to.deep.equal({ labels: { app: "shop-gateway" } });
        expect(http.configPatches[0].patch.value.typed_config).to.deep.equal({
            "@type": HTTP_TYPE,
            domain: "shop",
            // Per-instance: a stage no hand-written route rate_limits use (0 is the default).
            stage: 10,
            failure_mode_deny: true,
            // Clients see their limits by default (rateLimitHeaders: draft-03).
            enable_x_ratelimit_headers: "DRAFT_VERSION_03",
            timeout: "10s",
            rate_limit_service: {
                grpc_service: {
                    envoy_grpc: { cluster_name: "outbound|8081||ratelimit.default.svc.cluster.local", authority: "ratelimit.default.svc.cluster.local" },
                },
                transport_api_version: "V3",
            },
        });
        // Only the virtual hosts the arguments name, never Istio's empty name (every host of the gateway).
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["shop.example.com:80"]);
        const config = parse(plan.configYaml);
        expect(config.domain).to.equal("shop");
        expect(config.descriptors).to.have.length(1);
        expect(config.descriptors[0]).to.deep.include({ key: "rule", value: "all", rate_limit: { unit: "minute", requests_per_unit: 10 } });
    });

    it("the defaults are config-schema.ts's documented ones", () => {
        const plan = planGlobalRateLimit(G());
        const d = (k: string) => CONFIG_KEYS.find((c) => c.key === k)!.default;
        const r = plan.service.ratelimit;
        expect([
            r.serviceName,
            r.configName,
            String(r.grpcPort),
            String(r.replicas),
            r.logLevel,
            r.image,
            String(r.redisPoolSize),
            r.redisPipelineWindow,
            String(r.redisPipelineLimit),
            String(r.localCacheSizeInBytes),
            String(r.prometheus),
            String(r.shadowMode),
            String(r.stopCountingWhenOverLimit),
            r.redisImage,
        ]).to.deep.equal(
            [
                "ratelimitServiceName",
                "configName",
                "ratelimitGrpcPort",
                "ratelimitReplicas",
                "ratelimitLogLevel",
                "ratelimitImage",
                "redisPoolSize",
                "redisPipelineWindow",
                "redisPipelineLimit",
                "localCacheSizeInBytes",
                "ratelimitPrometheus",
                "shadowMode",
                "stopCountingWhenOverLimit",
                "redisImage",
            ].map(d),
        );
        expect(r.namespace).to.equal(d("ratelimitNamespace"));
        expect((plan.filters[0].spec as any).configPatches[0].patch.value.typed_config.timeout).to.equal(d("rateLimitTimeout"));
    });

    it('given values are passed through, falsy ones (0, false, "0") included', () => {
        const plan = planGlobalRateLimit(
            G({
                namespace: "shop",
                timeout: "0.5s",
                failureModeDeny: false,
                awaitRollout: false,
                filterNamePrefix: "shop-rl",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop-edge", virtualHosts: ["*:80", "*:443"] },
                service: {
                    name: "rl",
                    configName: "rl-config",
                    grpcPort: 9001,
                    replicas: 3,
                    logLevel: ServiceLogLevel.Debug,
                    image: "registry.example/ratelimit:1",
                    redisPoolSize: 20,
                    redisPipelineWindow: "0ms",
                    redisPipelineLimit: 8,
                    localCacheSizeInBytes: 0,
                    prometheus: true,
                    shadowMode: true,
                    stopCountingWhenOverLimit: true,
                },
                redis: { image: "redis:7", maxMemory: "100mb" },
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expectGolden("global-ratelimit/service-given", plan.service);
        expect(plan.grpcAddress).to.equal("rl.shop.svc.cluster.local:9001");
        expect(plan.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["shop-rl", "shop-edge"],
            ["shop-rl-svc", "shop-edge"],
        ]);
        const typed = (plan.filters[0].spec as any).configPatches[0].patch.value.typed_config;
        expect([typed.failure_mode_deny, typed.timeout, typed.rate_limit_service.grpc_service.envoy_grpc]).to.deep.equal([
            false,
            "0.5s",
            { cluster_name: "outbound|9001||rl.shop.svc.cluster.local", authority: "rl.shop.svc.cluster.local" },
        ]);
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["*:80", "*:443"]);
    });

    it('the zero-like values pass through where the default is not zero (0 cache, window "0", pipeline limit 0)', () => {
        const r = planGlobalRateLimit(SVC({ localCacheSizeInBytes: 0, redisPipelineWindow: "0", redisPipelineLimit: 0, prometheus: false, shadowMode: false }))
            .service.ratelimit;
        expect([r.localCacheSizeInBytes, r.redisPipelineWindow, r.redisPipelineLimit, r.prometheus, r.shadowMode]).to.deep.equal([0, "0", 0, false, false]);
    });

    it("allVirtualHosts: every virtual host (Istio's empty name) and the HTTP filter on every listener; route rules still name the listed hosts", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["*:8080"], allVirtualHosts: true },
                rules: [
                    { name: "all", requestsPerUnit: 1, unit: M },
                    { name: "api", route: { name: "api" }, requestsPerUnit: 2, unit: M },
                ],
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(
            (plan.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([undefined]);
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal([""]);
        expect((plan.filters[2].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["*:8080"]);
    });

    it("scoped (the default): the HTTP filter on the virtual hosts' ports only, one patch each; route rules without a virtual host go on each listed one", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80", "shop.example.com:443", "*.shop.example.com:80"] },
                rules: [{ name: "co", route: { name: "checkout" }, requestsPerUnit: 2, unit: M }],
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(
            (plan.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([80, 443]);
        expect(
            (plan.filters[1].spec as any).configPatches.map((p: any) => [p.match.routeConfiguration.vhost.name, p.match.routeConfiguration.vhost.route.name]),
        ).to.deep.equal([
            ["shop.example.com:80", "checkout"],
            ["shop.example.com:443", "checkout"],
            ["*.shop.example.com:80", "checkout"],
        ]);
        for (const f of plan.filters) expect((f.spec as any).priority, f.name).to.equal(10);
        // Virtual hosts named after the Gateway's port 80, listener on the pods' 8080 (a Service mapping 80 to 8080).
        const mapped = planGlobalRateLimit(G({ gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"], listenerPorts: [8080] } }));
        expect(
            (mapped.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([8080]);
        expect((mapped.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["shop.example.com:80"]);
    });

    it("a Gateway API Gateway: the filters target it by name in its namespace (no workload selector); the NetworkPolicy admits its pods by Istio's label", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { gatewayApiName: "shop-gw", namespace: "shop", virtualHosts: ["shop.example.com:80"] },
                accessPolicy: { gatewayPrincipal: "cluster.local/ns/shop/sa/shop-gw-istio" },
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        for (const f of plan.filters) {
            expect(f.namespace).to.equal("shop");
            expect((f.spec as any).workloadSelector).to.equal(undefined);
            expect((f.spec as any).targetRefs).to.deep.equal([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "shop-gw" }]);
        }
        const np = plan.policies.find((p) => p.kind === "NetworkPolicy" && p.metadata.name === "ratelimit-from-gateway");
        expect(JSON.stringify(np!.spec.ingress)).to.contain('"gateway.networking.k8s.io/gateway-name":"shop-gw"');
    });

    it("filters: <prefix>-svc only with virtual-host limits, <prefix>-svc-api only with route limits", () => {
        const routeOnly = planGlobalRateLimit(G({ rules: [{ name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M }] }));
        expect(routeOnly.problems).to.deep.equal([]);
        expect(routeOnly.filters.map((f) => f.name)).to.deep.equal(["default-ratelimit", "default-ratelimit-svc-api"]);
        const both = planGlobalRateLimit(
            G({
                rules: [
                    { name: "all", requestsPerUnit: 10, unit: M },
                    { name: "api", route: { name: "api", virtualHost: "*:80" }, requestsPerUnit: 1, unit: M },
                ],
                gateway: { selector: { app: "gw" }, namespace: "edge" },
                filterLayout: FilterLayout.Shared,
            }),
        );
        expect(both.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["filter-ratelimit", "edge"],
            ["filter-ratelimit-svc", "edge"],
            ["filter-ratelimit-svc-api", "edge"],
        ]);
        const api = both.filters[2].spec as any;
        expect(api.workloadSelector).to.deep.equal({ labels: { app: "gw" } });
        expect(api.configPatches.map((p: any) => p.match.routeConfiguration.vhost)).to.deep.equal([{ name: "*:80", route: { name: "api", action: "ANY" } }]);
        // url-path (the default) keeps the virtual host's limits on the route; literal replaces them.
        expect(api.configPatches[0].patch.value.typed_per_filter_config["envoy.filters.http.ratelimit"].vh_rate_limits).to.equal("INCLUDE");
        const literal = planGlobalRateLimit(
            G({
                pathKey: PathKeyMode.Literal,
                filterLayout: FilterLayout.Shared,
                rules: [{ name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M }],
            }),
        );
        expect(literal.filters[1].spec.configPatches[0]).to.not.have.nested.property("patch.value.typed_per_filter_config");
        const perPathOnly = planGlobalRateLimit(G({ rules: undefined, perPath: { eachPath: { requestsPerUnit: 5, unit: M } } }));
        expect(perPathOnly.filters.map((f) => f.name)).to.deep.equal(["default-ratelimit", "default-ratelimit-svc"]);
    });

    it("per-instance: the route's RateLimitPerRoute holds its own actions, then the virtual host's (url-path) or its own only (literal); nothing at stage 0", () => {
        const rules = [
            { name: "all", requestsPerUnit: 10, unit: M },
            { name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M },
        ];
        const NAME = "envoy.filters.http.ratelimit/default/ratelimit";
        const per = (pathKey: PathKeyMode) => {
            const plan = planGlobalRateLimit(G({ rules, pathKey }));
            expect(plan.problems).to.deep.equal([]);
            const vh = (plan.filters[1].spec.configPatches[0] as any).patch.value;
            const route = (plan.filters[2].spec.configPatches[0] as any).patch.value;
            expect(Object.keys(vh)).to.deep.equal(["typed_per_filter_config"]);
            expect(Object.keys(route)).to.deep.equal(["typed_per_filter_config"]);
            return { vh: vh.typed_per_filter_config[NAME], route: route.typed_per_filter_config[NAME] };
        };
        const u = per(PathKeyMode.UrlPath);
        expect(u.vh["@type"]).to.equal("type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute");
        expect([u.vh.domain, u.route.domain]).to.deep.equal(["shop", "shop"]);
        // "all" is a virtual-host rule: one entry; "api" a route rule: one entry, then the virtual host's.
        expect(u.vh.rate_limits).to.have.length(1);
        expect(u.route.rate_limits).to.have.length(2);
        expect(u.route.rate_limits[1]).to.deep.equal(u.vh.rate_limits[0]);
        expect(u.route.rate_limits[0]).to.not.deep.equal(u.vh.rate_limits[0]);
        const l = per(PathKeyMode.Literal);
        expect(l.route.rate_limits).to.have.length(1);
        expect(l.route.rate_limits[0]).to.deep.equal(u.route.rate_limits[0]);
    });

    it('the Redis connection: an existing Redis with its password Secret (key defaults to "password")', () => {
        expect(planGlobalRateLimit(EXT({ passwordSecret: { name: "cache-auth" } })).service.redis).to.deep.include({
            mode: "external",
            addresses: ["redis.cache:6379"],
            auth: { kind: "given", secret: { name: "cache-auth", key: "password" } },
            tls: false,
        });
    });

    it("the Redis connection: Sentinel with master, both passwords, TLS and CA", () => {
        const plan = planGlobalRateLimit(
            REDIS({
                mode: RedisModeName.Sentinel,
                addresses: ["s-0:26379", "s-1:26379"],
                sentinelMaster: "mymaster",
                passwordSecret: { name: "auth", key: "pw" },
                sentinelPasswordSecret: { name: "s-auth" },
                tls: true,
                tlsCaSecret: "redis-ca",
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(plan.service.redis).to.deep.include({
            mode: "sentinel",
            addresses: ["s-0:26379", "s-1:26379"],
            sentinelMaster: "mymaster",
            auth: { kind: "given", secret: { name: "auth", key: "pw" } },
            sentinelPassword: { name: "s-auth", key: "password" },
            tls: true,
            tlsCaSecret: "redis-ca",
        });
        // An existing Redis: the Redis image stays the default (nothing is deployed).
        expect(plan.service.ratelimit.redisImage).to.equal("docker.io/library/redis:7.0.15-alpine");
    });

    it("the Redis connection: Cluster seeds, nothing else", () => {
        const redis = planGlobalRateLimit(REDIS({ mode: RedisModeName.Cluster, addresses: ["r-0:6379", "r-1:6379"] })).service.redis;
        expect(redis).to.deep.include({ mode: "cluster", addresses: ["r-0:6379", "r-1:6379"], tls: false, auth: { kind: "none" } });
        expect(redis).to.not.have.any.keys("sentinelMaster", "sentinelPassword", "tlsCaSecret");
    });

    it("accessPolicy: the policies of the named principal; none while there is a problem", () => {
        const principal = "shop.example/ns/shop-edge/sa/shop-gateway";
        const plan = planGlobalRateLimit(G({ accessPolicy: { gatewayPrincipal: principal } }));
        expect(plan.policies.map((p) => [p.kind, p.metadata.name, p.metadata.namespace])).to.deep.equal([
            ["AuthorizationPolicy", "ratelimit-from-gateway", "default"],
            ["AuthorizationPolicy", "redis-from-ratelimit", "default"],
            ["NetworkPolicy", "ratelimit-from-gateway", "default"],
            ["NetworkPolicy", "redis-from-ratelimit", "default"],
        ]);
        expect(plan.policies[0].spec.rules[0].from[0].source.principals).to.deep.equal([principal]);
        expect(plan.policies[2].spec.ingress[0].from[0].podSelector.matchLabels).to.deep.equal({ app: "shop-gateway" });
        // An existing Redis: only the service's policies.
        expect(planGlobalRateLimit(EXT({})).policies).to.deep.equal([]);
        expect(planGlobalRateLimit({ ...EXT({}), accessPolicy: { gatewayPrincipal: principal } }).policies.map((p) => [p.kind, p.metadata.name])).to.deep.equal(
            [
                ["AuthorizationPolicy", "ratelimit-from-gateway"],
                ["NetworkPolicy", "ratelimit-from-gateway"],
            ],
        );
        // A problem elsewhere: no policy is computed.
        expect(planGlobalRateLimit(G({ accessPolicy: { gatewayPrincipal: principal }, service: { replicas: 0 } })).policies).to.deep.equal([]);
    });

    it("bad arguments still give a plan (no TypeError): every problem is reported at once", () => {
        const plan = planGlobalRateLimit(G({ gateway: null, domain: undefined, accessPolicy: null }));
        expect(plan.problems.map((p) => p.key)).to.deep.equal(["domain", "gateway", "accessPolicy.gatewayPrincipal"]);
        expect(plan.filters[0].spec.workloadSelector).to.deep.equal({ labels: {} });
        expect(plan.policies).to.deep.equal([]);
    });
});

describe("GlobalRateLimit helpers", () => {
    it("configDefault: a key's documented default; an unknown key is an internal error", () => {
        expect(configDefault("ratelimitGrpcPort")).to.equal("8081");
        expect(configDefault("rateLimitTimeout")).to.equal("10s");
        expect(() => configDefault("nope")).to.throw(Error, "internal: no config key nope");
    });

    it("dnsProblem: label vs subdomain texts and lengths (63, 253), the field and value kept", () => {
        expect(dnsProblem("f", "a".repeat(63), "label")).to.deep.equal([]);
        expect(dnsProblem("f", "a.b", "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a".repeat(253), "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a".repeat(64), "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a.b", "label")).to.deep.equal([{ key: "f", value: "a.b", problem: LABEL, fix: 'use "a-b"' }]);
        expect(dnsProblem("f", "a".repeat(254), "subdomain")).to.deep.equal([
            { key: "f", value: "a".repeat(254), problem: SUBDOMAIN, fix: `use "${"a".repeat(253)}"` },
        ]);
        expect(dnsProblem("f", undefined, "label")).to.deep.equal([{ key: "f", value: undefined, problem: LABEL, fix: 'use "name"' }]);
        expect(dnsProblem("f", null, "subdomain")).to.deep.equal([{ key: "f", value: null, problem: SUBDOMAIN, fix: 'use "name"' }]);
        expect(dnsProblem("f", "--", "label")).to.deep.equal([{ key: "f", value: "--", problem: LABEL, fix: 'use "name"' }]);
        expect(dnsProblem("f", ".Shop_Limits.", "subdomain")).to.deep.equal([
            { key: "f", value: ".Shop_Limits.", problem: SUBDOMAIN, fix: 'use "shop-limits"' },
        ]);
        expect(dnsProblem("f", "a.-b-.c", "subdomain")).to.deep.equal([{ key: "f", value: "a.-b-.c", problem: SUBDOMAIN, fix: 'use "a.b.c"' }]);
        expect(dnsProblem("f", 5, "label")).to.deep.equal([{ key: "f", value: 5, problem: LABEL, fix: 'use "5"' }]);
    });

    it("dnsProblem: every suggested fix is itself valid", () => {
        for (const kind of ["label", "subdomain"] as const) {
            for (const v of [
                "Shop_Limits",
                "a.b",
                "a..b",
                "-a-",
                ".a.",
                "a.-b",
                "A B C",
                "a".repeat(300),
                `${"a".repeat(62)}.b`,
                `${"a".repeat(252)}-.b`,
                "",
                "é",
                undefined,
            ]) {
                const [p] = dnsProblem("f", v, kind);
                if (!p) continue;
                const fixed = /^use "(.*)"$/.exec(p.fix)![1];
                expect(dnsProblem("f", fixed, kind), `${kind} ${String(v)} → ${fixed}`).to.deep.equal([]);
            }
        }
    });

    it("portProblem: 1 to 65535, whole numbers only", () => {
        for (const ok of [1, 80, 65535]) expect(portProblem("p", ok), String(ok)).to.deep.equal([]);
        for (const bad of [0, -1, 65536, 1.5, "80", undefined, null, NaN]) {
            expect(portProblem("p", bad), String(bad)).to.deep.equal([{ key: "p", value: bad, problem: PORT_RANGE, fix: "use e.g. 8081" }]);
        }
    });

    it("selectorProblems: the field prefix is the caller's", () => {
        expect(selectorProblems("gatewaySelector", { app: "a b" })).to.deep.equal([
            { key: "gatewaySelector.app", value: "a b", problem: LABEL_BAD, fix: LABEL_BAD_FIX },
        ]);
        expect(selectorProblems("s", [])).to.deep.equal([{ key: "s", value: [], problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]);
        expect(selectorProblems("s", { "a.b/c_d.e-f": "X_y.z-1" })).to.deep.equal([]);
    });
});

describe("component arguments: checks a mutation run showed untested (docs/proof/mutation.md)", () => {
    it("a virtual host given as a nested list is refused (its string form would look valid)", () => {
        expect(planGlobalRateLimit(GW({ virtualHosts: [["*:80"]] })).problems).to.deep.equal([
            { key: "gateway.virtualHosts[0]", value: ["*:80"], problem: VHOST, fix: VHOST_FIX },
        ]);
    });

    it("a timeout given as a list is refused (its string form would look valid)", () => {
        expect(planGlobalRateLimit(G({ timeout: ["10s"] })).problems.map(({ fixWith: _f, ...p }) => p)).to.deep.equal([
            { key: "timeout", value: ["10s"], problem: TIMEOUT, fix: 'set timeout to "10s"' },
        ]);
    });

    it("tls: false spelled out does not excuse another existing-Redis field with the in-cluster Redis", () => {
        expect(planGlobalRateLimit(REDIS({ tls: false, addresses: ["redis:6379"] })).problems.map(({ fixWith: _f, ...p }) => p)).to.deep.equal([
            { key: "redis.addresses", value: ["redis:6379"], problem: EXISTING_ONLY, fix: 'remove redis.addresses, or set redis.mode to "external"' },
        ]);
    });

    it("the typed Redis choice of a Sentinel connection keeps the Sentinels' password Secret", () => {
        const c = {
            mode: "sentinel",
            addresses: ["s-0:26379"],
            sentinelMaster: "mymaster",
            sentinelPassword: { name: "s-auth", key: "pw" },
            tls: false,
        } as const;
        expect(redisOptionsOf(c as any, "redis:7", "160mb")).to.deep.equal({
            mode: "sentinel",
            addresses: ["s-0:26379"],
            sentinelMaster: "mymaster",
            sentinelPasswordSecret: { name: "s-auth", key: "pw" },
        });
    });

    it("bad arguments throw an InputError (component arguments), its message headed by the component and its name", () => {
        const err = argsError("GlobalRateLimit edge", [{ key: "domain", value: "", problem: "p", fix: "f" }]);
        expect(err.name).to.equal("InputError");
        let thrown: Error | undefined;
        try {
            new LocalRateLimit("orders-bucket", { selector: {}, port: 8080, bucket: 10, namespace: "shop" });
        } catch (e) {
            thrown = e as Error;
        }
        expect(thrown?.name).to.equal("InputError");
        expect(thrown?.message).to.match(/^LocalRateLimit orders-bucket: invalid arguments \(1 problem\); nothing was created:/);
        // One error class for both inputs: a component's arguments and the stack's config differ only in subject.
        expect(thrown).to.be.instanceOf(InputError);
        expect((thrown as InputError).subject).to.deep.equal({ kind: "component-args", component: "LocalRateLimit orders-bucket" });
        expect((thrown as InputError).problems.map((p) => p.key)).to.deep.equal(["selector"]);
        let config: unknown;
        try {
            resolveSettings({ localBucket: "0" });
        } catch (e) {
            config = e;
        }
        expect(config).to.be.instanceOf(InputError);
        expect((config as InputError).subject).to.deep.equal({ kind: "stack-config" });
        expect((config as InputError).problems.map((p) => p.key)).to.include("localBucket");
    });
});
