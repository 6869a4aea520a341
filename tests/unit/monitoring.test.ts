/**
 * The dashboard and alert rules (builders/monitoring.ts, components/service/ratelimit-monitoring.ts): one
 * series per limit of the compiled plan, nothing hand-listed; team separation; the gateway stats a
 * gateway must export; the component's defaults and argument checks. Expected names are written
 * from the service's and Envoy's naming rules (docs/monitoring.md), not read from the code.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import * as fs from "fs";
import * as path from "path";
import { PlannedDescriptor } from "../../builders/rules";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { LimitUnit } from "../../builders/rule-args";
import { AlertName, alertRules } from "../../builders/alerts";
import {
    LimitOutcome,
    gatewayRatelimitMetric,
    gatewayStatsInclusion,
    limitSeries,
    localRatelimitMetric,
    serviceSeriesOf,
    MonitoringInput,
} from "../../builders/monitoring";
import { RATE_WINDOW, dashboardModel, dashboardUid } from "../../builders/dashboard";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { monitoringPlanOf, podMatchers } from "../../components/service/ratelimit-monitoring";
import { Problem } from "../../lib/problems";
import { requiredApiVersions } from "../../program/served-apis";
import { resolveSettings } from "../../program/config-args";
import { DEV } from "./helpers";

/** Variant A's limits as the specification states them (docs/specification.md section 8). */
const perMinute = (requests: number, shadow = false) => ({ requests, unit: LimitUnit.Minute, seconds: 60, shadow });
const VARIANT_A: PlannedDescriptor[] = [
    { key: "PATH", value: "/productpage", limit: perMinute(1) },
    { key: "PATH", value: "api", limit: perMinute(2) },
    { key: "PATH", limit: perMinute(100) },
];

const input = (over: Partial<MonitoringInput> = {}): MonitoringInput => ({
    instance: "ratelimit",
    domain: "ratelimit",
    namespace: "default",
    descriptors: VARIANT_A,
    serviceSelector: 'namespace="default",app="ratelimit"',
    gatewaySelector: 'namespace="istio-system",istio="ingressgateway"',
    gatewayClusters: ".*",
    preLimitStatPrefix: "mesh_ratelimit_pre_limit",
    localBuckets: [{ title: "productpage", selector: 'namespace="default",app="productpage"', statPrefix: "http_local_rate_limiter" }],
    failureModeDeny: true,
    serviceMetrics: true,
    ...over,
});

describe("monitoring: series of every limit, from the compiled plan", () => {
    it("one series per limit, keyed as the service keys its stats (domain, then key_value per entry)", () => {
        const s = limitSeries("ratelimit", VARIANT_A);
        expect(s.map((l) => l.statsKey)).to.deep.equal(["PATH_/productpage", "PATH_api", "PATH"]);
        expect(s.map((l) => `${l.requests}/${l.unit}`)).to.deep.equal(["1/minute", "2/minute", "100/minute"]);
        expect(s[0]!.selector(LimitOutcome.Refused, 'namespace="default"')).to.equal(
            'ratelimit_service_rate_limit_over_limit{namespace="default",domain="ratelimit",key1="PATH_/productpage"}',
        );
    });

    it("nested descriptors: every node with a limit, and the mapper's three forms (labels, deep labels, unmapped)", () => {
        const compiled = compileGlobalLimits({
            rules: [
                { name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute },
                { name: "search", path: { prefix: "/search" }, requestsPerUnit: 10, unit: LimitUnit.Second, shadow: true },
            ],
        });
        expect(compiled.problems).to.deep.equal([]);
        const s = limitSeries("shop", compiled.plannedDescriptors);
        expect(s.map((l) => [l.statsKey, l.shadow])).to.deep.equal([
            ["rule_login.masked_remote_address", false],
            ["rule_search", true],
        ]);
        // One entry: labelled by the mapper's glob rules.
        expect(serviceSeriesOf("shop", "rule_search", "total_hits")).to.deep.equal({
            metric: "ratelimit_service_rate_limit_total_hits",
            labels: { domain: "shop", key1: "rule_search" },
        });
        // Two entries: its regular-expression rule, key1 and key2.
        expect(serviceSeriesOf("shop", "rule_login.remote_address", "over_limit")).to.deep.equal({
            metric: "ratelimit_service_rate_limit_over_limit",
            labels: { domain: "shop", key1: "rule_login", key2: "remote_address" },
        });
        // Three entries: the third is dropped (two limits may share a series).
        expect(serviceSeriesOf("shop", "a_1.b_2.c_3", "near_limit")).to.deep.equal({
            metric: "ratelimit_service_rate_limit_near_limit",
            labels: { domain: "shop", key1: "a_1", key2: "b_2" },
        });
        // A value with a dot is two parts for the mapper.
        expect(serviceSeriesOf("shop", "PATH_/a.css", "within_limit").labels).to.deep.equal({ domain: "shop", key1: "PATH_/a", key2: "css" });
        // A key of one entry under a domain with a dot matches neither rule's intent: parts as they fall.
        expect(serviceSeriesOf("a.b", "PATH", "total_hits").labels).to.deep.equal({ domain: "a", key1: "b", key2: "PATH" });
    });
});

