/**
 * The Grafana dashboard (JSON model) of one GlobalRateLimit, generated from its compiled limits: a
 * panel row per limit, the service's answers and pods, the gateway's filter and pre-limit, the
 * local buckets and Redis. Pure.
 */
import {
    GATEWAY_RATELIMIT_STATS,
    gatewayRatelimitMetric,
    LimitOutcome,
    limitSeries,
    localRatelimitMetric,
    MonitoringInput,
    promString,
    RedisExporterMetric,
    ServiceMetric,
} from "./monitoring";

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
    /** A text panel's options. */
    options?: { mode: "markdown"; content: string };
    /** A graph's unit (Grafana's unit id, e.g. `reqps`); no overrides. */
    fieldConfig?: { defaults: { unit: string }; overrides: never[] };
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
    /** The dashboard's variables: its Prometheus data source. */
    templating: { list: { name: string; type: "datasource"; query: string; label: string }[] };
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
        m.clientHeaders
            ? "Clients see their limits: every counted response carries `X-RateLimit-Limit`, `-Remaining`, `-Reset` of the tightest limit, and `RateLimit-Policy` lists the limits (except those marked hidden)."
            : "",
    ].filter(Boolean);
    return { type: "text", title: "About", options: { mode: "markdown", content: notes.join("\n\n") } };
}

/** What the panel's rule counts, from its first entry `<key>=<rule name>`. */
function summaryOf(m: MonitoringInput, title: string): string {
    const name = /^[^=> ]+=([^ >]+)/.exec(title)?.[1];
    const s = name !== undefined ? m.ruleSummaries?.[name] : undefined;
    return s ? ` Counts: ${s}.` : "";
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
        title: `${l.title}: ${l.requests}/${l.unit}${l.shadow ? " (shadow)" : ""}`,
        description: `Decisions per second of the service for descriptor ${l.title} (stats key ${m.domain}.${l.statsKey}), by outcome.${summaryOf(m, l.title)}`,
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
                          "With the per-value counters in a store of their own: its redis_error means that store is down or unreachable (full, it evicts its least used counters and keeps answering); those requests pass uncounted unless perValueStore.failureModeDeny (MeshRateLimitPerValueStoreFailing).",
                  }
                : {}),
            targets: [
                target(`sum by (err_type) (rate(${ServiceMetric.CallError}{${svc}}[${window}]))`, "{{err_type}}", 0),
                ...(perValueSvc
                    ? [target(`sum(rate(${ServiceMetric.CallError}{${perValueSvc},err_type="redis_error"}[${window}]))`, "per-value store failing", 1)]
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
        panels.push({
            type: "timeseries",
            title: "Redis evictions",
            description:
                "Counters evicted at maxmemory. The per-value store evicts its least used counters (a flood of new keys): counters used once may start again. MeshRateLimitRedisEvicting.",
            targets: [target(`sum(rate(${RedisExporterMetric.EvictedKeys}{${m.redisSelector}}[${window}]))`, "evicted keys", 0)],
            fieldConfig: { defaults: { unit: "ops" }, overrides: [] },
        });
    }
    return panels;
}

/** The dashboard over the rate window `window`: Grafana's rate interval (`RATE_WINDOW`), or a fixed one to evaluate the queries elsewhere. */
export function dashboardModel(m: MonitoringInput, window: string): Dashboard {
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
