/**
 * GlobalRateLimit's own argument checks (the ones no other component shares): the scope, the domain,
 * the service's options, the failure mode and status, the layout, the access policy (the size of the
 * objects its limits grow is checked on them: global-ratelimit-size.ts). Each returns or collects
 * problems; none throws.
 */
import { FilterLayout, RateLimitHeaders } from "../../builders/envoy-filters";
import { fieldProblem } from "../../lib/field-checks";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { fieldRef } from "../../lib/fix-style";
import { Problem } from "../../lib/problems";
import { DEFAULTS } from "../common/defaults";

import { GO_DURATION } from "../../lib/formats";
import { GlobalRateLimitArgs, RateLimitServiceOptionsArgs } from "./args.generated";
import { statusOnErrorProblems } from "./filter-field-checks";
import { GLOBAL_ARGS_FIELDS, GLOBAL_FIELDS } from "./fields";
import { ACCESS_POLICY_FIELDS } from "../service/access-policy-fields";
import { SERVICE_FIELDS } from "../service/fields";
import { ServiceLogLevel } from "../service/settings";

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

/** `domain`: non-empty, letters, digits, '_', '.', '-' (what the service accepts; its declaration's rule). */
export function domainProblems(domain: unknown): Problem[] {
    return GLOBAL_ARGS_FIELDS.domain.rule.problems("domain", domain, undefined);
}

/** `service.grpcPort`: not one of the service's own HTTP and debug ports. */
export function grpcPortProblems(grpcPort: unknown): Problem[] {
    if (grpcPort !== DEFAULTS.ratelimitHttpPort && grpcPort !== DEFAULTS.ratelimitDebugPort) return [];
    return [
        fieldProblem(
            "service.grpcPort",
            grpcPort,
            `collides with the service's HTTP (${DEFAULTS.ratelimitHttpPort}) or debug (${DEFAULTS.ratelimitDebugPort}) port`,
            (s) => s.set("service.grpcPort", String(SERVICE_FIELDS.grpcPort.default)),
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

/** The service's options, defaults filled in (their declarations, service-fields.ts), each checked by its declaration's rule. */
export function serviceOptionsOf(svc: RateLimitServiceOptionsArgs, problems: Problem[], redisMode: unknown = undefined) {
    const F = SERVICE_FIELDS;
    const { name, configName, grpcPort, replicas } = withDefaults(F, svc);
    const logLevel: ServiceLogLevel = withDefaults(F, svc).logLevel;
    // In the table's order, the port's collision right after its rule, the image (an output accepted) last.
    for (const [f, decl] of Object.entries(F)) {
        if (f !== "image") problems.push(...givenProblems(decl, `service.${f}`, svc[f as keyof typeof F]));
        if (f === "grpcPort") problems.push(...grpcPortProblems(grpcPort));
    }
    problems.push(...pipelineWindowModeProblems(svc.redisPipelineWindow, redisMode));
    problems.push(...givenProblems(F.image, "service.image", svc.image));
    return { name, configName, grpcPort, replicas, logLevel };
}

/** `accessPolicy.gatewayPrincipal` an Istio principal. */
export function accessPolicyProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): void {
    if (a.accessPolicy !== undefined) {
        const p = typeof a.accessPolicy === "object" && a.accessPolicy !== null ? a.accessPolicy.gatewayPrincipal : undefined;
        // Required: checked when missing too.
        problems.push(...ACCESS_POLICY_FIELDS.gatewayPrincipal.rule.problems("accessPolicy.gatewayPrincipal", p, undefined));
    }
}

/** The filter layout (defaulted, checked), `statusOnError` (a known status, only when failing closed) and `rateLimitHeaders`. */
export function layoutOf(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): FilterLayout {
    const layout = withDefaults(GLOBAL_FIELDS, a).filterLayout;
    problems.push(...givenProblems(GLOBAL_FIELDS.filterLayout, "filterLayout", layout));
    problems.push(...statusOnErrorProblems("", a.statusOnError, a.failureModeDeny !== false));
    problems.push(...givenProblems(GLOBAL_FIELDS.rateLimitHeaders, "rateLimitHeaders", a.rateLimitHeaders));
    return layout;
}

/** The filters' `rateLimitHeaders`, defaulted (checked by `layoutOf`): off by default in the service's shadow mode, which refuses nothing. */
export function headersOf(a: Partial<GlobalRateLimitArgs>): RateLimitHeaders {
    return a.rateLimitHeaders ?? (a.service?.shadowMode === true ? RateLimitHeaders.Off : GLOBAL_FIELDS.rateLimitHeaders.default);
}
