/**
 * What a platform team's dashboard (builders/dashboard.ts) and alert rules (builders/alerts.ts)
 * read: the metric names and each limit's series, from the limits' plan (the descriptor tree of
 * builders/rules.ts, `plannedDescriptors`, which config.yaml serialises), so every limit of the stack gets its own
 * series and none is listed by hand; and the input both are built from (`MonitoringInput`). Pure.
 *
 * Three sources of metrics, each named here once:
 * - the rate-limit service's own Prometheus endpoint (`USE_PROMETHEUS`): its statsd names mapped by
 *   the service's built-in mapper (`src/stats/prom/default_mapper.yaml` of envoyproxy/ratelimit);
 *   the names below were checked on the real service by the rls tier (tests/rls/monitoring.test.ts);
 * - the gateway's Envoy statistics (the rate-limit filter's `cluster.<route target cluster>.ratelimit.*`,
 *   the pre-limit's `<stat_prefix>.http_local_rate_limit.*`), which Istio exports only when the
 *   gateway asks for them (docs/monitoring.md); no Envoy runs in the tiers, so these names follow
 *   Envoy's documentation and are checked against a model of them;
 * - a Redis exporter (oliver006/redis_exporter) for Redis's memory, where one runs.
 */
import { DeepReadonly } from "../lib/frozen";
import { RateLimitRuleArgs } from "./rule-args";
import { PlannedDescriptor } from "./ratelimit-config";

/** The service's metrics (Prometheus names as its mapper writes them). */
export const ServiceMetric = {
    TotalHits: "ratelimit_service_rate_limit_total_hits",
    WithinLimit: "ratelimit_service_rate_limit_within_limit",
    OverLimit: "ratelimit_service_rate_limit_over_limit",
    NearLimit: "ratelimit_service_rate_limit_near_limit",
    ShadowMode: "ratelimit_service_rate_limit_shadow_mode",
    /** `err_type`: `redis_error`, `service_error`. */
    CallError: "ratelimit_service_should_rate_limit_error",
    /**
     * Histogram of the answer time (`grpc_method="ShouldRateLimit"`). Despite its name its values are
     * whole MILLISECONDS (the service records `time.Since(start).Milliseconds()`, the mapper only
     * names it), in Prometheus's default buckets (0.005 … 10): 0 for an answer under 1 ms.
     */
    ResponseTime: "ratelimit_service_response_time_seconds",
    /** Open connections of the service's Redis pool (a gauge per process; 0: Redis unreachable). */
    RedisConnections: "ratelimit_redis_pool_cx_active",
    ConfigLoadSuccess: "ratelimit_service_config_load_success",
    ConfigLoadError: "ratelimit_service_config_load_error",
    /** Answers turned OK by the global shadow mode (`SHADOW_MODE`); not in the mapper, so its statsd name escaped. */
    GlobalShadowMode: "ratelimit_service_global_shadow_mode",
} as const;
export type ServiceMetric = (typeof ServiceMetric)[keyof typeof ServiceMetric];

/** The outcomes of a limit, as the service counts them per descriptor. */
export const LimitOutcome = {
    Allowed: "within_limit",
    Refused: "over_limit",
    NearLimit: "near_limit",
    Shadow: "shadow_mode",
} as const;
export type LimitOutcome = (typeof LimitOutcome)[keyof typeof LimitOutcome];
/** A limit's counters: its outcomes and every decision (`total_hits`). */
export type LimitCounter = LimitOutcome | "total_hits";

/** Redis exporter (github.com/oliver006/redis_exporter) metrics used for Redis's memory bound. */
export const RedisExporterMetric = {
    MemoryUsed: "redis_memory_used_bytes",
    MemoryMax: "redis_memory_max_bytes",
    Up: "redis_up",
    /** Keys evicted at `maxmemory` (Redis's INFO `evicted_keys`). */
    EvictedKeys: "redis_evicted_keys_total",
} as const;
export type RedisExporterMetric = (typeof RedisExporterMetric)[keyof typeof RedisExporterMetric];

/** The counters of Envoy's HTTP rate-limit filter (`cluster.<route target cluster>.ratelimit.<stat>`). */
export const GATEWAY_RATELIMIT_STATS = ["ok", "over_limit", "error", "failure_mode_allowed"] as const;
/** The counters of Envoy's HTTP local rate-limit filter (`<stat_prefix>.http_local_rate_limit.<stat>`). */
export const LOCAL_RATELIMIT_STATS = ["enabled", "enforced", "rate_limited", "ok"] as const;

/**
 * Envoy's stat name of the HTTP rate-limit filter's counter, and its Prometheus form under Istio:
 * Istio's bootstrap extracts the cluster name (FQDN clusters included) into the `cluster_name` label,
 * and Envoy's Prometheus output prefixes `envoy_` and turns every other character outside
 * `[a-zA-Z0-9_]` into `_`.
 */
