/**
 * The package's components on their own, under Pulumi's mocks, for a setup that is not bookinfo:
 * a shop's own gateway with path, header and client-address rules, and a shop workload with a
 * local bucket. Expected values are written from the rules, not read from the code.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { parse } from "yaml";
import { ApiProfileName, MutualTlsScope } from "../../components/common/mesh-enums";
import { Bookinfo } from "../../components/bookinfo/component";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit } from "../../builders/rule-args";
import { LocalRateLimit } from "../../components/local-ratelimit/component";
import { ManagedApi } from "../../components/managed-api/component";
import { MeshMutualTls } from "../../components/mesh-mtls/component";
import { RedisModeName } from "../../builders/redis-connection";
import { claimListeners } from "../../components/global-ratelimit/listener-claims";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";
import { explain } from "../../gateway-model/explain";
import { SHOP_RULES, shopObjects } from "./rules.test";

/** Runs `build` under mocks and returns every registration (components included). */
const registered = (build: () => void) => registerComponents(build, "shop", "test");

const find = (objs: K8sObject[], kind: string, name: string) => {
    const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`${kind} ${name} missing; have ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
    return o as any;
};
const env = (d: any) => Object.fromEntries(d.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

describe("package components on their own (a shop, not bookinfo)", function () {
    this.timeout(60_000);

    it("GlobalRateLimit on the shop's gateway: service, Redis, filters and config in the shop's namespaces", async () => {
        const { all, objects } = await registered(() => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: SHOP_RULES,
            });
        });
        expect(all.filter((r) => r.type.startsWith("mesh-ratelimit:")).map((r) => r.type)).to.have.members([
            "mesh-ratelimit:index:GlobalRateLimit",
            "mesh-ratelimit:index:Redis",
            "mesh-ratelimit:index:RateLimitService",
            // The per-value counters' own service and Redis (counterStore: split, the default).
            "mesh-ratelimit:index:Redis",
            "mesh-ratelimit:index:RateLimitService",
            // The dashboard ConfigMap, on by default (monitoring.dashboard).
            "mesh-ratelimit:index:RateLimitMonitoring",
        ]);
        const filters = objects.filter((o) => o.kind === "EnvoyFilter") as any[];
        expect(filters.map((f) => `${f.metadata.namespace}/${f.metadata.name}`).sort()).to.deep.equal([
            "shop/shop-ratelimit",
            "shop/shop-ratelimit-per-value",
            "shop/shop-ratelimit-per-value-svc",
            "shop/shop-ratelimit-per-value-svc-api",
            "shop/shop-ratelimit-svc",
            "shop/shop-ratelimit-svc-api",
        ]);
        for (const f of filters) expect(f.spec.workloadSelector.labels).to.deep.equal({ app: "shop-gateway" });
        const http = find(objects, "EnvoyFilter", "shop-ratelimit").spec.configPatches[0].patch.value.typed_config;
        expect(http.domain).to.equal("shop");
        expect(http.rate_limit_service.grpc_service.envoy_grpc).to.deep.equal({
            cluster_name: "outbound|8081||ratelimit.shop.svc.cluster.local",
            authority: "ratelimit.shop.svc.cluster.local",
        });
        const cfg = parse(find(objects, "ConfigMap", "ratelimit-config").data["config.yaml"]);
        expect(cfg.domain).to.equal("shop");
        // Fixed counters here; the per-value rules' counters in the per-value service's config.
        expect(cfg.descriptors.map((d: any) => d.value)).to.deep.equal(["search", "items", "beta", "checkout"]);
        const perValue = parse(find(objects, "ConfigMap", "ratelimit-config-per-value").data["config.yaml"]);
        expect(perValue.descriptors.map((d: any) => d.value)).to.deep.equal(["login-per-client", "per-api-key", "per-client"]);
        expect(perValue.descriptors[0].descriptors).to.have.length(1);
        expect(perValue.descriptors[0].descriptors[0]).to.deep.include({ key: "masked_remote_address", rate_limit: { unit: "minute", requests_per_unit: 5 } });
        const svc = find(objects, "Deployment", "ratelimit");
        expect(svc.metadata.namespace).to.equal("shop");
        expect(env(svc).REDIS_URL).to.equal("redis.shop.svc.cluster.local:6379");
        expect(find(objects, "Deployment", "redis").metadata.namespace).to.equal("shop");

        // The user's own Gateway and VirtualService plus what the component rendered, through the model.
        const user = shopObjects(SHOP_RULES).filter((o) => o.kind === "Gateway" || o.kind === "VirtualService");
        const x = explain([...user, ...objects], "/login?next=/cart", { clientAddress: "203.0.113.5" });
        expect(x.descriptors.map((d) => d.limit?.entry)).to.deep.equal([
            "rule=login-per-client / masked_remote_address (catch-all)",
            // No x-api-key: the per-value rule's missing counter, per client.
            "rule=per-api-key / missing_value=shared / masked_remote_address (catch-all)",
            "rule=per-client / masked_remote_address (catch-all)",
        ]);
        expect(x.descriptors[0].bucket).to.equal("shop_rule_login-per-client_masked_remote_address_203.0.113.5/32_{window}");
    });

    it("GlobalRateLimit with an existing Redis: no Redis objects, the service points at it with its password Secret", async () => {
        const { objects } = await registered(() => {
            new GlobalRateLimit("edge", {
                domain: "edge",
                gateway: { selector: { istio: "edge-gateway" }, virtualHosts: ["edge.example.com:80"] },
                namespace: "limits",
                rules: [{ name: "all", requestsPerUnit: 1000, unit: LimitUnit.Second }],
                redis: { mode: RedisModeName.External, addresses: ["redis.cache.svc.cluster.local:6379"], passwordSecret: { name: "cache-auth" } },
            });
        });
        expect(objects.filter((o) => o.metadata.name === "redis" || o.kind === "Secret")).to.deep.equal([]);
        const e = env(find(objects, "Deployment", "ratelimit"));
        expect(e.REDIS_URL).to.equal("redis.cache.svc.cluster.local:6379");
        expect(e.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "cache-auth", key: "password" } });
        expect(
            objects
                .filter((o) => o.kind === "EnvoyFilter")
                .map((o) => o.metadata.name)
                .sort(),
        ).to.deep.equal(["limits-ratelimit", "limits-ratelimit-svc"]);
    });

    it("GlobalRateLimit with bad arguments: nothing is registered, not even the component; every field is named with its fix", async () => {
        let err: Error | undefined;
        const { all } = await registered(() => {
            try {
                new GlobalRateLimit("bad", {
                    domain: "shop limits",
                    gateway: { selector: {} },
                    rules: [
                        { name: "ok", requestsPerUnit: 1, unit: LimitUnit.Minute },
                        { name: "x", path: { prefix: "api" }, requestsPerUnit: 1, unit: LimitUnit.Minute },
                        { name: "y", header: { name: "X-Key", perValue: true }, requestsPerUnit: 0, unit: "minutes" as LimitUnit },
                    ],
                    redis: { mode: RedisModeName.External },
                });
            } catch (e) {
                err = e as Error;
            }
        });
        expect(all).to.deep.equal([]);
        expect(err?.message).to.match(/^GlobalRateLimit bad: invalid arguments \(8 problems\); nothing was created:/);
        for (const field of [
            "rules[1].path.prefix",
            "rules[2].header.name",
            "rules[2].requestsPerUnit",
            "rules[2].unit",
            "domain",
            "gateway.selector",
            "gateway.virtualHosts",
            "redis.addresses",
        ]) {
            expect(err?.message).to.include(`  - ${field} = `);
        }
        expect(err?.message).to.include('fix: use e.g. "/api"');
        expect(err?.message).to.include('fix: set domain to "shop-limits"');
    });

    it("GlobalRateLimit on its own creates the ServiceAccount of every pod it runs (a missing one keeps the pods from being created)", async () => {
        const { objects } = await registered(() => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: SHOP_RULES,
            });
        });
        const deployments = objects.filter((o) => o.kind === "Deployment") as any[];
        expect(deployments.map((d) => d.metadata.name).sort()).to.deep.equal(["ratelimit", "ratelimit-per-value", "redis", "redis-per-value"]);
        for (const d of deployments) {
            const sa = d.spec.template.spec.serviceAccountName;
            expect(sa, `${d.metadata.name} runs under its own ServiceAccount`).to.be.a("string").and.not.equal("default");
            const account = objects.find((o) => o.kind === "ServiceAccount" && o.metadata.name === sa && o.metadata.namespace === d.metadata.namespace) as any;
            expect(account, `ServiceAccount shop/${sa} of Deployment ${d.metadata.name}`).to.exist;
            expect(account.automountServiceAccountToken).to.equal(false);
            // Created before the Deployment: it comes first in registration order.
            expect(objects.indexOf(account)).to.be.lessThan(objects.indexOf(d));
        }
        // Without accessPolicy the component creates no policy (it cannot know the gateway's identity).
        expect(objects.filter((o) => o.kind === "AuthorizationPolicy" || o.kind === "NetworkPolicy")).to.deep.equal([]);
    });

    it("GlobalRateLimit with accessPolicy: only the named gateway identity reaches the gRPC port, only the service reaches Redis", async () => {
        const { objects } = await registered(() => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway", tier: "edge" }, namespace: "shop-edge", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: SHOP_RULES,
                service: { grpcPort: 9001 },
                accessPolicy: { gatewayPrincipal: "shop.example/ns/shop-edge/sa/shop-gateway" },
            });
        });
        const get = (kind: string, name: string) =>
            find(
                objects.filter((o) => o.kind === kind),
                kind,
                name,
            );
        const svc = get("AuthorizationPolicy", "ratelimit-from-gateway");
        expect(svc.metadata.namespace).to.equal("shop");
        expect(svc.spec.selector.matchLabels).to.deep.equal({ app: "ratelimit" });
        expect(svc.spec.rules).to.deep.equal([
            { from: [{ source: { principals: ["shop.example/ns/shop-edge/sa/shop-gateway"] } }], to: [{ operation: { ports: ["9001"] } }] },
        ]);
        // Redis admits the service's own identity, in the gateway's trust domain.
        expect(get("AuthorizationPolicy", "redis-from-ratelimit").spec.rules[0].from[0].source.principals).to.deep.equal(["shop.example/ns/shop/sa/ratelimit"]);
        const net = get("NetworkPolicy", "ratelimit-from-gateway").spec;
        expect(net.ingress[0].from).to.deep.equal([
            {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "shop-edge" } },
                podSelector: { matchLabels: { app: "shop-gateway", tier: "edge" } },
            },
        ]);
        expect(net.ingress[0].ports).to.deep.equal([{ protocol: "TCP", port: 9001 }]);
        expect(get("NetworkPolicy", "redis-from-ratelimit").spec.ingress[0].ports).to.deep.equal([{ protocol: "TCP", port: 6379 }]);
    });

    it("GlobalRateLimit with a bad accessPolicy principal: nothing registered, the field named, a spiffe:// prefix dropped in the fix", async () => {
        for (const [principal, fix] of [
            ["spiffe://cluster.local/ns/shop/sa/gw", 'fix: set accessPolicy.gatewayPrincipal to "cluster.local/ns/shop/sa/gw"'],
            ["shop-gateway", 'fix: set accessPolicy.gatewayPrincipal to "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"'],
            [undefined, 'fix: set accessPolicy.gatewayPrincipal to "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"'],
        ] as const) {
            let err: Error | undefined;
            const { all } = await registered(() => {
                try {
                    new GlobalRateLimit("p", {
                        domain: "shop",
                        gateway: { selector: { app: "gw" }, virtualHosts: ["*:80"] },
                        rules: SHOP_RULES,
                        accessPolicy: { gatewayPrincipal: principal as string },
                    });
                } catch (e) {
                    err = e as Error;
                }
            });
            expect(all, String(principal)).to.deep.equal([]);
            expect(err?.message, String(principal)).to.include("  - accessPolicy.gatewayPrincipal = ");
            expect(err?.message, String(principal)).to.include(fix);
        }
    });

    it("LocalRateLimit on a shop workload: named routes get the bucket per route, the filter only its stat prefix", async () => {
        const { objects } = await registered(() => {
            new LocalRateLimit("orders-bucket", {
                selector: { app: "orders" },
                port: 8080,
                bucket: 20,
                fillInterval: "1s",
                routes: ["orders-api", "orders-admin"],
                namespace: "shop",
            });
        });
        const f = find(objects, "EnvoyFilter", "orders-bucket");
        expect(f.metadata.namespace).to.equal("shop");
        expect(f.spec.workloadSelector.labels).to.deep.equal({ app: "orders" });
        const [filter, ...routes] = f.spec.configPatches;
        expect(filter.patch.value.typed_config.value).to.deep.equal({ stat_prefix: "http_local_rate_limiter" });
        expect(routes.map((r: any) => [r.match.routeConfiguration.vhost.name, r.match.routeConfiguration.vhost.route.name])).to.deep.equal([
            ["inbound|http|8080", "orders-api"],
            ["inbound|http|8080", "orders-admin"],
        ]);
        expect(filter.patch.value.name).to.equal("envoy.filters.http.local_ratelimit/shop/orders-bucket");
        const bucket = routes[0].patch.value.typed_per_filter_config["envoy.filters.http.local_ratelimit/shop/orders-bucket"].value;
        expect(bucket.token_bucket).to.deep.equal({ max_tokens: 20, tokens_per_fill: 20, fill_interval: "1s" });
        expect(bucket.filter_enforced.default_value).to.deep.equal({ numerator: 100, denominator: "HUNDRED" });
    });

    it("LocalRateLimit on every route: one filter with the bucket on the inbound chain", async () => {
        const { objects } = await registered(() => {
            new LocalRateLimit("cart-bucket", { selector: { app: "cart" }, port: 9000, bucket: 3, namespace: "shop" });
        });
        const f = find(objects, "EnvoyFilter", "cart-bucket");
        expect(f.metadata.namespace).to.equal("shop");
        expect(f.spec.configPatches).to.have.length(1);
        expect(f.spec.configPatches[0].patch.value.typed_config.value.token_bucket).to.deep.equal({ max_tokens: 3, tokens_per_fill: 3, fill_interval: "60s" });
    });

    it("Bookinfo on its own: another namespace, gateway selector and port; routes as given", async () => {
        const { objects } = await registered(() => {
            new Bookinfo("demo", {
                namespace: "demo",
                gatewaySelector: { app: "edge" },
                gatewayPort: 80,
                gatewayName: "demo-gw",
                routes: [{ name: "all", prefix: ["/"] }],
            });
        });
        const gw = find(objects, "Gateway", "demo-gw");
        expect(gw.metadata.namespace).to.equal("demo");
        // Only the VirtualServices of namespace demo bind to it.
        expectGolden("bookinfo/gateway-spec-demo", gw.spec);
        expect(gw.spec.servers.map((sv: any) => sv.hosts)).to.deep.equal([["demo/*"]]);
        expectGolden("bookinfo/virtual-service-http-demo", find(objects, "VirtualService", "bookinfo").spec.http);
        expect(objects.filter((o) => o.kind === "Deployment").map((o) => o.metadata.namespace)).to.satisfy(
            (ns: string[]) => ns.length === 6 && ns.every((n) => n === "demo"),
        );
    });

    it("ManagedApi needs the cluster's CIDRs and an Endpoints service name; MeshMutualTls seed edits the mesh ConfigMap", async () => {
        let err: Error | undefined;
        await registered(() => {
            try {
                new ManagedApi("esp", { serviceName: "", includeIpRanges: ["10.4.0.0/33"] });
            } catch (e) {
                err = e as Error;
            }
        });
        expect(err?.message).to.include("  - serviceName = (not set): is required: ESP needs the Cloud Endpoints service it serves (--service)");
        expect(err?.message).to.include('fix: set serviceName to "echo-api.endpoints.MY_PROJECT.cloud.goog"');
        expect(err?.message).to.include('  - includeIpRanges = ["10.4.0.0/33"]: has invalid CIDR(s): 10.4.0.0/33');
        const { all } = await registered(() => {
            new MeshMutualTls("mtls", { scope: MutualTlsScope.Mesh, apiProfile: ApiProfileName.Seed, meshNamespace: "mesh" });
        });
        const edit = all.find((r) => r.type.startsWith("pulumi-nodejs:dynamic"));
        expect(edit?.inputs).to.deep.include({ namespace: "mesh", configMap: "istio", setting: "authPolicy", value: "MUTUAL_TLS" });
        // The default scope: STRICT for the pods of the given namespaces only, nothing mesh-wide, no ConfigMap edit.
        const scoped = await registered(() => {
            new MeshMutualTls("mtls", { apiProfile: ApiProfileName.Seed, namespaces: ["shop", "shop-data"] });
        });
        expect(scoped.all.filter((r) => r.type.startsWith("pulumi-nodejs:dynamic"))).to.deep.equal([]);
        const pas = scoped.all
            .filter((r) => r.inputs?.kind === "PeerAuthentication")
            .map((r) => [r.inputs.metadata.namespace, r.inputs.metadata.name, r.inputs.spec]);
        const spec = { selector: { matchLabels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } }, mtls: { mode: "STRICT" } };
        expect(pas).to.deep.equal([
            ["shop", "mesh-ratelimit-mtls", spec],
            ["shop-data", "mesh-ratelimit-mtls", spec],
        ]);
    });

    it("MeshMutualTls seed profile with a provider in opts: refused without kubeContext (kubectl cannot use that provider's kubeconfig), accepted with it", async () => {
        const k8s = await import("@pulumi/kubernetes");
        let err: Error | undefined;
        const refused = await registered(() => {
            const provider = new k8s.Provider("shop-cluster", { kubeconfig: "{}" });
            try {
                new MeshMutualTls("mtls", { scope: MutualTlsScope.Mesh, apiProfile: ApiProfileName.Seed }, { provider });
            } catch (e) {
                err = e as Error;
            }
        });
        expect(err?.message).to.match(/kubeContext = \(not set\): must name the provider's cluster/);
        expect(err?.message).to.include("or use apiProfile current");
        expect(refused.all.filter((r) => r.type.startsWith("pulumi-nodejs:dynamic"))).to.deep.equal([]);
        const accepted = await registered(() => {
            const provider = new k8s.Provider("shop-cluster", { kubeconfig: "{}" });
            new MeshMutualTls("mtls", { scope: MutualTlsScope.Mesh, apiProfile: ApiProfileName.Seed, kubeContext: "shop" }, { provider });
        });
        expect(accepted.all.find((r) => r.type.startsWith("pulumi-nodejs:dynamic"))?.inputs).to.deep.include({ kubeContext: "shop" });
    });

    it("LocalRateLimit with bad arguments: the field, the value and the fix", async () => {
        let err: Error | undefined;
        const { all } = await registered(() => {
            try {
                new LocalRateLimit("bad-bucket", { selector: { app: "cart" }, port: 70000, bucket: 0, fillInterval: "10ms", namespace: "shop" });
            } catch (e) {
                err = e as Error;
            }
        });
        expect(all).to.deep.equal([]);
        expect(err?.message).to.include("  - port = 70000: must be between 1 and 65535\n    fix: set port to 65535");
        expect(err?.message).to.include("  - bucket = 0: must be between 1 and 1000000000\n    fix: set bucket to 1");
        expect(err?.message).to.include(
            "  - fillInterval = \"10ms\": must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')\n    fix: set fillInterval to \"0.05s\"",
        );
    });
});

describe("package components: several instances in one program", function () {
    this.timeout(60_000);
    const rule = [{ name: "all", requestsPerUnit: 10, unit: LimitUnit.Minute }];

    it("two GlobalRateLimits on two gateways and two LocalRateLimits with the same filter name: every resource has a name of its own (no duplicate URN)", async () => {
        const { all, objects } = await registered(() => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["shop.example.com:80"] },
                namespace: "shop",
                rules: rule,
            });
            new GlobalRateLimit("blog-limits", {
                domain: "blog",
                gateway: { selector: { app: "blog-gateway" }, namespace: "blog", virtualHosts: ["blog.example.com:80"] },
                namespace: "blog",
                rules: rule,
            });
            new LocalRateLimit("shop-bucket", { selector: { app: "orders" }, port: 8080, bucket: 5, namespace: "shop", filterName: "bucket" });
            new LocalRateLimit("blog-bucket", { selector: { app: "orders" }, port: 8080, bucket: 5, namespace: "blog", filterName: "bucket" });
        });
        // Both instances sit at the root of the program, so a child's URN is its type chain and name:
        // a repeated (type, name) pair would be a duplicate URN, which the engine refuses.
        const keys = all.map((r) => `${r.type}::${r.name}`);
        const repeated = keys.filter((k, i) => keys.indexOf(k) !== i);
        expect(repeated, "registered twice").to.deep.equal([]);
        // The Kubernetes objects keep their documented names, in their own namespaces.
        const filters = objects
            .filter((o) => o.kind === "EnvoyFilter")
            .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
            .sort();
        expect(filters).to.deep.equal([
            "blog/blog-ratelimit",
            "blog/blog-ratelimit-svc",
            "blog/bucket",
            "shop/bucket",
            "shop/shop-ratelimit",
            "shop/shop-ratelimit-svc",
        ]);
        expect(
            objects
                .filter((o) => o.kind === "Deployment")
                .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
                .sort(),
        ).to.deep.equal(["blog/ratelimit", "blog/redis", "shop/ratelimit", "shop/redis"]);
    });

    it("per-instance (the default): two GlobalRateLimits on one gateway listener, each with EnvoyFilters and HTTP filters of its own, descriptors only under its own name", async () => {
        const { objects } = await registered(() => {
            for (const team of ["team-a", "team-b"])
                new GlobalRateLimit(team, {
                    domain: team,
                    gateway: { selector: { app: "edge" }, namespace: "edge", virtualHosts: [`${team}.example.com:80`] },
                    namespace: team,
                    rules: rule,
                });
        });
        const filters = objects.filter((o) => o.kind === "EnvoyFilter") as any[];
        expect(filters.map((f) => `${f.metadata.namespace}/${f.metadata.name}`).sort()).to.deep.equal([
            "edge/team-a-ratelimit",
            "edge/team-a-ratelimit-svc",
            "edge/team-b-ratelimit",
            "edge/team-b-ratelimit-svc",
        ]);
        // No route or virtual-host rate_limits that every filter on the listener would read.
        const patchValues = filters.flatMap((f) => f.spec.configPatches.map((p: any) => p.patch.value));
        expect(patchValues.filter((v: any) => v.rate_limits !== undefined || v.route?.rate_limits !== undefined)).to.deep.equal([]);
        for (const team of ["team-a", "team-b"]) {
            const svc = filters.find((f) => f.metadata.name === `${team}-ratelimit-svc`);
            const value = svc.spec.configPatches[0].patch.value;
            expect(Object.keys(value)).to.deep.equal(["typed_per_filter_config"]);
            expect(Object.keys(value.typed_per_filter_config)).to.deep.equal([`envoy.filters.http.ratelimit/${team}/ratelimit`]);
            expect(value.typed_per_filter_config[`envoy.filters.http.ratelimit/${team}/ratelimit`].domain).to.equal(team);
        }
    });

    it("shared layout: two GlobalRateLimits on the same gateway listener are refused, naming the first; another port of the same gateway is fine", async () => {
        let err: Error | undefined;
        const { all } = await registered(() => {
            new GlobalRateLimit("team-a", {
                domain: "a",
                gateway: { selector: { app: "edge" }, namespace: "edge", virtualHosts: ["a.example.com:80"] },
                namespace: "team-a",
                rules: rule,
                filterLayout: FilterLayout.Shared,
            });
            new GlobalRateLimit("team-c", {
                domain: "c",
                gateway: { selector: { app: "edge" }, namespace: "edge", virtualHosts: ["c.example.com:8443"] },
                namespace: "team-c",
                rules: rule,
                filterLayout: FilterLayout.Shared,
                filterNamePrefix: "team-c",
            });
            try {
                new GlobalRateLimit("team-b", {
                    domain: "b",
                    gateway: { selector: { app: "edge" }, namespace: "edge", virtualHosts: ["b.example.com:80"] },
                    namespace: "team-b",
                    rules: rule,
                    filterLayout: FilterLayout.Shared,
                });
            } catch (e) {
                err = e as Error;
            }
        });
        expect(err?.name).to.equal("InputError");
        expect(err?.message).to.match(/^GlobalRateLimit team-b: invalid arguments \(1 problem\); nothing was created:/);
        expect(err?.message).to.contain("the same gateway pods and listener port as GlobalRateLimit team-a");
        expect(err?.message).to.contain(
            "fix: use filterLayout: FilterLayout.PerInstance (the default; Istio 1.25 or later) on both, or put both sets of rules into GlobalRateLimit team-a",
        );
        expect(all.filter((r) => r.type === "mesh-ratelimit:index:GlobalRateLimit").map((r) => r.name)).to.deep.equal(["team-a", "team-c"]);
    });

    it("the listener claim: the same component again is not a conflict (a program evaluated twice), another component is; programs apart", () => {
        expect(claimListeners("x", ["ns|{}|80"], "p/s1")).to.equal(undefined);
        expect(claimListeners("x", ["ns|{}|80"], "p/s1")).to.equal(undefined);
        expect(claimListeners("y", ["ns|{}|443", "ns|{}|80"], "p/s1")).to.equal("x");
        expect(claimListeners("y", ["ns|{}|80"], "p/s2")).to.equal(undefined);
    });
});
