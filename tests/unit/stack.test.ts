/**
 * The objects the program registers (under Pulumi's mocks) carry every field the specification's
 * section 2 tables name, with the real identifiers of docs/proof/names.md, for both variants and both
 * API profiles. Expected values are the specification's, written here independently of the code.
 */
import { expect } from "chai";
import * as fsm from "fs";
import * as os from "os";
import * as pathm from "path";
import { parseAllDocuments } from "yaml";
import { compileFullMatch } from "../../lib/formats";
import { writeRender } from "../../render/cli";
import { REDACTED } from "../../render/render";
import { DEV, MUTATION_RUN, Rendered, rateLimitConfig, render } from "./helpers";

const GLOBAL_FILTERS = ["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api"];

describe("stack objects (spec section 2)", function () {
    this.timeout(120_000);
    const cache = new Map<string, Rendered>();
    // The specification's tables describe its one counter store (counterStore=single); the default
    // split layout is checked against them in counter-stores.test.ts.
    const get = async (variant: "A" | "B", apiProfile: "seed" | "current", given: Record<string, string> = {}) => {
        const overrides = { counterStore: "single", ...given };
        const key = JSON.stringify([variant, apiProfile, overrides]);
        // No sharing across tests in a mutation run (helpers.ts, beforeAllTests).
        if (MUTATION_RUN || !cache.has(key)) cache.set(key, await render({ variant, apiProfile, overrides }));
        return cache.get(key)!;
    };

    for (const variant of ["A", "B"] as const) {
        for (const profile of ["current", "seed"] as const) {
            describe(`variant ${variant}, profile ${profile}`, () => {
                it("2.1 ConfigMap ratelimit-config: domain and descriptors of the variant", async () => {
                    const r = await get(variant, profile);
                    const cm = r.get("ConfigMap", "ratelimit-config", "default");
                    expect(cm.apiVersion).to.equal("v1");
                    expect(Object.keys(cm.data)).to.deep.equal(["config.yaml"]);
                    const cfg = rateLimitConfig(r);
                    expect(cfg.domain).to.equal(variant === "A" ? "ratelimit" : "productpage-ratelimit");
                    const expected = [
                        { key: "PATH", value: "/productpage", rate_limit: { unit: "minute", requests_per_unit: 1 } },
                        ...(variant === "A" ? [{ key: "PATH", value: "api", rate_limit: { unit: "minute", requests_per_unit: 2 } }] : []),
                        { key: "PATH", rate_limit: { unit: "minute", requests_per_unit: 100 } },
                    ];
                    expect(cfg.descriptors).to.deep.equal(expected);
                });

                it("2.2 filters: kind, API version, namespace, selectors, and which exist", async () => {
                    const r = await get(variant, profile);
                    const expectedNames = [...(variant === "A" ? GLOBAL_FILTERS : GLOBAL_FILTERS.slice(0, 2)), "filter-local-ratelimit-svc"].sort();
                    expect(r.names("EnvoyFilter")).to.deep.equal(expectedNames);
                    for (const name of expectedNames) {
                        const f = r.get("EnvoyFilter", name);
                        expect(f.apiVersion).to.equal("networking.istio.io/v1alpha3");
                        // The gateway's namespace for its filters; the workload's own for the local bucket
                        // (Istio's root namespace would reach every namespace's app=productpage pods).
                        expect(f.metadata.namespace).to.equal(name.includes("local") ? "default" : "istio-system");
                        const labels = name.includes("local") ? { app: "productpage" } : { istio: "ingressgateway" };
                        expect(f.spec.workloadSelector.labels).to.deep.equal(labels);
                        // A fixed order against other teams' filters (after their priority-0 ones).
                        expect(f.spec.priority).to.equal(10);
                    }
                });

                it("literal tables (vhostScope all, filterNamespaces root, mutualTlsScope mesh): every filter in istio-system, vhost '', no listener port, mesh-wide mutual TLS", async () => {
                    const r = await get(variant, profile, { vhostScope: "all", filterNamespaces: "root", mutualTlsScope: "mesh" });
                    for (const name of r.names("EnvoyFilter")) expect(r.get("EnvoyFilter", name).metadata.namespace, name).to.equal("istio-system");
                    expect(
                        r.get("EnvoyFilter", "filter-ratelimit-svc").spec.configPatches.map((p: any) => p.match.routeConfiguration.vhost.name),
                    ).to.deep.equal([""]);
                    expect(
                        r
                            .get("EnvoyFilter", "filter-ratelimit")
                            .spec.configPatches.filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit")
                            .map((p: any) => p.match.listener.portNumber),
                    ).to.deep.equal([undefined]);
                    if (variant === "A")
                        expect(
                            r.get("EnvoyFilter", "filter-ratelimit-svc-api").spec.configPatches.map((p: any) => p.match.routeConfiguration.vhost.name),
                        ).to.deep.equal(["*:8080"]);
                    expect(r.find("PeerAuthentication", "mesh-ratelimit-mtls", "default")).to.equal(undefined);
                    if (profile === "seed") expect((r.find("ConfigMap", "istio", "istio-system") as any).data.mesh).to.match(/^authPolicy: MUTUAL_TLS$/m);
                    else expect((r.find("PeerAuthentication", "default", "istio-system") as any).spec).to.deep.equal({ mtls: { mode: "STRICT" } });
                });

                it("2.3 global rate-limit filter before the router on the gateway", async () => {
                    const r = await get(variant, profile);
                    const [p] = r.get("EnvoyFilter", "filter-ratelimit").spec.configPatches;
                    expect(p.applyTo).to.equal("HTTP_FILTER");
                    expect(p.match.context).to.equal("GATEWAY");
                    expect(p.match.listener.filterChain.filter.name).to.equal("envoy.filters.network.http_connection_manager");
                    expect(p.match.listener.filterChain.filter.subFilter.name).to.equal("envoy.filters.http.router");
                    // Only the Gateway's listener: other ports of a shared gateway never get the filter.
                    expect(p.match.listener.portNumber).to.equal(8080);
                    expect(p.patch.operation).to.equal("INSERT_BEFORE");
                    expect(p.patch.value.name).to.equal("envoy.filters.http.ratelimit");
                    const tc = p.patch.value.typed_config;
                    expect(tc["@type"]).to.equal("type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit");
                    expect(tc.domain).to.equal(rateLimitConfig(r).domain);
                    expect(tc.failure_mode_deny).to.equal(true);
                    expect(tc.timeout).to.equal("10s");
                    expect(tc.rate_limit_service.grpc_service.envoy_grpc).to.deep.equal({
                        cluster_name: "outbound|8081||ratelimit.default.svc.cluster.local",
                        authority: "ratelimit.default.svc.cluster.local",
                    });
                    expect(tc.rate_limit_service.transport_api_version).to.equal("V3");
                });

                it("2.4 virtual-host action sends the path without its query as PATH (CEL request.url_path)", async () => {
                    const r = await get(variant, profile);
                    const patches = r.get("EnvoyFilter", "filter-ratelimit-svc").spec.configPatches;
                    expect(patches).to.have.length(1);
                    const [p] = patches;
                    expect(p.applyTo).to.equal("VIRTUAL_HOST");
                    expect(p.match.context).to.equal("GATEWAY");
                    // The stack's own virtual host (its Gateway's host '*' on 8080), never '' (every host).
                    expect(p.match.routeConfiguration.vhost).to.deep.equal({ name: "*:8080", route: { action: "ANY" } });
                    expect(p.patch.operation).to.equal("MERGE");
                    expect(p.patch.value.rate_limits).to.deep.equal([
                        {
                            actions: [
                                {
                                    extension: {
                                        name: "envoy.rate_limit_descriptors.expr",
                                        typed_config: {
                                            "@type": "type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor",
                                            descriptor_key: "PATH",
                                            text: "request.url_path",
                                        },
                                    },
                                },
                            ],
                        },
                    ]);
                });

                it("pathKey=literal: exactly the specification's tables (request_headers :path, no vh_rate_limits, regex as written)", async () => {
                    const r = await get(variant, profile, { pathKey: "literal" });
                    const [p] = r.get("EnvoyFilter", "filter-ratelimit-svc").spec.configPatches;
                    expect(p.patch.value.rate_limits).to.deep.equal([{ actions: [{ request_headers: { header_name: ":path", descriptor_key: "PATH" } }] }]);
                    const f = r.find("EnvoyFilter", "filter-ratelimit-svc-api");
                    if (variant === "A") {
                        const v = (f as any).spec.configPatches[0].patch.value;
                        expect(Object.keys(v)).to.deep.equal(["route"]);
                        expect(v.route.rate_limits[0].actions[0].header_value_match.headers[0].safe_regex_match.regex).to.equal("/api/v1/products/[1-9][0-9]?");
                    }
                });

                it("2.5 VirtualService bookinfo: the api route split only in variant A", async () => {
                    const r = await get(variant, profile);
                    const vs = r.get("VirtualService", "bookinfo", "default");
                    expect(vs.apiVersion).to.equal("networking.istio.io/v1beta1");
                    expect(vs.spec.gateways).to.deep.equal(["bookinfo-gateway"]);
                    expect(vs.spec.hosts).to.deep.equal(["*"]);
                    const uris = (h: any) => h.match.map((m: any) => m.uri);
                    for (const h of vs.spec.http) {
                        expect(h.route).to.deep.equal([{ destination: { host: "productpage", port: { number: 9080 } } }]);
                        for (const u of uris(h)) expect(Object.keys(u)).to.have.length(1);
                    }
                    if (variant === "A") {
                        expect(vs.spec.http).to.have.length(2);
                        expect(uris(vs.spec.http[0])).to.deep.equal([
                            { exact: "/productpage" },
                            { exact: "/login" },
                            { exact: "/logout" },
                            { prefix: "/static" },
                        ]);
                        expect(vs.spec.http[1].name).to.equal("api");
                        expect(uris(vs.spec.http[1])).to.deep.equal([{ prefix: "/api/v1/products" }]);
                    } else {
                        expect(vs.spec.http.some((h: any) => h.name === "api")).to.equal(false);
                        expect(uris(vs.spec.http[0])).to.deep.include({ prefix: "/api/v1/products" });
                    }
                });

                it("2.6 route-level action on route api of vhost *:8080 (variant A only)", async () => {
                    const r = await get(variant, profile);
                    const f = r.find("EnvoyFilter", "filter-ratelimit-svc-api");
                    if (variant === "B") {
                        expect(f).to.equal(undefined);
                        return;
                    }
                    const [p] = (f as any).spec.configPatches;
                    expect(p.applyTo).to.equal("HTTP_ROUTE");
                    expect(p.match.context).to.equal("GATEWAY");
                    expect(p.match.routeConfiguration.vhost).to.deep.equal({ name: "*:8080", route: { name: "api", action: "ANY" } });
                    expect(p.patch.operation).to.equal("MERGE");
                    // The route also counts against the virtual host's per-path limit (no unmatched api path escapes).
                    expect(p.patch.value.typed_per_filter_config).to.deep.equal({
                        "envoy.filters.http.ratelimit": {
                            "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute",
                            vh_rate_limits: "INCLUDE",
                        },
                    });
                    const [action] = p.patch.value.route.rate_limits[0].actions;
                    const hvm = action.header_value_match;
                    expect(hvm.descriptor_key).to.equal("PATH");
                    expect(hvm.descriptor_value).to.equal("api");
                    expect(hvm.headers).to.have.length(1);
                    expect(hvm.headers[0].name).to.equal(":path");
                    expect(hvm.headers[0].safe_regex_match.google_re2).to.deep.equal({});
                    // The regex, run by real RE2 with Envoy's full-match semantics: n from 1 to 99 only.
                    const re = compileFullMatch(hvm.headers[0].safe_regex_match.regex);
                    for (let n = 1; n <= 99; n++) {
                        expect(re.test(`/api/v1/products/${n}`), `n=${n}`).to.equal(true);
                        expect(re.test(`/api/v1/products/${n}?a=b&c`), `n=${n} with a query`).to.equal(true);
                    }
                    expect(re.test("/api/v1/products/7?")).to.equal(true);
                    for (const bad of ["0", "100", "", "abc", "7a", "01", "7/reviews", "7/?x", "100?x=1", "7#x"])
                        expect(re.test(`/api/v1/products/${bad}`), `n='${bad}'`).to.equal(false);
                    expect(re.test("/api/v1/products")).to.equal(false);
                    expect(re.test("/api/v1/products?n=7")).to.equal(false);
                });

                it("Gateway bookinfo-gateway serves HTTP on 8080 (the vhost the route patch names)", async () => {
                    const r = await get(variant, profile);
                    const gw = r.get("Gateway", "bookinfo-gateway", "default");
                    expect(gw.spec.selector).to.deep.equal({ istio: "ingressgateway" });
                    // Istio's <namespace>/<host>: only VirtualServices of bookinfo's namespace bind (no side door for another namespace's host).
                    expect(gw.spec.servers).to.deep.equal([{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["default/*"] }]);
                    // The VirtualService is in that namespace and names the Gateway there: it still binds.
                    const vs = r.get("VirtualService", "bookinfo", "default");
                    expect([vs.metadata.namespace, vs.spec.gateways, vs.spec.hosts]).to.deep.equal(["default", ["bookinfo-gateway"], ["*"]]);
                });

                it("gatewayHostScope=any-namespace gives the specification's hosts ['*'] back; the namespace part follows workloadNamespace", async () => {
                    const any = (await get(variant, profile, { gatewayHostScope: "any-namespace" })).get("Gateway", "bookinfo-gateway", "default");
                    expect(any.spec.servers[0].hosts).to.deep.equal(["*"]);
                    const shop = (await get(variant, profile, { workloadNamespace: "shop", gatewayHosts: "shop.example.com,*.shop.example.com" })).get(
                        "Gateway",
                        "bookinfo-gateway",
                        "shop",
                    );
                    expect(shop.spec.servers[0].hosts).to.deep.equal(["shop/shop.example.com", "shop/*.shop.example.com"]);
                });

                it("localRateLimitHeaders=off and localShadow=true: no X-RateLimit headers, enforced 0 % (counted, never refused)", async () => {
                    const r = await get(variant, profile, { localRateLimitHeaders: "off", localShadow: "true", localFillInterval: "0.5s" });
                    const value = r.get("EnvoyFilter", "filter-local-ratelimit-svc", "default").spec.configPatches[0].patch.value.typed_config.value;
                    expect(value).to.not.have.property("enable_x_ratelimit_headers");
                    expect(value.filter_enforced.default_value.numerator).to.equal(0);
                    expect(value.filter_enabled.default_value.numerator).to.equal(100);
                    // Under a second: Retry-After is never 0 (a client would retry at once).
                    expect(value.response_headers_to_add[1].header).to.deep.equal({ key: "retry-after", value: "1" });
                });

                for (const placement of ["all-routes", "single-route"] as const) {
                    it(`2.7 local filter, ${placement}: bucket ${variant === "A" ? 4 : 10} per 60s, enabled and enforced 100 %`, async () => {
                        const r = await get(variant, profile, { localPlacement: placement });
                        const f = r.get("EnvoyFilter", "filter-local-ratelimit-svc", "default");
                        const patches = f.spec.configPatches;
                        const hf = patches[0];
                        expect(hf.applyTo).to.equal("HTTP_FILTER");
                        expect(hf.match.context).to.equal("SIDECAR_INBOUND");
                        expect(hf.match.listener.portNumber).to.equal(9080);
                        expect(hf.match.listener.filterChain.filter).to.deep.equal({ name: "envoy.filters.network.http_connection_manager" });
                        expect(hf.patch.operation).to.equal("INSERT_BEFORE");
                        expect(hf.patch.value.name).to.equal("envoy.filters.http.local_ratelimit");
                        const bucket = variant === "A" ? 4 : 10;
                        const fullValue = {
                            stat_prefix: "http_local_rate_limiter",
                            token_bucket: { max_tokens: bucket, tokens_per_fill: bucket, fill_interval: "60s" },
                            filter_enabled: { runtime_key: "local_rate_limit_enabled", default_value: { numerator: 100, denominator: "HUNDRED" } },
                            filter_enforced: { runtime_key: "local_rate_limit_enforced", default_value: { numerator: 100, denominator: "HUNDRED" } },
                            // The specification's header, then the two additions docs/specification.md lists:
                            // Retry-After (the fill interval in seconds) and the draft-03 X-RateLimit headers.
                            response_headers_to_add: [
                                { append: false, header: { key: "x-local-rate-limit", value: "true" } },
                                { append: false, header: { key: "retry-after", value: "60" } },
                            ],
                            enable_x_ratelimit_headers: "DRAFT_VERSION_03",
                        };
                        const typed = (value: unknown) => ({
                            "@type": "type.googleapis.com/udpa.type.v1.TypedStruct",
                            type_url: "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit",
                            value,
                        });
                        if (placement === "all-routes") {
                            expect(patches).to.have.length(1);
                            expect(hf.patch.value.typed_config).to.deep.equal(typed(fullValue));
                        } else {
                            expect(patches).to.have.length(2);
                            expect(hf.patch.value.typed_config).to.deep.equal(typed({ stat_prefix: "http_local_rate_limiter" }));
                            const rp = patches[1];
                            expect(rp.applyTo).to.equal("HTTP_ROUTE");
                            expect(rp.match.context).to.equal("SIDECAR_INBOUND");
                            expect(rp.match.routeConfiguration.vhost).to.deep.equal({ name: "inbound|http|9080", route: { action: "ANY" } });
                            expect(rp.patch.operation).to.equal("MERGE");
                            expect(rp.patch.value.typed_per_filter_config).to.deep.equal({ "envoy.filters.http.local_ratelimit": typed(fullValue) });
                        }
                    });
                }

                it("2.8 Ingress simple-ingress for /echo, class istio, in the profile's API", async () => {
                    const r = await get(variant, profile);
                    const ing = r.get("Ingress", "simple-ingress", "default");
                    const [path] = ing.spec.rules[0].http.paths;
                    expect(path.path).to.equal("/echo");
                    if (profile === "seed") {
                        expect(ing.apiVersion).to.equal("extensions/v1beta1");
                        expect(ing.metadata.annotations["kubernetes.io/ingress.class"]).to.equal("istio");
                        expect(path.backend).to.deep.equal({ serviceName: "esp-echo", servicePort: 80 });
                    } else {
                        expect(ing.apiVersion).to.equal("networking.k8s.io/v1");
                        expect(ing.spec.ingressClassName).to.equal("istio");
                        expect(path.pathType).to.equal("Prefix");
                        expect(path.backend).to.deep.equal({ service: { name: "esp-echo", port: { number: 80 } } });
                    }
                });

                it("2.10 mutual TLS, scoped: STRICT for the stack's own pods only (no mesh-wide policy, no mesh ConfigMap edit)", async () => {
                    const r = await get(variant, profile);
                    expect(r.find("ConfigMap", "istio", "istio-system")).to.equal(undefined);
                    expect(r.find("PeerAuthentication", "default", "istio-system")).to.equal(undefined);
                    const pas = r.objects.filter((o) => o.kind === "PeerAuthentication") as any[];
                    expect(pas.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).to.deep.equal(["default/mesh-ratelimit-mtls"]);
                    expect(pas[0].apiVersion).to.equal("security.istio.io/v1");
                    expect(pas[0].spec).to.deep.equal({
                        selector: { matchLabels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } },
                        mtls: { mode: "STRICT" },
                    });
                    // Every pod the stack runs carries that label (so every one of them is covered).
                    for (const d of r.objects.filter((o) => o.kind === "Deployment") as any[]) {
                        expect(d.spec.template.metadata.labels["app.kubernetes.io/part-of"], d.metadata.name).to.equal("mesh-ratelimit");
                    }
                });
            });
        }
    }

    describe("2.9 managed-API service", () => {
        for (const mode of ["http", "tcp"] as const) {
            it(`port 80 → 8081 named ${mode}; ESP opens --http_port=8081; include-IP-ranges annotation`, async () => {
                const r = await get("A", "seed", { espPortMode: mode });
                const svc = r.get("Service", "esp-echo", "default");
                expect(svc.spec.ports).to.deep.equal([{ port: 80, targetPort: 8081, protocol: "TCP", name: mode }]);
                const dep = r.get("Deployment", "esp-echo", "default");
                const esp = dep.spec.template.spec.containers.find((c: any) => c.name === "esp");
                expect(esp.args).to.include("--http_port=8081");
                expect(esp.args).to.include("--service=echo-api.endpoints.example-project.cloud.goog");
                expect(dep.spec.template.metadata.annotations["traffic.sidecar.istio.io/includeOutboundIPRanges"]).to.equal("10.4.0.0/14,10.7.240.0/20");
                expect(dep.spec.template.metadata.labels["sidecar.istio.io/inject"]).to.equal("true");
            });
        }

        it("current profile adds appProtocol, the modern spelling of the port name", async () => {
            const r = await get("A", "current", { espPortMode: "tcp" });
            expect(r.get("Service", "esp-echo").spec.ports[0].appProtocol).to.equal("tcp");
        });

        it("managedApi=false deploys no ESP, Service or Ingress", async () => {
            const r = await get("A", "current", { managedApi: "false", includeIpRanges: "", espServiceName: "" });
            expect(r.find("Deployment", "esp-echo")).to.equal(undefined);
            expect(r.find("Ingress", "simple-ingress")).to.equal(undefined);
            expect(r.find("Deployment", "ratelimit")).to.not.equal(undefined);
        });
    });

    describe("rate-limit service and Redis", () => {
        it("service environment, ports and a config mount without subPath", async () => {
            const r = await get("A", "current");
            const dep = r.get("Deployment", "ratelimit", "default");
            const [c] = dep.spec.template.spec.containers;
            const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
            expect(env.REDIS_SOCKET_TYPE).to.equal("tcp");
            expect(env.USE_STATSD).to.equal("false");
            expect(env.REDIS_URL).to.equal("redis.default.svc.cluster.local:6379");
            expect(env.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "redis-auth", key: "password" } });
            expect(env.RUNTIME_WATCH_ROOT).to.equal("false");
            expect(env.RUNTIME_IGNOREDOTFILES).to.equal("true");
            const mount = c.volumeMounts[0];
            expect(mount.subPath).to.equal(undefined);
            // The service reads $RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config: the mount must be exactly there.
            expect(mount.mountPath).to.equal(`${env.RUNTIME_ROOT}/${env.RUNTIME_SUBDIRECTORY}/config`);
            const vol = dep.spec.template.spec.volumes.find((v: any) => v.name === mount.name);
            expect(vol.configMap.name).to.equal("ratelimit-config");
            // The JSON API and the debug server (config dump, pprof) listen on loopback only; the
            // gRPC health service (name "ratelimit" in envoyproxy/ratelimit) tells readiness.
            expect(env.HOST).to.equal("127.0.0.1");
            expect(env.DEBUG_HOST).to.equal("127.0.0.1");
            expect(env.GRPC_HOST).to.equal(undefined);
            expect(c.readinessProbe.grpc).to.deep.equal({ port: 8081, service: "ratelimit" });
            expect(c.ports.map((p: any) => p.containerPort)).to.deep.equal([8081]);
            const svc = r.get("Service", "ratelimit", "default");
            expect(svc.spec.ports.map((p: any) => [p.name, p.port])).to.deep.equal([["grpc", 8081]]);
        });

        it("a config change changes the pod template (so it reaches running pods)", async () => {
            const a = (await get("A", "current")).get("Deployment", "ratelimit").spec.template.metadata.annotations;
            const b = (await get("B", "current")).get("Deployment", "ratelimit").spec.template.metadata.annotations;
            const a2 = (await get("A", "current", { catchAllLimit: "50" })).get("Deployment", "ratelimit").spec.template.metadata.annotations;
            expect(a["mesh-ratelimit/config-sha256"]).to.match(/^[0-9a-f]{64}$/);
            expect(a["mesh-ratelimit/config-sha256"]).to.not.equal(b["mesh-ratelimit/config-sha256"]);
            expect(a["mesh-ratelimit/config-sha256"]).to.not.equal(a2["mesh-ratelimit/config-sha256"]);
        });

        it("the Redis password never appears in the rendered objects", async () => {
            const r = await get("A", "current");
            const secret = r.get("Secret", "redis-auth", "default");
            expect(secret.stringData.password).to.equal(REDACTED);
            expect(JSON.stringify(r.objects)).to.not.contain("mock-password");
            const redis = r.get("Deployment", "redis", "default").spec.template.spec.containers[0];
            // Nor in a process's arguments: no $(VAR) expansion of a secret variable in command or args
            // (the password reaches redis-server on stdin, redis-cli through REDISCLI_AUTH).
            const secretVars = redis.env.filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.name);
            expect(secretVars).to.deep.equal(["REDIS_PASSWORD", "REDISCLI_AUTH"]);
            for (const a of [...redis.command, ...redis.args, ...redis.readinessProbe.exec.command])
                expect(a).to.not.match(/\$\((REDIS_PASSWORD|REDISCLI_AUTH)\)/);
            expect(redis.readinessProbe.exec.command.join(" ")).to.not.contain("-a ");
        });

        it("cluster_name and authority follow the Service's name, namespace and port", async () => {
            const r = await get("A", "current", { ratelimitServiceName: "rls", ratelimitNamespace: "limits", ratelimitGrpcPort: "9091" });
            const tc = r.get("EnvoyFilter", "filter-ratelimit").spec.configPatches[0].patch.value.typed_config;
            expect(tc.rate_limit_service.grpc_service.envoy_grpc).to.deep.equal({
                cluster_name: "outbound|9091||rls.limits.svc.cluster.local",
                authority: "rls.limits.svc.cluster.local",
            });
            expect(r.get("Service", "rls", "limits").spec.ports.find((p: any) => p.name === "grpc").port).to.equal(9091);
        });

        it("one domain value feeds both the ConfigMap and the filter", async () => {
            const r = await get("B", "current", { domain: "shop" });
            expect(rateLimitConfig(r).domain).to.equal("shop");
            expect(r.get("EnvoyFilter", "filter-ratelimit").spec.configPatches[0].patch.value.typed_config.domain).to.equal("shop");
        });

        it("awaitRollout=false marks every Deployment pulumi.com/skipAwait; Services and the Ingress are never awaited", async () => {
            const awaited = (o: any) => o.metadata.annotations?.["pulumi.com/skipAwait"] !== "true";
            const kinds = (r: Rendered, kind: string) => r.objects.filter((o) => o.kind === kind);
            const noWait = await get("A", "current", { awaitRollout: "false" });
            const normal = await get("A", "current");
            expect(kinds(noWait, "Deployment").length).to.be.greaterThan(5);
            for (const d of kinds(noWait, "Deployment")) expect(awaited(d), d.metadata.name).to.equal(false);
            for (const d of kinds(normal, "Deployment")) expect(awaited(d), d.metadata.name).to.equal(true);
            for (const r of [noWait, normal, await get("A", "seed")]) {
                for (const o of [...kinds(r, "Service"), ...kinds(r, "Ingress")]) expect(awaited(o), `${o.kind} ${o.metadata.name}`).to.equal(false);
            }
        });
    });

    it("dev stack config file is the documented example and renders", async () => {
        const r = await render({ base: undefined });
        expect(r.objects.length).to.be.greaterThan(20);
        expect(DEV.variant).to.equal("A");
    });
});

