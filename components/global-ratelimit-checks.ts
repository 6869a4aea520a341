/**
 * GlobalRateLimit's own argument checks (the ones no other component shares): the scope, the domain,
 * the service's options, the failure mode and status, the layout, the access policy, and the size of
 * the objects its limits grow. Each returns or collects problems; none throws.
 */
import { EnvoyFilterSpec, ErrorStatus, FilterLayout, PER_INSTANCE_MIN_ISTIO } from "../builders/envoy-filters";
import { PRINCIPAL_PROBLEM, parsePrincipal, suggestedPrincipal } from "../lib/principal";
import { Problem } from "../lib/problems";
import { dnsProblem, portProblem } from "./arg-checks";
import { DEFAULTS } from "./defaults";
import { PerValuePlan } from "./per-value-store";

import { GO_DURATION, protoDurationSeconds } from "../lib/formats";
import { GlobalRateLimitArgs, RateLimitServiceOptionsArgs } from "./global-ratelimit-args";
import { oversizeProblems } from "./object-size";
import { MonitoringPlan } from "./ratelimit-monitoring";
import { ServiceLogLevel } from "./service-settings";

/** The limits of a descriptor tree: its entries with a `rate_limit`. */
export function countLimits(descriptors: { rate_limit?: unknown; descriptors?: unknown[] }[]): number {
    return descriptors.reduce((n, d) => n + (d.rate_limit ? 1 : 0) + countLimits((d.descriptors ?? []) as typeof descriptors), 0);
}

/** The objects the rule list grows, each within the API server's bound (components/object-size.ts). */
export function sizeProblems(
    a: Partial<GlobalRateLimitArgs>,
    o: {
        config: string;
        perValue?: PerValuePlan;
        filters: { name: string; spec: EnvoyFilterSpec }[];
        monitoring: MonitoringPlan;
        configName: string;
        limits: number;
    },
): Problem[] {
    const by = `with ${o.limits} limits,`;
    const rules = `(${(a.rules ?? []).length} rules)`;
    const fewer = "give fewer rules, or split them over GlobalRateLimit instances of their own (each its own domain and gateway listener)";
    return oversizeProblems([
        { what: `ConfigMap ${o.configName}`, text: o.config, key: "rules", value: rules, by, fix: fewer },
        ...(o.perValue ? [{ what: "the per-value ConfigMap", text: o.perValue.configYaml, key: "rules", value: rules, by, fix: fewer }] : []),
        ...o.filters.map((f) => ({ what: `EnvoyFilter ${f.name}`, text: JSON.stringify(f.spec), key: "rules", value: rules, by, fix: fewer })),
        ...(o.monitoring.dashboard
            ? [
                  {
                      what: `the dashboard ConfigMap ${o.monitoring.dashboard.name} (a panel row per limit)`,
                      text: o.monitoring.dashboard.json,
                      key: "monitoring.dashboard",
                      value: a.monitoring?.dashboard ?? true,
                      by,
                      fix: `set monitoring.dashboard to false (the service's metrics and the alert rules stay), or ${fewer}`,
                  },
              ]
            : []),
        ...(o.monitoring.rules
            ? [
                  {
                      what: "the PrometheusRule",
                      text: JSON.stringify(o.monitoring.rules.groups),
                      key: "monitoring.alerts",
                      value: a.monitoring?.alerts,
                      by,
                      fix: fewer,
                  },
              ]
            : []),
    ]);
}

/** A component that limits nothing, and a domain the service would refuse. */
export function scopeProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): void {
    if (!(a.rules ?? []).length && !a.perPath) {
        problems.push({
            key: "rules",
            value: a.rules,
            problem: "no rule and no perPath: the component would limit nothing",
            fix: "give at least one rule (or perPath)",
        });
    }
    problems.push(...domainProblems(a.domain));
}

/*
 * The rules below are GlobalRateLimit's, each with its one message; the stack's config checks use
 * them too (mesh/settings.ts, which names the config key of each field).
 */

/** `domain`: non-empty, letters, digits, '_', '.', '-' (what the service accepts). */
export function domainProblems(domain: unknown): Problem[] {
    if (typeof domain === "string" && /^[A-Za-z0-9_.-]+$/.test(domain)) return [];
    const fixed =
        String(domain ?? "")
            .trim()
            .replace(/[^A-Za-z0-9_.-]+/g, "-") || "my-gateway";
    return [{ key: "domain", value: domain, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: `use "${fixed}"` }];
}

/** `service.grpcPort`: not one of the service's own HTTP and debug ports. */
export function grpcPortProblems(grpcPort: unknown): Problem[] {
    if (grpcPort !== DEFAULTS.ratelimitHttpPort && grpcPort !== DEFAULTS.ratelimitDebugPort) return [];
    return [
        {
            key: "service.grpcPort",
            value: grpcPort,
            problem: `collides with the service's HTTP (${DEFAULTS.ratelimitHttpPort}) or debug (${DEFAULTS.ratelimitDebugPort}) port`,
            fix: `use ${DEFAULTS.ratelimitGrpcPort}`,
        },
    ];
}

/** `service.redisPipelineWindow` (when given): a Go duration. */
export function pipelineWindowProblems(window: unknown): Problem[] {
    if (window === undefined || GO_DURATION.test(String(window))) return [];
    return [{ key: "service.redisPipelineWindow", value: window, problem: "must be a Go duration such as '0', '150us' or '2ms'", fix: 'use "0"' }];
}

