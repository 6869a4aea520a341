/**
 * GlobalRateLimit's own argument checks (the ones no other component shares): the scope, the domain,
 * the service's options, the failure mode and status, the layout, the access policy (the size of the
 * objects its limits grow is checked on them: global-ratelimit-size.ts). Each returns or collects
 * problems; none throws.
 */
import { FilterLayout, RateLimitHeaders } from "../builders/envoy-filters";
import { booleanProblems, dnsNameProblems, fieldProblem, oneOfProblems, protoDurationProblems, wholeNumberProblems } from "../lib/field-checks";
import { fieldRef } from "../lib/fix-style";
import { PRINCIPAL_PROBLEM, parsePrincipal, suggestedPrincipal } from "../lib/principal";
import { Problem } from "../lib/problems";
import { DEFAULTS } from "./defaults";

import { GO_DURATION, protoDurationSeconds } from "../lib/formats";
import { GlobalRateLimitArgs, RateLimitServiceOptionsArgs } from "./global-ratelimit-args";
import { rateLimitHeadersProblems, statusOnErrorProblems } from "./arg-checks";
import { SERVICE_TUNING, ServiceLogLevel } from "./service-settings";

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
 * The rules below are GlobalRateLimit's, each with its one message and a fix in every style:
 * MeshRateLimit reports them under its own fields (`global.` + the field), the program under the
 * config key that sets each.
 */

/** `domain`: non-empty, letters, digits, '_', '.', '-' (what the service accepts). */
export function domainProblems(domain: unknown): Problem[] {
    if (typeof domain === "string" && /^[A-Za-z0-9_.-]+$/.test(domain)) return [];
    // A string's valid words joined with '-'; anything else gets a name of its own.
    const fixed = (typeof domain === "string" ? domain : "").trim().replace(/[^A-Za-z0-9_.-]+/g, "-") || "my-gateway";
    return [fieldProblem("domain", domain, "must be non-empty and use only letters, digits, '_', '.', '-'", (s) => s.set("domain", fixed))];
}

/** `service.grpcPort`: not one of the service's own HTTP and debug ports. */
export function grpcPortProblems(grpcPort: unknown): Problem[] {
    if (grpcPort !== DEFAULTS.ratelimitHttpPort && grpcPort !== DEFAULTS.ratelimitDebugPort) return [];
    return [
        fieldProblem(
            "service.grpcPort",
            grpcPort,
            `collides with the service's HTTP (${DEFAULTS.ratelimitHttpPort}) or debug (${DEFAULTS.ratelimitDebugPort}) port`,
            (s) => s.set("service.grpcPort", String(DEFAULTS.ratelimitGrpcPort)),
        ),
    ];
}

/**
 * A pipeline window set for a Redis the pinned service does not apply it to: it applies
 * REDIS_PIPELINE_WINDOW to Redis Cluster only, so the window would silently mean nothing.
 */
export function pipelineWindowModeProblems(window: unknown, redisMode: unknown): Problem[] {
    // Without white space, as the fix for a window like "150 us" suggests it: both problems in one round.
    const w = String(window ?? "").replace(/\s+/g, "");
    const windowIsSet = GO_DURATION.test(w) && /[1-9]/.test(w);
    const mode = String(redisMode ?? "in-cluster");
    if (mode === "cluster" || !windowIsSet) return [];
    return [
        fieldProblem(
            "service.redisPipelineWindow",
            window,
            `has no effect with ${fieldRef("redis.mode")} ${mode}: the pinned service applies REDIS_PIPELINE_WINDOW to Redis Cluster only (its single and Sentinel clients pipeline each request's commands already)`,
            (s) => `${s.rm("service.redisPipelineWindow")}, or ${s.set("redis.mode", "cluster")}`,
        ),
    ];
}

/** `failureModeDeny` a boolean, and `timeout` (defaulted) a protobuf duration of at least 1 ms; `secs` its seconds (the default's when it is refused). */
export function failureProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): { timeout: string; secs: number } {
    if (a.failureModeDeny !== undefined) problems.push(...booleanProblems("failureModeDeny", a.failureModeDeny, DEFAULTS.failureModeDeny));
    const timeout = a.timeout ?? DEFAULTS.rateLimitTimeout;
    const bad = protoDurationProblems("timeout", timeout, 0.001, DEFAULTS.rateLimitTimeout);
    problems.push(...bad);
    return { timeout, secs: protoDurationSeconds(bad.length ? DEFAULTS.rateLimitTimeout : timeout)! };
}

/** The service's options, defaults filled in (defaults.ts), each checked. */
export function serviceOptionsOf(svc: RateLimitServiceOptionsArgs, problems: Problem[], redisMode: unknown = undefined) {
    const name = svc.name ?? DEFAULTS.ratelimitServiceName;
    const configName = svc.configName ?? DEFAULTS.configName;
    const grpcPort = svc.grpcPort ?? DEFAULTS.ratelimitGrpcPort;
    const replicas = svc.replicas ?? DEFAULTS.ratelimitReplicas;
    const logLevel: ServiceLogLevel = svc.logLevel ?? DEFAULTS.ratelimitLogLevel;
    problems.push(
        ...dnsNameProblems("service.name", name, "label"),
        ...dnsNameProblems("service.configName", configName, "subdomain"),
        ...wholeNumberProblems("service.grpcPort", grpcPort, { min: 1, max: 65535, fallback: DEFAULTS.ratelimitGrpcPort }),
    );
    problems.push(...grpcPortProblems(grpcPort));
    problems.push(...wholeNumberProblems("service.replicas", replicas, { min: 1, max: 100, fallback: DEFAULTS.ratelimitReplicas }));
    // The levels as ServiceLogLevel declares them, the default first.
    const levels = [DEFAULTS.ratelimitLogLevel, ...Object.values(ServiceLogLevel).filter((l) => l !== DEFAULTS.ratelimitLogLevel)];
    problems.push(...oneOfProblems("service.logLevel", logLevel, levels, DEFAULTS.ratelimitLogLevel));
    for (const [f, option] of Object.entries(SERVICE_TUNING)) {
        const v = svc[f as keyof typeof SERVICE_TUNING];
        if (v !== undefined) problems.push(...option.check(`service.${f}`, v));
    }
    problems.push(...pipelineWindowModeProblems(svc.redisPipelineWindow, redisMode));
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
            problems.push(
                fieldProblem("accessPolicy.gatewayPrincipal", p, PRINCIPAL_PROBLEM, (s) => s.set("accessPolicy.gatewayPrincipal", suggestedPrincipal(p))),
            );
        }
    }
}

/** The filter layout (defaulted, checked), `statusOnError` (a known status, only when failing closed) and `rateLimitHeaders`. */
export function layoutOf(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): FilterLayout {
    const layout = a.filterLayout ?? FilterLayout.PerInstance;
    problems.push(...oneOfProblems("filterLayout", layout, Object.values(FilterLayout), FilterLayout.PerInstance));
    problems.push(...statusOnErrorProblems("", a.statusOnError, a.failureModeDeny !== false));
    if (a.rateLimitHeaders !== undefined) problems.push(...rateLimitHeadersProblems(a.rateLimitHeaders));
    return layout;
}

/** The filters' `rateLimitHeaders`, defaulted (checked by `layoutOf`): off by default in the service's shadow mode, which refuses nothing. */
export function headersOf(a: Partial<GlobalRateLimitArgs>): RateLimitHeaders {
    return a.rateLimitHeaders ?? (a.service?.shadowMode === true ? RateLimitHeaders.Off : (DEFAULTS.rateLimitHeaders as RateLimitHeaders));
}