export function gatewayRatelimitMetric(stat: (typeof GATEWAY_RATELIMIT_STATS)[number]): { envoyStat: (cluster: string) => string; prometheus: string } {
    return { envoyStat: (cluster) => `cluster.${cluster}.ratelimit.${stat}`, prometheus: `envoy_cluster_ratelimit_${stat}` };
}

/** The local rate-limit filter's counter for a `stat_prefix`: Envoy's stat name and its Prometheus name. */
export function localRatelimitMetric(statPrefix: string, stat: (typeof LOCAL_RATELIMIT_STATS)[number]): { envoyStat: string; prometheus: string } {
    const envoyStat = `${statPrefix}.http_local_rate_limit.${stat}`;
    return { envoyStat, prometheus: `envoy_${envoyStat.replace(/[^a-zA-Z0-9_]/g, "_")}` };
}

/**
 * What a gateway proxy must export for the dashboard's gateway half: Istio's `proxyStatsMatcher`
 * (pod annotation `proxy.istio.io/config`, or `meshConfig.defaultConfig`) with these inclusion
 * regexes. The stack never edits the gateway; its owner adds them (docs/monitoring.md).
 */
export function gatewayStatsInclusion(preLimitStatPrefix: string | undefined): string[] {
    return [String.raw`cluster\..*\.ratelimit\..*`, ...(preLimitStatPrefix ? [`${escapeRegex(preLimitStatPrefix)}\\.http_local_rate_limit\\..*`] : [])];
}

