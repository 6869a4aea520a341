/** The pure builders, called directly on settings (no Pulumi runtime). */
import { expect } from "chai";
import { parse } from "yaml";
import { gatewaySpecFor, virtualServiceSpec } from "../../builders/bookinfo";
import { localBucketValue } from "../../builders/envoy-filters";
import { planLocalRateLimit } from "../../components/local-ratelimit/component";
import { localArgsOf, managedApiArgsOf } from "../../mesh/mesh-plan";
import { currentIngressManifest, espArgs, seedIngressManifest } from "../../builders/managed-api";
import { resolveManagedApi } from "../../components/managed-api/resolve";
import { ratelimitEnv } from "../../components/service/ratelimit-service";
import { StackSettings } from "../../mesh/settings-types";
import { planOfConfig } from "../../program/config-args";
import { DEV } from "./helpers";

// The specification's one counter store: its config and filters are what these tables describe.
const planA = planOfConfig({ ...DEV, counterStore: "single" });
const planB = planOfConfig({ ...DEV, variant: "B", counterStore: "single" });
const A = planA.settings;
const B = planB.settings;
const planOf = (s: StackSettings) => (s === A ? planA : s === B ? planB : undefined)!;
/** The service settings GlobalRateLimit derives for a stack (what its Deployment is built from). */
const serviceOf = (s: StackSettings) => planOf(s).global.service;
/** The stack's gateway filters, by name, as the GlobalRateLimit component plans them. */
const filters = (s: StackSettings) => Object.fromEntries(planOf(s).global.filters.map((f) => [f.name, f.spec as any]));
/** The rate-limit service's config.yaml, as the GlobalRateLimit component plans it. */
const configYaml = (s: StackSettings) => planOf(s).global.configYaml;
const localFilter = (s: StackSettings) => planLocalRateLimit("local", localArgsOf(s)).spec as any;

describe("pure builders", () => {
    it("config.yaml is YAML the service reads: domain, then descriptors with rate_limit", () => {
        const cfg = parse(configYaml(A));
        expect(Object.keys(cfg)).to.deep.equal(["domain", "descriptors"]);
        expect(cfg.descriptors.every((d: any) => Object.keys(d.rate_limit).sort().join() === "requests_per_unit,unit")).to.equal(true);
        // The catch-all has no value key at all (an empty value would be a different descriptor).
        expect(cfg.descriptors[cfg.descriptors.length - 1]).to.not.have.property("value");
    });

    it("global filter and config share the domain; every filter selects the same gateway", () => {
        for (const s of [A, B]) {
            const f = filters(s);
            expect(Object.keys(f)).to.deep.equal(
                s === A ? ["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api"] : ["filter-ratelimit", "filter-ratelimit-svc"],
            );
            const tc = f["filter-ratelimit"].configPatches[0].patch.value.typed_config;
            expect(tc.domain).to.equal(parse(configYaml(s)).domain);
            const sel = Object.values(f).map((x) => JSON.stringify(x.workloadSelector));
            expect(new Set(sel)).to.deep.equal(new Set([JSON.stringify({ labels: { istio: "ingressgateway" } })]));
        }
    });

    it("the route patch names a route the VirtualService has, on the Gateway's port", () => {
        const patch = filters(A)["filter-ratelimit-svc-api"].configPatches[0];
        const routeNames = virtualServiceSpec(A.bookinfo).http.map((h) => h.name);
        expect(routeNames).to.include(patch.match.routeConfiguration.vhost.route.name);
        // Istio's name for the VirtualService host '*' through the Gateway's server (host '*', the configured port).
        const server = gatewaySpecFor({ istio: "ingressgateway" }, A.bookinfo.gatewayPort, A.bookinfo.hosts).servers[0];
        expect(patch.match.routeConfiguration.vhost.name).to.equal(`${virtualServiceSpec(A.bookinfo).hosts[0]}:${server.port.number}`);
        expect(patch.match.routeConfiguration.vhost.name).to.equal("*:8080");
        expect(filters(B)).to.not.have.property("filter-ratelimit-svc-api");
    });

    it("single-route placement moves the whole bucket config to the route, leaving only stat_prefix", () => {
        const bucketA = localBucketValue(A.local.bucket, A.local.fillInterval, { rateLimitHeaders: "draft-03" }) as any;
        const single = localFilter({ ...A, local: { ...A.local, placement: "single-route" } }).configPatches as any[];
        expect(single[0].patch.value.typed_config.value).to.deep.equal({ stat_prefix: "http_local_rate_limiter" });
        expect(single[1].patch.value.typed_per_filter_config["envoy.filters.http.local_ratelimit"].value).to.deep.equal(bucketA);
        // Every route of the inbound virtual host: Istio's RouteMatch action ANY.
        expect(single[1].match.routeConfiguration.vhost).to.deep.equal({ name: "inbound|http|9080", route: { action: "ANY" } });
        const all = localFilter(A).configPatches as any[];
        expect(all).to.have.length(1);
        expect(all[0].patch.value.typed_config.value).to.deep.equal(bucketA);
        expect(bucketA.token_bucket).to.deep.equal({ max_tokens: 4, tokens_per_fill: 4, fill_interval: "60s" });
        expect((localFilter(B).configPatches[0].patch.value.typed_config.value as any).token_bucket.max_tokens).to.equal(10);
    });

    it("the service environment points at the given Redis and takes the password from the Secret", () => {
        const env = ratelimitEnv(serviceOf(A), "redis.x.svc.cluster.local:6379");
        expect(env.find((e) => e.name === "REDIS_URL")!.value).to.equal("redis.x.svc.cluster.local:6379");
        expect(env.find((e) => e.name === "REDIS_AUTH")!.value).to.equal(undefined);
        expect(new Set(env.map((e) => e.name)).size).to.equal(env.length);
    });

    it("ESP arguments and the Ingress of each profile", () => {
        const m = resolveManagedApi(managedApiArgsOf(A)).value!;
        expect(espArgs(m)).to.not.include.members(["--service_account_key=/etc/esp/creds/service-account-creds.json"]);
        expect(espArgs({ ...m, serviceAccountSecret: "esp-sa" })).to.include("--service_account_key=/etc/esp/creds/service-account-creds.json");
        expect(seedIngressManifest(m, {}).apiVersion).to.equal("extensions/v1beta1");
        expect(currentIngressManifest(m, {}).apiVersion).to.equal("networking.k8s.io/v1");
    });
});

describe("rate-limit service statistics", () => {
    it("stats are off by default (no per-decision log lines) and go to Prometheus when asked", () => {
        const names = (p: typeof planA) => ratelimitEnv(p.global.service, "r:6379").map((e) => `${e.name}=${e.value}`);
        expect(names(planA)).to.include.members(["USE_STATSD=false", "DISABLE_STATS=true"]);
        const prom = planOfConfig({ ...DEV, ratelimitPrometheus: "true" });
        expect(names(prom)).to.include.members(["USE_PROMETHEUS=true", "PROMETHEUS_ADDR=:9090"]);
        expect(names(prom)).to.not.include("DISABLE_STATS=true");
    });
});