describe("rendered files", function () {
    this.timeout(60_000);
    it("read back to the same objects as YAML 1.1 (how kubectl and istioctl read them)", async () => {
        const r = await render({ variant: "A", apiProfile: "seed", overrides: { mutualTlsScope: "mesh" } });
        const dir = fsm.mkdtempSync(pathm.join(os.tmpdir(), "render-"));
        writeRender(r.objects, dir);
        const read = (f: string) => parseAllDocuments(fsm.readFileSync(pathm.join(dir, f), "utf8"), { version: "1.1" }).map((d) => d.toJS());
        // all.yaml holds what applies as written; the Secret's placeholders and the mesh ConfigMap patch are in not-appliable/.
        const held = fsm.readdirSync(pathm.join(dir, "not-appliable")).sort();
        expect(held).to.deep.equal(["configmap_istio-system_istio.yaml", "secret_default_redis-auth.yaml", "secret_default_redis-per-value-auth.yaml"]);
        const docs = [...read("all.yaml"), ...held.flatMap((f) => read(`not-appliable/${f}`))];
        const byId = (l: any[]) =>
            [...l].sort((a, b) => `${a.kind}/${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.namespace}/${b.metadata.name}`));
        expect(byId(docs)).to.deep.equal(byId(JSON.parse(JSON.stringify(r.objects))));
        expect(fsm.readdirSync(dir).length).to.equal(r.objects.length - held.length + 3); // + all.yaml, the manifest and not-appliable/
        fsm.rmSync(dir, { recursive: true });
    });
});