/** `failureModeDeny` a boolean, and `timeout` (defaulted) a protobuf duration of at least 1 ms; `secs` undefined when it is not. */
export function failureProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): { timeout: string; secs: number | undefined } {
    if (a.failureModeDeny !== undefined && typeof a.failureModeDeny !== "boolean") {
        problems.push({
            key: "failureModeDeny",
            value: a.failureModeDeny,
            problem: "must be a boolean: true refuses requests (HTTP 500) when the service cannot answer, false lets them through",
            fix: "use true (fail closed) or false (fail open)",
        });
    }
    const timeout = a.timeout ?? DEFAULTS.rateLimitTimeout;
    const secs = typeof timeout === "string" ? protoDurationSeconds(timeout) : undefined;
    if (secs === undefined || secs < 0.001) {
        problems.push({
            key: "timeout",
            value: timeout,
            problem: "must be a protobuf duration of at least 0.001s (seconds with an 's' suffix)",
            fix: 'use e.g. "10s" or "0.5s"',
        });
    }
    return { timeout, secs };
}

/** The service's options, defaults filled in (defaults.ts), each checked. */
export function serviceOptionsOf(svc: RateLimitServiceOptionsArgs, problems: Problem[]) {
    const name = svc.name ?? DEFAULTS.ratelimitServiceName;
    const configName = svc.configName ?? DEFAULTS.configName;
    const grpcPort = svc.grpcPort ?? DEFAULTS.ratelimitGrpcPort;
    const replicas = svc.replicas ?? DEFAULTS.ratelimitReplicas;
    const logLevel: ServiceLogLevel = svc.logLevel ?? DEFAULTS.ratelimitLogLevel;
    problems.push(
        ...dnsProblem("service.name", name, "label"),
        ...dnsProblem("service.configName", configName, "subdomain"),
        ...portProblem("service.grpcPort", grpcPort),
    );
    problems.push(...grpcPortProblems(grpcPort));
    if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 100) {
        problems.push({ key: "service.replicas", value: replicas, problem: "must be a whole number from 1 to 100", fix: "use 2" });
    }
    if (!(Object.values(ServiceLogLevel) as string[]).includes(logLevel)) {
        problems.push({
            key: "service.logLevel",
            value: logLevel,
            problem: `must be one of ${Object.values(ServiceLogLevel).join(", ")}`,
            fix: "use ServiceLogLevel.Warn",
        });
    }
    const counts: [string, number | undefined, number, number][] = [
        ["redisPoolSize", svc.redisPoolSize, 1, 10_000],
        ["redisPipelineLimit", svc.redisPipelineLimit, 0, Number.MAX_SAFE_INTEGER],
        ["localCacheSizeInBytes", svc.localCacheSizeInBytes, 0, Number.MAX_SAFE_INTEGER],
    ];
    for (const [f, v, min, max] of counts) {
        if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > max)) {
            problems.push({
                key: `service.${f}`,
                value: v,
                problem: `must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : " up"}`,
                fix: `omit it for ${DEFAULTS[f as "redisPoolSize" | "redisPipelineLimit" | "localCacheSizeInBytes"]}`,
            });
        }
    }
    problems.push(...pipelineWindowProblems(svc.redisPipelineWindow));
    if (svc.image !== undefined && (typeof svc.image !== "string" || !svc.image.trim())) {
        problems.push({
            key: "service.image",
            value: svc.image,
            problem: "must be an image reference",
            fix: `omit it for ${DEFAULTS.ratelimitImage}`,
        });
    }
    return { name, configName, grpcPort, replicas, logLevel };
}

/** `accessPolicy.gatewayPrincipal` an Istio principal. */
export function accessPolicyProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): void {
    if (a.accessPolicy !== undefined) {
        const p = typeof a.accessPolicy === "object" && a.accessPolicy !== null ? a.accessPolicy.gatewayPrincipal : undefined;
        if (typeof p !== "string" || !parsePrincipal(p)) {
            problems.push({ key: "accessPolicy.gatewayPrincipal", value: p, problem: PRINCIPAL_PROBLEM, fix: `use "${suggestedPrincipal(p)}"` });
        }
    }
}

/** The filter layout (defaulted, checked) and `statusOnError` (a known status, only when failing closed). */
export function layoutOf(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): FilterLayout {
    const layout = a.filterLayout ?? FilterLayout.PerInstance;
    if (!(Object.values(FilterLayout) as unknown[]).includes(layout)) {
        problems.push({
            key: "filterLayout",
            value: layout,
            problem: `must be one of ${Object.values(FilterLayout).join(", ")}`,
            fix: `use FilterLayout.PerInstance (Istio ${PER_INSTANCE_MIN_ISTIO} or later), or FilterLayout.Shared on Istio 1.24`,
        });
    }
    if (a.statusOnError !== undefined && !(Object.values(ErrorStatus) as unknown[]).includes(a.statusOnError)) {
        problems.push({
            key: "statusOnError",
            value: a.statusOnError,
            problem: `must be one of ${Object.values(ErrorStatus).join(", ")}`,
            fix: "use ErrorStatus.ServiceUnavailable, or omit it for Envoy's 500",
        });
    } else problems.push(...statusWithoutDenyProblems(a.statusOnError, a.failureModeDeny));
    return layout;
}

/** `statusOnError` set while failing open: it would never be sent (the one statement of the rule; the stack config reports it under its keys). */
export function statusWithoutDenyProblems(statusOnError: unknown, failureModeDeny: unknown): Problem[] {
    return statusOnError !== undefined && failureModeDeny === false
        ? [
              {
                  key: "statusOnError",
                  value: statusOnError,
                  problem: "has no effect with failureModeDeny: false (the request passes when the service cannot answer)",
                  fix: "omit statusOnError, or set failureModeDeny: true",
              },
          ]
        : [];
}
