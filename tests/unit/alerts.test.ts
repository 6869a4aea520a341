/**
 * The alert rules (builders/alerts.ts) read only series that exist: every metric an alert's
 * expression selects is one the rate-limit service, the gateway's Envoy, Prometheus or the Redis
 * exporter emits, and every label it matches on is one that series carries. The table of what each
 * program emits is written here from the upstream programs (the service's statsd-to-Prometheus
 * mapper, `src/stats/prom/default_mapper.yaml` of envoyproxy/ratelimit; Envoy's rate-limit filter
 * stats with Istio's `cluster_name` extraction; redis_exporter), not from the project's constants:
 * a misspelt metric or label in the code fails here instead of never firing. The rls tier runs the
 * same rules on a real Prometheus scraping the real service.
 */
import { expect } from "chai";
import { alertRules } from "../../builders/alerts";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";

/** What each series carries besides the target labels: the labels its program writes. */
const EMITTED: Readonly<Record<string, readonly string[]>> = {
    // envoyproxy/ratelimit, default_mapper.yaml: per-descriptor counters (key2 for a two-level descriptor).
    ratelimit_service_rate_limit_total_hits: ["domain", "key1", "key2"],
    ratelimit_service_rate_limit_within_limit: ["domain", "key1", "key2"],
    ratelimit_service_rate_limit_over_limit: ["domain", "key1", "key2"],
    ratelimit_service_rate_limit_near_limit: ["domain", "key1", "key2"],
    ratelimit_service_rate_limit_shadow_mode: ["domain", "key1", "key2"],
    ratelimit_service_should_rate_limit_error: ["err_type"],
    ratelimit_service_total_requests: ["grpc_method"],
    ratelimit_service_response_time_seconds_bucket: ["grpc_method", "le"],
    ratelimit_service_config_load_success: [],
    ratelimit_service_config_load_error: [],
    // Prometheus's own series of every scrape target.
    up: [],
    // Envoy's HTTP rate-limit filter, cluster.<cluster>.ratelimit.<stat>, with Istio's cluster_name tag.
    envoy_cluster_ratelimit_ok: ["cluster_name"],
    envoy_cluster_ratelimit_over_limit: ["cluster_name"],
    envoy_cluster_ratelimit_error: ["cluster_name"],
    envoy_cluster_ratelimit_failure_mode_allowed: ["cluster_name"],
    // oliver006/redis_exporter.
    redis_memory_used_bytes: [],
    redis_memory_max_bytes: [],
    redis_up: [],
    redis_evicted_keys_total: [],
};
/** err_type values the service writes (`ratelimit.service.call.should_rate_limit.<err_type>`). */
const ERR_TYPES = ["redis_error", "service_error"];
/** Labels Kubernetes pod discovery puts on every target (the namespace and the pod's own labels). */
const TARGET = ["namespace", "pod", "app", "istio", "job", "instance"];

/** What is wrong with one expression: a metric nobody emits, a label its series does not carry, an err_type the service never writes. */
export function unknownSeries(expr: string): string[] {
    const out: string[] = [];
    const selectors = [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)];
    if (!selectors.length) out.push(`no series selected in ${expr}`);
    for (const [, metric, matchers] of selectors) {
        const own = EMITTED[metric];
        if (!own) {
            out.push(`${metric}: no program emits it`);
            continue;
        }
        for (const m of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
            const [, label, , value] = m;
            if (!own.includes(label) && !TARGET.includes(label)) out.push(`${metric}{${label}}: the series has no such label`);
            if (label === "err_type" && !ERR_TYPES.includes(value)) out.push(`${metric}{err_type="${value}"}: the service never writes it`);
        }
    }
    for (const by of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g))
        for (const label of by[1]
            .split(",")
            .map((l) => l.trim())
            .filter(Boolean))
            if (!TARGET.includes(label) && !Object.values(EMITTED).some((ls) => ls.includes(label))) out.push(`by (${label}): no series has it`);
    return out;
}