describe("monitoring: the dashboard", () => {
    const d = dashboardModel(input(), RATE_WINDOW);
    const exprs = (title: RegExp) =>
        d.panels
            .filter((p) => title.test(p.title))
            .flatMap((p) => p.targets ?? [])
            .map((t) => t.expr);

    it("a panel per limit with allowed, refused, near-limit and shadow series, and every fixed panel", () => {
        const titles = d.panels.map((p) => p.title);
        for (const t of ["PATH=/productpage: 1/minute", "PATH=api: 2/minute", "PATH (each value): 100/minute"]) expect(titles).to.include(t);
        const page = d.panels.find((p) => p.title.startsWith("PATH=/productpage"))!;
        expect(page.targets!.map((t) => t.legendFormat)).to.deep.equal(["allowed", "refused", "near limit", "shadow (over, let through)"]);
        expect(page.targets!.map((t) => t.expr.match(/ratelimit_service_rate_limit_(\w+)\{/)![1])).to.deep.equal([
            "within_limit",
            "over_limit",
            "near_limit",
            "shadow_mode",
        ]);
        for (const t of page.targets!)
            expect(t.expr).to.contain('key1="PATH_/productpage"').and.to.contain('app="ratelimit"').and.to.contain("[$__rate_interval]");
        expect(
            titles.filter((t) => /Shadow mode|errors|answer time|Redis connections|Config loads|pods answering|Gateway|Local bucket/.test(t)),
        ).to.have.length(9);
        expect(d.panels).to.have.length(1 + 3 + 9);
    });

    it("the gateway and local panels use Envoy's stat names in Prometheus form; the pre-limit's prefix is the one given", () => {
        expect(exprs(/rate-limit filter/).join("\n")).to.match(
            /envoy_cluster_ratelimit_error\{namespace="istio-system",istio="ingressgateway",cluster_name=~"\.\*"\}/,
        );
        expect(exprs(/pre-limit/)).to.deep.equal([
            'sum by (pod) (rate(envoy_mesh_ratelimit_pre_limit_http_local_rate_limit_rate_limited{namespace="istio-system",istio="ingressgateway"}[$__rate_interval]))',
        ]);
        expect(exprs(/Local bucket/)[0]).to.contain('envoy_http_local_rate_limiter_http_local_rate_limit_rate_limited{namespace="default",app="productpage"}');
        expect(dashboardModel(input({ preLimitStatPrefix: undefined }), RATE_WINDOW).panels.some((p) => /pre-limit/.test(p.title))).to.equal(false);
    });

    it("Redis memory against maxmemory and its evictions only with an exporter's selector; a note when the service's metrics are off", () => {
        expect(d.panels.some((p) => /Redis memory/.test(p.title))).to.equal(false);
        const r = dashboardModel(input({ redisSelector: 'namespace="default",app="redis"' }), RATE_WINDOW);
        expect(r.panels.find((p) => /Redis memory/.test(p.title))!.targets!.map((t) => t.expr)).to.deep.equal([
            'max(redis_memory_used_bytes{namespace="default",app="redis"})',
            'max(redis_memory_max_bytes{namespace="default",app="redis"})',
        ]);
        expect(r.panels.find((p) => /Redis evictions/.test(p.title))!.targets!.map((t) => t.expr)).to.deep.equal([
            'sum(rate(redis_evicted_keys_total{namespace="default",app="redis"}[$__rate_interval]))',
        ]);
        expect(JSON.stringify(dashboardModel(input({ serviceMetrics: false }), RATE_WINDOW).panels[0])).to.contain("metrics are off");
        expect(JSON.stringify(d.panels[0])).not.to.contain("metrics are off");
    });

    it("panels do not overlap, ids are unique, the uid fits Grafana's 40 characters and differs per namespace and instance", () => {
        const cells = new Set<string>();
        for (const p of d.panels)
            for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
                for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
                    expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).to.equal(false);
                    cells.add(`${x},${y}`);
                }
        for (const p of d.panels) expect(p.gridPos.x + p.gridPos.w).to.be.at.most(24);
        expect(new Set(d.panels.map((p) => p.id)).size).to.equal(d.panels.length);
        const long = dashboardUid("a-very-long-namespace-name-for-a-team", "a-very-long-instance-name-too");
        expect(long.length).to.be.at.most(40);
        expect(dashboardUid("team-a", "ratelimit")).not.to.equal(dashboardUid("team-b", "ratelimit"));
        expect(dashboardUid("team-a", "ratelimit")).to.equal(dashboardUid("team-a", "ratelimit"));
    });
});