function escapeRegex(s: string): string {
    return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** One limit of the service's config (a descriptor node with a `rate_limit`), and where its counters appear. */
export interface LimitSeries {
    /** Readable name: the descriptor path, e.g. `PATH=/productpage`, `rule=login > remote_address`. */
    title: string;
    /** The service's stats key below the domain: entries `key_value` (or `key`) joined by `.`. */
    statsKey: string;
    requests: number;
    unit: string;
    shadow: boolean;
    /** PromQL selector of one outcome's counter (metric name and label matchers, without the caller's own matchers). */
    selector: (counter: LimitCounter, extraMatchers: string) => string;
}

/** PromQL string literal (double quotes, escaped). */
export function promString(s: string): string {
    return JSON.stringify(s);
}

/**
 * Where the service's mapper puts the counters of one stats key (`ratelimit.service.rate_limit.<domain>.<key>.<counter>`),
 * a model of its default mapper at the pinned commit: a key of one entry (no `.` in the domain or
 * the entry) is labelled `domain`/`key1` by its glob rules; otherwise its regular-expression rules
 * take the first three dot-separated parts as `domain`/`key1`/`key2` and drop the rest (so limits
 * deeper than two entries, or values with a `.`, share or split series as those parts say); a name
 * neither matches is not mapped and appears under its statsd name with every character outside
 * `[a-zA-Z0-9_]` turned into `_`.
 */
export function serviceSeriesOf(domain: string, statsKey: string, counter: LimitCounter): { metric: string; labels: Record<string, string> } {
    const metric = `ratelimit_service_rate_limit_${counter}`;
    if (!domain.includes(".") && !statsKey.includes(".")) return { metric, labels: { domain, key1: statsKey } };
    const statsd = `ratelimit.service.rate_limit.${domain}.${statsKey}.${counter}`;
    // The mapper's rule (Go RE2 leftmost-first; the same captures as JavaScript's for this pattern).
    const m = new RegExp(String.raw`ratelimit\.service\.rate_limit\.([^.]*)\.([^.]*)\.([^.]*)(\..*)?\.${counter}`).exec(statsd);
    if (m) return { metric, labels: { domain: m[1]!, key1: m[2]!, key2: m[3]! } };
    return { metric: statsd.replace(/[^a-zA-Z0-9_]/g, "_"), labels: {} };
}

function matchers(labels: Record<string, string>, extra: string): string {
    const own = Object.entries(labels).map(([k, v]) => `${k}=${promString(v)}`);
    return `{${[extra, ...own].filter(Boolean).join(",")}}`;
}

/** Every limit of a domain's planned descriptors (the tree config.yaml is serialised from), depth first, with its counters' selector. */
export function limitSeries(domain: string, descriptors: readonly PlannedDescriptor[]): LimitSeries[] {
    const out: LimitSeries[] = [];
    const walk = (nodes: readonly PlannedDescriptor[], keys: string[], titles: string[]): void => {
        for (const d of nodes) {
            const k = [...keys, d.value !== undefined ? `${d.key}_${d.value}` : d.key];
            const t = [...titles, d.value !== undefined ? `${d.key}=${d.value}` : `${d.key} (each value)`];
            if (d.limit) {
                const statsKey = k.join(".");
                out.push({
                    title: t.join(" > "),
                    statsKey,
                    requests: d.limit.requests,
                    unit: d.limit.unit,
                    shadow: d.limit.shadow,
                    selector: (outcome, extra) => {
                        const s = serviceSeriesOf(domain, statsKey, outcome);
                        return `${s.metric}${matchers(s.labels, extra)}`;
                    },
                });
            }
            if (d.descriptors) walk(d.descriptors, k, t);
        }
    };
    walk(descriptors, [], []);
    return out;
}

/** Everything the dashboard and the rules are made of. */
export interface MonitoringInput {
    /** The instance (component) name: dashboard title, uid and rule names carry it. */
    instance: string;
    domain: string;
    /** Namespace of the rate-limit service (alert label `namespace`). */
    namespace: string;
    /** The domain's descriptor tree as planned (each limit typed): one series per limit. */
    descriptors: readonly PlannedDescriptor[];
    /** PromQL label matchers of the service's metrics, e.g. `namespace="default",app="ratelimit"`. */
    serviceSelector: string;
    /** PromQL label matchers of the per-value counters' service (`counterStore: split`); undefined: one service. */
    perValueServiceSelector?: string;
    /** With a per-value service: the matchers of the fixed counters' service alone (its errors refuse requests when fail-closed). */
    fixedServiceSelector?: string;
    /** PromQL label matchers of the gateway pods' metrics. */
    gatewaySelector: string;
    /** RE2 over the gateway's route target clusters (`cluster_name`) whose requests the stack limits. */
    gatewayClusters: string;
    /** The pre-limit's `stat_prefix` on the gateway; undefined: no pre-limit. */
    preLimitStatPrefix?: string;
    /** Workloads with a local token bucket: their metrics' matchers and the filter's `stat_prefix`. */
    localBuckets: readonly { title: string; selector: string; statPrefix: string }[];
    /** PromQL label matchers of the Redis exporter's metrics; undefined: no Redis panel or alert. */
    redisSelector?: string;
    /** The gateway refuses (500) when the service cannot answer (failure_mode_deny). */
    failureModeDeny: boolean;
    /** The service serves Prometheus metrics (`USE_PROMETHEUS`). */
    serviceMetrics: boolean;
    /** What each rule counts, in words (`ruleSummary`), by rule name: shown on its panel. */
    ruleSummaries?: Record<string, string>;
    /** Clients get the X-RateLimit headers and RateLimit-Policy (the filters' `rateLimitHeaders`). */
    clientHeaders?: boolean;
}

/**
 * `ruleSummary` of every rule, by name: the rules that passed their checks (components/global-ratelimit/limits-plan.ts
 * `checkedRules`), as given. Not the resolved rules: a resolved `rateLimitHeaders` is false for a
 * shadow rule and for every rule of a filter without headers, and the panel says "hidden" only of a
 * rule that hides itself (`rateLimitHeaders: false` given).
 */
export function ruleSummaries(rules: readonly DeepReadonly<RateLimitRuleArgs>[]): Record<string, string> {
    return Object.fromEntries(rules.map((r) => [r.name, ruleSummary(r)]));
}

/** What a rule counts, in words, for its dashboard panel: its matchers, and whether clients see it. */
export function ruleSummary(r: DeepReadonly<RateLimitRuleArgs>): string {
    const parts: string[] = [];
    if (r.methods?.length) parts.push(`methods ${r.methods.map((m) => m.toUpperCase()).join(", ")} (any case)`);
    if (r.path)
        parts.push(
            r.path.exact !== undefined
                ? `path ${r.path.exact}`
                : r.path.prefix !== undefined
                  ? `paths under ${r.path.prefix}`
                  : `paths matching ${r.path.regex}`,
        );
    if (r.query)
        parts.push(
            r.query.perValue
                ? `each ${r.query.name} query value apart (repeated, ambiguous, too long or unreadable: a guard counter per client)`
                : r.query.value !== undefined
                  ? `query ${r.query.name}=${r.query.value} (any spelling)`
                  : `query parameter ${r.query.name} present`,
        );
    if (r.header)
        parts.push(
            r.header.perValue
                ? `each ${r.header.name} value apart`
                : r.header.value !== undefined
                  ? `${r.header.name} ${r.header.invert ? "not " : ""}${r.header.value}`
                  : `${r.header.name} present`,
        );
    if (r.perClientAddress) parts.push("each client address apart");
    if (r.clientCidr) parts.push("clients in its CIDRs");
    if (r.route) parts.push(`route ${r.route.name}`);
    const what = parts.length ? parts.join("; ") : "every request";
    return `${what}${r.rateLimitHeaders === false ? "; hidden from clients (no X-RateLimit headers, not in RateLimit-Policy)" : ""}`;
}