const GATEWAY = { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["shop.example.com:80"] };
const RULES = [
    { name: "login", path: { exact: "/login" }, requestsPerUnit: 5, unit: "minute" as const },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 100, unit: "minute" as const },
    { name: "beta", path: { prefix: "/beta" }, requestsPerUnit: 2, unit: "minute" as const, shadow: true },
];

describe("alert rules read only series that exist (builders/alerts.ts)", () => {
    it("the checker refuses a metric nobody emits, a label a series lacks, an err_type never written", () => {
        expect(unknownSeries('sum(rate(ratelimit_service_should_rate_limit_error{namespace="a",err_type="redis_error"}[5m])) > 0')).to.deep.equal([]);
        expect(unknownSeries('rate(ratelimit_service_should_rate_limit_errors{namespace="a"}[5m])')).to.deep.equal([
            "ratelimit_service_should_rate_limit_errors: no program emits it",
        ]);
        expect(unknownSeries('rate(ratelimit_service_should_rate_limit_error{error_type="redis_error"}[5m])')).to.deep.equal([
            "ratelimit_service_should_rate_limit_error{error_type}: the series has no such label",
        ]);
        expect(unknownSeries('rate(ratelimit_service_should_rate_limit_error{err_type="redis"}[5m])')).to.deep.equal([
            'ratelimit_service_should_rate_limit_error{err_type="redis"}: the service never writes it',
        ]);
        expect(unknownSeries('sum by (err) (rate(up{namespace="a"}[5m]))')).to.deep.equal(["by (err): no series has it"]);
    });

    const variants: [string, Parameters<typeof planGlobalRateLimit>[0]][] = [
        ["split counters, fail-closed", { domain: "shop", namespace: "shop", gateway: GATEWAY, rules: RULES, monitoring: { alerts: true } }],
        [
            "one store, fail-open",
            { domain: "shop", namespace: "shop", gateway: GATEWAY, rules: RULES, counterStore: "single", failureModeDeny: false, monitoring: { alerts: true } },
        ],
        [
            "shared layout, no pre-limit",
            { domain: "shop", namespace: "shop", gateway: GATEWAY, rules: RULES, filterLayout: "shared", preLimit: false, monitoring: { alerts: true } },
        ],
    ];
    for (const [name, args] of variants)
        it(`every alert of a GlobalRateLimit (${name}) selects emitted series by their own labels`, () => {
            const plan = planGlobalRateLimit(args);
            expect(plan.problems).to.deep.equal([]);
            const rules = plan.monitoring.rules!.groups.flatMap((g) => g.rules);
            expect(rules.length).to.be.greaterThan(5);
            expect(rules.flatMap((r) => unknownSeries(r.expr).map((p) => `${r.alert}: ${p}`))).to.deep.equal([]);
            // The per-limit alerts name the descriptor as the mapper labels it: key1 "<key>_<value>".
            expect(rules.filter((r) => r.alert === "MeshRateLimitMostlyRefused").map((r) => /key1="([^"]+)"/.exec(r.expr)![1])).to.include("rule_login");
        });

    it("with a Redis exporter: the memory alert selects redis_exporter's series", () => {
        const input = planGlobalRateLimit(variants[0][1]).monitoring.input;
        const rules = alertRules({ ...input, redisSelector: 'namespace="shop",app="redis"' }).flatMap((g) => g.rules);
        const memory = rules.filter((r) => /redis_memory/.test(r.expr));
        expect(memory.length).to.equal(1);
        expect(rules.filter((r) => /redis_evicted_keys_total/.test(r.expr)).map((r) => r.alert)).to.deep.equal(["MeshRateLimitRedisEvicting"]);
        expect(rules.flatMap((r) => unknownSeries(r.expr).map((p) => `${r.alert}: ${p}`))).to.deep.equal([]);
    });
});
