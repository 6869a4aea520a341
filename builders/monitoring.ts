/**
 * Pure builders of what a platform team looks at: a Grafana dashboard (JSON model) and Prometheus
 * alert rule groups, both generated from the compiled limits (the `config.yaml` descriptors of
 * builders/rules.ts compileGlobalLimits), so every limit of the stack gets its own series and none
 * is listed by hand.
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
import { ConfigDescriptor } from "./rules";

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
    requestsPerUnit: number;
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

/** Every limit of a domain's compiled descriptors, depth first, with its counters' selector. */
export function limitSeries(domain: string, descriptors: ConfigDescriptor[]): LimitSeries[] {
    const out: LimitSeries[] = [];
    const walk = (nodes: ConfigDescriptor[], keys: string[], titles: string[]): void => {
        for (const d of nodes) {
            const k = [...keys, d.value !== undefined ? `${d.key}_${d.value}` : d.key];
            const t = [...titles, d.value !== undefined ? `${d.key}=${d.value}` : `${d.key} (each value)`];
            if (d.rate_limit) {
                const statsKey = k.join(".");
                out.push({
                    title: t.join(" > "),
                    statsKey,
                    requestsPerUnit: d.rate_limit.requests_per_unit,
                    unit: d.rate_limit.unit,
                    shadow: d.shadow_mode === true,
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
    descriptors: ConfigDescriptor[];
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
    localBuckets: { title: string; selector: string; statPrefix: string }[];
    /** PromQL label matchers of the Redis exporter's metrics; undefined: no Redis panel or alert. */
    redisSelector?: string;
    /** The gateway refuses (500) when the service cannot answer (failure_mode_deny). */
    failureModeDeny: boolean;
    /** The service serves Prometheus metrics (`USE_PROMETHEUS`). */
    serviceMetrics: boolean;
}

/** The dashboard's rate window: Grafana's own, replaced by a fixed one where the queries are evaluated directly. */
export const RATE_WINDOW = "$__rate_interval";

export interface DashboardTarget {
    expr: string;
    legendFormat: string;
    refId: string;
}
export interface DashboardPanel {
    id: number;
    type: "timeseries" | "text" | "stat";
    title: string;
    description?: string;
    gridPos: { x: number; y: number; w: number; h: number };
    targets?: DashboardTarget[];
    options?: Record<string, unknown>;
    fieldConfig?: Record<string, unknown>;
    datasource?: { type: string; uid: string };
}

/** The dashboard's JSON model (Grafana schema 39). */
export interface Dashboard {
    uid: string;
    title: string;
    tags: string[];
    schemaVersion: number;
    time: { from: string; to: string };
    refresh: string;
    templating: { list: Record<string, unknown>[] };
    panels: DashboardPanel[];
}

/** A stable dashboard uid (at most 40 characters, Grafana's limit) for an instance in a namespace. */
export function dashboardUid(namespace: string, instance: string): string {
    let h = 0x811c9dc5;
    for (const c of `${namespace}/${instance}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
    const base = `mrl-${namespace}-${instance}`.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 31);
    return `${base}-${h.toString(16).padStart(8, "0")}`;
}

const DS = { type: "prometheus", uid: "${datasource}" };

/** A panel before the grid gives it its id, place and data source. */
type PanelContent = Omit<DashboardPanel, "id" | "gridPos" | "datasource">;

/** Lays panels out in rows of 24 columns, left to right, top to bottom, numbering them from 1. */
class PanelGrid {
    readonly panels: DashboardPanel[] = [];
    private x = 0;
    private y = 0;
    private rowHeight = 0;

    add(p: PanelContent, w = 12, h = 8): void {
        if (this.x + w > 24) [this.x, this.y, this.rowHeight] = [0, this.y + this.rowHeight, 0];
        const { x, y } = this;
        this.panels.push({ id: this.panels.length + 1, gridPos: { x, y, w, h }, ...(p.type === "text" ? {} : { datasource: DS }), ...p });
        [this.x, this.rowHeight] = [x + w, Math.max(this.rowHeight, h)];
    }
}

/** A panel's query `i` (refId A, B, ...). */
function target(expr: string, legendFormat: string, i: number): DashboardTarget {
    return { expr, legendFormat, refId: String.fromCharCode(65 + i) };
}

/** The text panel on top: what the dashboard shows and what it needs. */
function aboutPanel(m: MonitoringInput): PanelContent {
    const notes = [
        `Limits of domain \`${m.domain}\` (rate-limit service in namespace \`${m.namespace}\`), generated from the same plan as its \`config.yaml\`.`,
        m.serviceMetrics ? "" : "**The service's metrics are off** (`ratelimitPrometheus` / `service.prometheus`): its panels stay empty until they are on.",
        "Gateway panels need the gateway's Envoy stats exported (docs/monitoring.md).",
    ].filter(Boolean);
    return { type: "text", title: "About", options: { mode: "markdown", content: notes.join("\n\n") } };
}

/** One panel per limit of the service's config: its decisions by outcome. */
function limitPanels(m: MonitoringInput, window: string): PanelContent[] {
    const outcomes: [LimitOutcome, string][] = [
        [LimitOutcome.Allowed, "allowed"],
        [LimitOutcome.Refused, "refused"],
        [LimitOutcome.NearLimit, "near limit"],
        [LimitOutcome.Shadow, "shadow (over, let through)"],
    ];
    return limitSeries(m.domain, m.descriptors).map((l): PanelContent => ({
        type: "timeseries",
        title: `${l.title}: ${l.requestsPerUnit}/${l.unit}${l.shadow ? " (shadow)" : ""}`,
        description: `Decisions per second of the service for descriptor ${l.title} (stats key ${m.domain}.${l.statsKey}), by outcome.`,
        targets: outcomes.map(([o, legend], i) => target(`sum(rate(${l.selector(o, m.serviceSelector)}[${window}]))`, legend, i)),
        fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
    }));
}

/** The service's answers across its limits: the global shadow mode's, its errors and its answer time. */
function serviceAnswerPanels(svc: string, window: string, perValueSvc?: string): PanelContent[] {
    return [
        {
            type: "timeseries",
            title: "Shadow mode: answers over a limit, let through",
            description: "The global shadow mode's answers (every limit observed only); a limit with shadow_mode has its own series in its panel.",
            targets: [target(`sum(rate(${ServiceMetric.GlobalShadowMode}{${svc}}[${window}]))`, "global shadow mode", 0)],
            fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
        },
        {
            type: "timeseries",
            title: "Service errors (the gateway answers 500 while failing closed)",
            ...(perValueSvc
                ? {
                      description:
                          "With the per-value counters in a store of their own: its redis_error means that store is full or down; those requests pass uncounted (MeshRateLimitPerValueStoreRefusing).",
                  }
                : {}),
            targets: [
                target(`sum by (err_type) (rate(${ServiceMetric.CallError}{${svc}}[${window}]))`, "{{err_type}}", 0),
                ...(perValueSvc
                    ? [target(`sum(rate(${ServiceMetric.CallError}{${perValueSvc},err_type="redis_error"}[${window}]))`, "per-value store refusing", 1)]
                    : []),
            ],
            fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
        },
        {
            type: "timeseries",
            title: "Service answer time (ms)",
            description:
                "The service records whole milliseconds under a name ending in _seconds, in buckets up to 10 (ms): an answer under 1 ms counts as 0, one over 10 ms lands in +Inf.",
            targets: [
                target(
                    `sum(rate(${ServiceMetric.ResponseTime}_sum{${svc}}[${window}])) / sum(rate(${ServiceMetric.ResponseTime}_count{${svc}}[${window}]))`,
                    "mean",
                    0,
                ),
                target(`histogram_quantile(0.99, sum by (le) (rate(${ServiceMetric.ResponseTime}_bucket{${svc}}[${window}])))`, "p99 (10 = 10 ms or more)", 1),
            ],
            fieldConfig: { defaults: { unit: "ms" }, overrides: [] },
        },
    ];
}

/** The service's pods: their Redis connections, config loads, and how many answer. */
function servicePodPanels(svc: string): PanelContent[] {
    return [
        {
            type: "timeseries",
            title: "Redis connections per service pod",
            description: "Open connections of each service process's Redis pool: 0 while Redis is unreachable.",
            targets: [target(`sum by (pod) (${ServiceMetric.RedisConnections}{${svc}})`, "{{pod}}", 0)],
        },
        {
            type: "timeseries",
            title: "Config loads since each pod started",
            description:
                "Counters since the pod started (a load at start is the counter's first value, which rate() and increase() cannot see): a rising 'refused' means an update was rejected and the previous config is in force.",
            targets: [
                target(`sum by (pod) (${ServiceMetric.ConfigLoadSuccess}{${svc}})`, "loaded {{pod}}", 0),
                target(`sum by (pod) (${ServiceMetric.ConfigLoadError}{${svc}})`, "refused {{pod}}", 1),
            ],
        },
        {
            type: "timeseries",
            title: "Service pods answering",
            targets: [target(`sum(up{${svc}})`, "pods up", 0)],
        },
    ];
}

/** The gateway's rate-limit filter decisions, and the pre-limit's refusals where there is one. */
function gatewayPanels(m: MonitoringInput, window: string): PanelContent[] {
    const gw = `${m.gatewaySelector}${m.gatewaySelector ? "," : ""}cluster_name=~${promString(m.gatewayClusters)}`;
    const panels: PanelContent[] = [
        {
            type: "timeseries",
            title: "Gateway: rate-limit filter decisions",
            description: "Envoy's rate-limit filter on the gateway pods, for the routes the stack limits.",
            targets: GATEWAY_RATELIMIT_STATS.map((s, i) => target(`sum(rate(${gatewayRatelimitMetric(s).prometheus}{${gw}}[${window}]))`, s, i)),
            fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
        },
    ];
    if (m.preLimitStatPrefix) {
        const pre = localRatelimitMetric(m.preLimitStatPrefix, "rate_limited").prometheus;
        panels.push({
            type: "timeseries",
            title: "Gateway: pre-limit refusals (429, x-mesh-ratelimit: pre-limit)",
            targets: [target(`sum by (pod) (rate(${pre}{${m.gatewaySelector}}[${window}]))`, "{{pod}}", 0)],
            fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
        });
    }
    return panels;
}

/** The local token buckets' refusals per pod, and Redis's memory where an exporter is named. */
function localAndRedisPanels(m: MonitoringInput, window: string): PanelContent[] {
    const panels: PanelContent[] = m.localBuckets.map((b): PanelContent => ({
        type: "timeseries",
        title: `Local bucket refusals per pod: ${b.title}`,
        targets: [target(`sum by (pod) (rate(${localRatelimitMetric(b.statPrefix, "rate_limited").prometheus}{${b.selector}}[${window}]))`, "{{pod}}", 0)],
        fieldConfig: { defaults: { unit: "reqps" }, overrides: [] },
    }));
    if (m.redisSelector !== undefined) {
        panels.push({
            type: "timeseries",
            title: "Redis memory against maxmemory",
            targets: [
                target(`max(${RedisExporterMetric.MemoryUsed}{${m.redisSelector}})`, "used", 0),
                target(`max(${RedisExporterMetric.MemoryMax}{${m.redisSelector}})`, "maxmemory", 1),
            ],
            fieldConfig: { defaults: { unit: "bytes" }, overrides: [] },
        });
    }
    return panels;
}

/** The dashboard. `window` replaces Grafana's rate interval (for evaluating the queries elsewhere). */
export function dashboardModel(m: MonitoringInput, window: string = RATE_WINDOW): Dashboard {
    const grid = new PanelGrid();
    grid.add(aboutPanel(m), 24, 3);
    const svc = m.serviceSelector;
    for (const p of [
        ...limitPanels(m, window),
        ...serviceAnswerPanels(svc, window, m.perValueServiceSelector),
        ...servicePodPanels(svc),
        ...gatewayPanels(m, window),
        ...localAndRedisPanels(m, window),
    ])
        grid.add(p);
    return {
        uid: dashboardUid(m.namespace, m.instance),
        title: `Rate limits: ${m.instance} (${m.namespace}, domain ${m.domain})`,
        tags: ["mesh-ratelimit", m.domain],
        schemaVersion: 39,
        time: { from: "now-1h", to: "now" },
        refresh: "30s",
        templating: { list: [{ name: "datasource", type: "datasource", query: "prometheus", label: "Prometheus" }] },
        panels: grid.panels,
    };
}

/** Prometheus alerting rule (the rule file's and PrometheusRule's shape). */
export interface AlertRule {
    alert: string;
    expr: string;
    for: string;
    labels: Record<string, string>;
    annotations: { summary: string; runbook: string };
}
export interface RuleGroup {
    name: string;
    rules: AlertRule[];
}

/** Alert names (runbook sections in docs/monitoring.md carry the same names). */
export const AlertName = {
    ServiceErrors: "MeshRateLimitServiceErrors",
    NoServicePod: "MeshRateLimitNoServicePod",
    RedisErrors: "MeshRateLimitRedisErrors",
    GatewayErrors: "MeshRateLimitGatewayErrors",
    ConfigNotLoaded: "MeshRateLimitConfigNotLoaded",
    RedisNearMemoryBound: "MeshRateLimitRedisNearMemoryBound",
    PerValueStoreRefusing: "MeshRateLimitPerValueStoreRefusing",
    MostlyRefused: "MeshRateLimitMostlyRefused",
} as const;
export type AlertName = (typeof AlertName)[keyof typeof AlertName];

/** Share of a limit's decisions refused over 30 minutes above which `MostlyRefused` fires. */
export const MOSTLY_REFUSED_RATIO = 0.5;
/** Share of maxmemory above which `RedisNearMemoryBound` fires. */
export const REDIS_MEMORY_RATIO = 0.9;

/** Where each alert's runbook is: a section of this repository's docs named after the alert. */
export const RUNBOOK_DOC = "docs/monitoring.md";
const RUNBOOK = `${RUNBOOK_DOC}#`;

/**
 * A counter that rose within `window`, or appeared within it. The service creates an error counter
 * at its first error, with that error already counted, and `rate` never counts a series' first
 * value: without the second term the first errors of a process would never fire.
 */
export function risingOrNew(selector: string, window: string): string {
    return `(sum(rate(${selector}[${window}])) > 0 or sum(${selector} unless ${selector} offset ${window}) > 0)`;
}

/** The alert rules: one group per instance. */
export function alertRules(m: MonitoringInput): RuleGroup[] {
    const svc = m.serviceSelector;
    const base = { mesh_ratelimit_instance: m.instance, domain: m.domain, namespace: m.namespace };
    const page = m.failureModeDeny ? "critical" : "warning";
    const closed = m.failureModeDeny ? "the gateway answers 500 to every limited request" : "limited requests pass unlimited (fail open)";
    const rule = (alert: AlertName, expr: string, forDur: string, severity: string, summary: string, extra: Record<string, string> = {}): AlertRule => ({
        alert,
        expr,
        for: forDur,
        labels: { severity, ...base, ...extra },
        annotations: { summary, runbook: `${RUNBOOK}${alert.toLowerCase()}` },
    });
    const rules: AlertRule[] = [
        rule(
            AlertName.ServiceErrors,
            risingOrNew(`${ServiceMetric.CallError}{${svc},err_type="service_error"}`, "5m"),
            "2m",
            page,
            `The rate-limit service of domain ${m.domain} fails calls: ${closed}.`,
        ),
        rule(
            AlertName.RedisErrors,
            risingOrNew(`${ServiceMetric.CallError}{${m.fixedServiceSelector ?? svc},err_type="redis_error"}`, "2m"),
            "1m",
            page,
            `The rate-limit service of domain ${m.domain} cannot reach Redis: ${closed}.`,
        ),
        rule(AlertName.NoServicePod, `(sum(up{${svc}}) or vector(0)) == 0`, "2m", page, `No rate-limit service pod of domain ${m.domain} answers: ${closed}.`),
        rule(
            AlertName.ConfigNotLoaded,
            `${risingOrNew(`${ServiceMetric.ConfigLoadError}{${svc}}`, "10m")} or (sum(up{${svc}}) > 0 unless sum(${ServiceMetric.ConfigLoadSuccess}{${svc}}) > 0)`,
            "5m",
            "warning",
            `The rate-limit service of domain ${m.domain} refused a config update or has no config loaded: the limits in force are not the ones deployed.`,
        ),
        rule(
            AlertName.GatewayErrors,
            `sum(rate(${gatewayRatelimitMetric("error").prometheus}{${m.gatewaySelector}${m.gatewaySelector ? "," : ""}cluster_name=~${promString(m.gatewayClusters)}}[5m])) > 0`,
            "2m",
            page,
            `The gateway's calls to the rate-limit service of domain ${m.domain} fail: ${closed}.`,
        ),
    ];
    if (m.perValueServiceSelector !== undefined) {
        rules.push(
            rule(
                AlertName.PerValueStoreRefusing,
                risingOrNew(`${ServiceMetric.CallError}{${m.perValueServiceSelector},err_type="redis_error"}`, "2m"),
                "1m",
                "warning",
                `The per-value counters of domain ${m.domain} (per path, per header value, per client) cannot be counted: their Redis is full (a flood of new keys) or down. Those requests pass uncounted unless perValueStore.failureModeDeny; the fixed limits are not affected.`,
            ),
        );
    }
    if (m.redisSelector !== undefined) {
        rules.push(
            rule(
                AlertName.RedisNearMemoryBound,
                `max(${RedisExporterMetric.MemoryUsed}{${m.redisSelector}}) / max(${RedisExporterMetric.MemoryMax}{${m.redisSelector}} > 0) > ${REDIS_MEMORY_RATIO}`,
                "10m",
                "warning",
                `Redis of the rate limits of domain ${m.domain} is above ${REDIS_MEMORY_RATIO * 100} % of maxmemory: it evicts counters, and an evicted live counter restarts its limit.`,
            ),
        );
    }
    for (const l of limitSeries(m.domain, m.descriptors)) {
        if (l.shadow) continue;
        const refused = `sum(rate(${l.selector(LimitOutcome.Refused, svc)}[30m]))`;
        const total = `sum(rate(${l.selector("total_hits", svc)}[30m]))`;
        rules.push(
            rule(
                AlertName.MostlyRefused,
                `${refused} / (${total} > 0) > ${MOSTLY_REFUSED_RATIO}`,
                "30m",
                "info",
                `Limit ${l.title} (${l.requestsPerUnit}/${l.unit}) of domain ${m.domain} has refused most of its requests for 30 minutes: a client in a loop, an attack, or a limit too low.`,
                { limit: l.title },
            ),
        );
    }
    return [{ name: `mesh-ratelimit.${m.namespace}.${m.instance}`, rules }];
}