describe("monitoring: the alert rules", () => {
    const groups = alertRules(input());
    const rules = groups[0]!.rules;

    it("every alert the issue asks for, each naming instance, domain and namespace; one 'mostly refused' per enforced limit", () => {
        expect(rules.map((r) => r.alert)).to.deep.equal([
            "MeshRateLimitServiceErrors",
            "MeshRateLimitRedisErrors",
            "MeshRateLimitNoServicePod",
            "MeshRateLimitConfigNotLoaded",
            "MeshRateLimitGatewayErrors",
            "MeshRateLimitMostlyRefused",
            "MeshRateLimitMostlyRefused",
            "MeshRateLimitMostlyRefused",
        ]);
        for (const r of rules) expect(r.labels).to.include({ mesh_ratelimit_instance: "ratelimit", domain: "ratelimit", namespace: "default" });
        expect(rules.filter((r) => r.alert === AlertName.MostlyRefused).map((r) => [r.labels.limit, r.labels.severity])).to.deep.equal([
            ["PATH=/productpage", "info"],
            ["PATH=api", "info"],
            ["PATH (each value)", "info"],
        ]);
        const withRedis = alertRules(input({ redisSelector: 'app="redis"' }))[0]!.rules;
        expect(withRedis.map((r) => r.alert)).to.include(AlertName.RedisNearMemoryBound);
    });

    it("fail closed pages (critical), fail open warns; production 'for' durations of at least a minute", () => {
        expect(rules.find((r) => r.alert === AlertName.NoServicePod)!.labels.severity).to.equal("critical");
        expect(alertRules(input({ failureModeDeny: false }))[0]!.rules.find((r) => r.alert === AlertName.NoServicePod)!.labels.severity).to.equal("warning");
        const seconds = (d: string) => Number(d.slice(0, -1)) * { s: 1, m: 60, h: 3600 }[d.slice(-1) as "s" | "m" | "h"]!;
        for (const r of rules) expect(seconds(r.for), `${r.alert} for ${r.for}`).to.be.at.least(60);
    });

    it("each alert's runbook is a section of docs/monitoring.md", () => {
        const doc = fs.readFileSync(path.join(__dirname, "../../docs/monitoring.md"), "utf8");
        const anchors = new Set(
            [...doc.matchAll(/^#+ (.+)$/gm)].map((m) =>
                m[1]!
                    .trim()
                    .toLowerCase()
                    .replace(/[^a-z0-9 -]/g, "")
                    .replace(/ /g, "-"),
            ),
        );
        for (const r of alertRules(input({ redisSelector: 'app="redis"' }))[0]!.rules) {
            const [file, anchor] = r.annotations.runbook.split("#");
            expect(file).to.equal("docs/monitoring.md");
            expect(anchors.has(anchor!), `no heading for #${anchor}`).to.equal(true);
        }
    });

    it("shadow limits get no 'mostly refused' alert (they refuse nothing)", () => {
        const shadow = alertRules(input({ descriptors: [{ key: "PATH", value: "/x", limit: perMinute(1, true) }] }));
        expect(shadow[0]!.rules.filter((r) => r.alert === AlertName.MostlyRefused)).to.deep.equal([]);
    });
});

describe("monitoring: what the gateway must export", () => {
    it("the inclusion regexes match the filter's and the pre-limit's Envoy stats and nothing of the gateway's other stats", () => {
        const inc = gatewayStatsInclusion("mesh_ratelimit_pre_limit").map((r) => new RegExp(`^${r}$`));
        const matches = (stat: string) => inc.some((r) => r.test(stat));
        const cluster = "outbound|9080||productpage.default.svc.cluster.local";
        for (const s of ["ok", "over_limit", "error", "failure_mode_allowed"] as const)
            expect(matches(gatewayRatelimitMetric(s).envoyStat(cluster))).to.equal(true);
        expect(gatewayRatelimitMetric("over_limit").envoyStat(cluster)).to.equal(`cluster.${cluster}.ratelimit.over_limit`);
        expect(matches("mesh_ratelimit_pre_limit.http_local_rate_limit.rate_limited")).to.equal(true);
        expect(localRatelimitMetric("mesh_ratelimit_pre_limit", "rate_limited").envoyStat).to.equal(
            "mesh_ratelimit_pre_limit.http_local_rate_limit.rate_limited",
        );
        for (const other of [
            `cluster.${cluster}.upstream_rq_total`,
            "http.outbound_0.0.0.0_8080.downstream_rq_total",
            "server.live",
            "http_local_rate_limiter.http_local_rate_limit.rate_limited",
        ])
            expect(matches(other), other).to.equal(false);
        expect(gatewayStatsInclusion(undefined)).to.have.length(1);
    });
});

describe("monitoring: the component's plan (GlobalRateLimit's monitoring args)", () => {
    const base = {
        domain: "shop",
        gateway: { selector: { app: "shop-gateway" }, namespace: "shop-gw", virtualHosts: ["*:80"] },
        namespace: "shop",
        perPath: { eachPath: { requestsPerUnit: 10, unit: LimitUnit.Minute } },
    };

    it("defaults: the dashboard ConfigMap with Grafana's sidecar label in the service's namespace, no PrometheusRule", () => {
        const p = planGlobalRateLimit(base);
        expect(p.problems).to.deep.equal([]);
        expect(p.monitoring.rules).to.equal(undefined);
        const d = p.monitoring.dashboard!;
        expect([d.namespace, d.name, d.labels.grafana_dashboard]).to.deep.equal(["shop", "mesh-ratelimit-shop-ratelimit-dashboard", "1"]);
        const model = JSON.parse(d.json);
        expect(model.panels.some((x: any) => x.title === "PATH (each value): 10/minute")).to.equal(true);
        expect(p.monitoring.input.gatewaySelector).to.equal('namespace="shop-gw",app="shop-gateway"');
        // Per-path counters only: no pre-limit bucket, so no pre-limit filter and no panel for it.
        expect(p.monitoring.input.preLimitStatPrefix).to.equal(undefined);
        expect(JSON.stringify(p.filters)).to.not.include("mesh_ratelimit_pre_limit");
        // A fixed limit: the dashboard's pre-limit panels read the stat prefix the built filter carries.
        const fixed = { ...base, perPath: { paths: [{ path: "/login", requestsPerUnit: 5, unit: LimitUnit.Minute }] } };
        expect(planGlobalRateLimit(fixed).monitoring.input.preLimitStatPrefix).to.equal("mesh_ratelimit_pre_limit");
        expect(JSON.stringify(planGlobalRateLimit(fixed).filters)).to.include('"stat_prefix":"mesh_ratelimit_pre_limit"');
        expect(planGlobalRateLimit({ ...fixed, preLimit: false }).monitoring.input.preLimitStatPrefix).to.equal(undefined);
        expect(planGlobalRateLimit({ ...base, monitoring: { dashboard: false } }).monitoring.dashboard).to.equal(undefined);
    });

    it("alerts: true adds the rule groups with the given labels; a Gateway API gateway's pod label in Prometheus form", () => {
        const p = planGlobalRateLimit({
            ...base,
            gateway: { gatewayApiName: "shop", namespace: "shop-gw", virtualHosts: ["*:80"] },
            monitoring: { alerts: true, ruleLabels: { release: "kps" } },
        });
        expect(p.problems).to.deep.equal([]);
        expect(p.monitoring.rules!.labels.release).to.equal("kps");
        expect(p.monitoring.rules!.groups[0]!.rules.length).to.be.greaterThan(4);
        expect(p.monitoring.input.gatewaySelector).to.equal('namespace="shop-gw",gateway_networking_k8s_io_gateway_name="shop"');
    });

    it("every bad argument reported at once, named by its field, nothing computed", () => {
        const problems: Problem[] = [];
        monitoringPlanOf(
            {
                dashboard: "yes" as any,
                alerts: 1 as any,
                dashboardNamespace: "Bad_NS",
                dashboardLabel: "grafana_dashboard",
                ruleLabels: { "bad key!": "x" },
                serviceSelector: "{app=ratelimit}",
                gatewayClusters: "",
                localBuckets: [{ title: "", selector: "app=productpage" }],
                redisSelector: "app='redis'",
            },
            {
                instance: "r",
                domain: "d",
                namespace: "n",
                serviceName: "r",
                descriptors: [],
                gatewayNamespace: "g",
                gatewayPodLabels: {},
                failureModeDeny: true,
                serviceMetrics: true,
            },
            problems,
        );
        expect(problems.map((p) => p.key)).to.deep.equal([
            "monitoring.dashboard",
            "monitoring.alerts",
            "monitoring.dashboardNamespace",
            "monitoring.dashboardLabel",
            "monitoring.ruleLabels.bad key!",
            "monitoring.serviceSelector",
            "monitoring.gatewayClusters",
            "monitoring.localBuckets[0].title",
            "monitoring.localBuckets[0].selector",
            "monitoring.redisSelector",
        ]);
        for (const p of problems) expect(p.fix).to.be.a("string").and.not.equal("");
    });

    it("two teams' instances: different ConfigMap names, uids and rule groups, and no selector of one matches the other's series", () => {
        const a = planGlobalRateLimit({ ...base, namespace: "team-a", domain: "shop" });
        const b = planGlobalRateLimit({ ...base, namespace: "team-b", domain: "shop", gateway: { ...base.gateway, virtualHosts: ["*:81"] } });
        expect(a.monitoring.dashboard!.name).not.to.equal(b.monitoring.dashboard!.name);
        expect(JSON.parse(a.monitoring.dashboard!.json).uid).not.to.equal(JSON.parse(b.monitoring.dashboard!.json).uid);
        const ja = a.monitoring.dashboard!.json;
        expect(ja).to.contain('namespace=\\"team-a\\"').and.not.to.contain("team-b");
    });
});

describe("monitoring: the stack", () => {
    it("config keys map to the component's args; monitoringAlerts needs monitoring.coreos.com/v1 (preview says so)", () => {
        const s = resolveSettings({ ...DEV, monitoringAlerts: "true", monitoringRuleLabels: "release=kps,team=a", monitoringDashboardNamespace: "grafana" });
        expectGolden("monitoring/stack-settings-alerts", s.monitoring);
        expect(s.monitoring).to.deep.include({ alerts: true, dashboardNamespace: "grafana", ruleLabels: { release: "kps", team: "a" } });
        const req = requiredApiVersions(s).find((r) => r.apiVersion === "monitoring.coreos.com/v1");
        expect(req?.key).to.equal("monitoringAlerts");
        expect(requiredApiVersions(resolveSettings(DEV)).some((r) => r.apiVersion === "monitoring.coreos.com/v1")).to.equal(false);
        expect(resolveSettings(DEV).monitoring.dashboardNamespace).to.equal("default");
    });

    it("bad monitoring keys fail together", () => {
        let err: any;
        try {
            resolveSettings({ ...DEV, monitoringDashboardLabel: "nolabel", monitoringRuleLabels: "a=b,oops", monitoringAlerts: "maybe" });
        } catch (e) {
            err = e;
        }
        expect(err?.problems?.map((p: Problem) => p.key).sort()).to.deep.equal(["monitoringAlerts", "monitoringDashboardLabel", "monitoringRuleLabels"]);
    });

    it("podMatchers writes Prometheus's label names for Kubernetes labels", () => {
        expect(podMatchers("ns", { "app.kubernetes.io/name": "x", istio: "ingressgateway" })).to.equal(
            'namespace="ns",app_kubernetes_io_name="x",istio="ingressgateway"',
        );
    });
});
