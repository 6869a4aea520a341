/**
 * The Prometheus alert rule groups of one GlobalRateLimit, generated from the same metric names as
 * the dashboard, each with its runbook in docs/monitoring.md. Pure.
 */
import { gatewayRatelimitMetric, LimitOutcome, limitSeries, MonitoringInput, promString, RedisExporterMetric, ServiceMetric } from "./monitoring";

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
    PerValueStoreFailing: "MeshRateLimitPerValueStoreFailing",
    RedisEvicting: "MeshRateLimitRedisEvicting",
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
                AlertName.PerValueStoreFailing,
                risingOrNew(`${ServiceMetric.CallError}{${m.perValueServiceSelector},err_type="redis_error"}`, "2m"),
                "1m",
                "warning",
                `The per-value counters of domain ${m.domain} (per path, per header or query value, per client) cannot be counted: their Redis is down or unreachable (the Redis the component deploys evicts when full, it never refuses). Those requests pass uncounted unless perValueStore.failureModeDeny; the fixed limits are not affected.`,
            ),
        );
    }
    if (m.redisSelector !== undefined) rules.push(...redisRules(m.domain, m.redisSelector, rule));
    rules.push(...mostlyRefusedRules(m, rule));
    return [{ name: `mesh-ratelimit.${m.namespace}.${m.instance}`, rules }];
}

/** How `alertRules` makes one rule (its labels and runbook filled in). */
type RuleOf = (alert: AlertName, expr: string, forDur: string, severity: string, summary: string, extra?: Record<string, string>) => AlertRule;

/** One rule per limit that refuses for real: most of its requests refused for 30 minutes. */
function mostlyRefusedRules(m: MonitoringInput, rule: RuleOf): AlertRule[] {
    const svc = m.serviceSelector;
    return limitSeries(m.domain, m.descriptors)
        .filter((l) => !l.shadow)
        .map((l) => {
            const refused = `sum(rate(${l.selector(LimitOutcome.Refused, svc)}[30m]))`;
            const total = `sum(rate(${l.selector("total_hits", svc)}[30m]))`;
            return rule(
                AlertName.MostlyRefused,
                `${refused} / (${total} > 0) > ${MOSTLY_REFUSED_RATIO}`,
                "30m",
                "info",
                `Limit ${l.title} (${l.requests}/${l.unit}) of domain ${m.domain} has refused most of its requests for 30 minutes: a client in a loop, an attack, or a limit too low.`,
                { limit: l.title },
            );
        });
}

/** The Redis exporter's alerts: memory near `maxmemory`, and evictions. */
function redisRules(domain: string, redisSelector: string, rule: RuleOf): AlertRule[] {
    const m = { domain, redisSelector };
    return [
        rule(
            AlertName.RedisNearMemoryBound,
            `max(${RedisExporterMetric.MemoryUsed}{${m.redisSelector}}) / max(${RedisExporterMetric.MemoryMax}{${m.redisSelector}} > 0) > ${REDIS_MEMORY_RATIO}`,
            "10m",
            "warning",
            `Redis of the rate limits of domain ${m.domain} is above ${REDIS_MEMORY_RATIO * 100} % of maxmemory: it evicts counters, and an evicted live counter restarts its limit.`,
        ),
        rule(
            AlertName.RedisEvicting,
            `sum(rate(${RedisExporterMetric.EvictedKeys}{${m.redisSelector}}[5m])) > 0`,
            "10m",
            "warning",
            `Redis of the rate limits of domain ${m.domain} has evicted counters for 10 minutes: the per-value store holds fewer counters than new values arrive (a flood, or perValueStore.newValuesPerSecond too low), and its counters used once may start again; in the fixed store a live counter restarts its limit.`,
        ),
    ];
}
