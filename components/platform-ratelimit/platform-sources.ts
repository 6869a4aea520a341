/**
 * PlatformRateLimit's two sources of limits (`overrides`, `defaults`), checked and compiled as
 * GlobalRateLimit compiles its own rules, under each source's descriptor keys: part of the resolve
 * (platform-ratelimit-resolve.ts). Each problem under its source (`defaults.rules[0].route`).
 */
import { holdsPerValueCounters } from "../../builders/counter-stores";
import { evictionPolicyFor } from "../../builders/failure-bounds";
import { PLATFORM_PATH_KEYS, PLATFORM_RULE_KEYS, PlatformSource } from "../../builders/platform-filters";
import { GlobalLimitsInput, RateLimitRuleArgs } from "../../builders/rule-args";
import { policyHeaderValue, policyItems } from "../../builders/policy-header";
import { CompiledLimits, buildGlobalLimits } from "../../builders/rules";
import { Problem } from "../../lib/problems";
import { planGlobalLimits } from "../global-ratelimit/limits-plan";
import { PlatformLimitsArgs, PlatformRateLimitArgs } from "./args.generated";

/** The sources in the order their filters are listed: overrides first. */
export const SOURCES = [PlatformSource.Overrides, PlatformSource.Defaults] as const;

/** One source's limits, checked and compiled under its own keys. */
export interface CheckedSource {
    source: PlatformSource;
    ruleNames: string[];
    /** Its rules that passed their checks, as given (their summaries label the dashboard's rows). */
    checkedRules: RateLimitRuleArgs[];
    compiled: CompiledLimits;
    /** The limits as compiled (its per-value figures are read from them). */
    limits: GlobalLimitsInput;
    /** Its `RateLimit-Policy` value (its limits a client is held to); undefined with the headers off or nothing shown. */
    policy?: string;
}

/** A source's limits compiled under its own keys; its problems under `<source>.`; undefined when it limits nothing. Exported for testing. */
export function resolveSource(
    source: PlatformSource,
    limits: PlatformLimitsArgs | undefined,
    problems: Problem[],
    headersOn = false,
): CheckedSource | undefined {
    if (limits === undefined) return undefined;
    if (typeof limits !== "object" || limits === null || Array.isArray(limits)) {
        problems.push({ key: source, value: limits, problem: "must be an object of rules and perPath", fix: `give { rules: [...] } or omit ${source}` });
        return undefined;
    }
    const rules = Array.isArray(limits.rules) ? limits.rules : [];
    rules.forEach((r, i) => problems.push(...platformRuleProblems(source, r, i)));
    if (limits.perPath?.descriptorKey !== undefined)
        problems.push({
            key: `${source}.perPath.descriptorKey`,
            value: limits.perPath.descriptorKey,
            problem: `is the platform's own (${PLATFORM_PATH_KEYS[source]}), so its counters never meet a team's`,
            fix: "remove descriptorKey",
        });
    const perPath = limits.perPath ? { ...limits.perPath, descriptorKey: PLATFORM_PATH_KEYS[source] } : undefined;
    const planned = planGlobalLimits({ rules: limits.rules, perPath, ruleKey: PLATFORM_RULE_KEYS[source], headersOn });
    const c = buildGlobalLimits(planned.plan);
    problems.push(...planned.problems.map((p) => ({ ...p, key: `${source}.${p.key}` })));
    if (!c.vhostRateLimits.length && !c.routePatches.length) return undefined;
    const policy = policyHeaderValue(policyItems(planned.plan));
    return {
        source,
        ruleNames: rules.map((r) => r?.name).filter((n): n is string => typeof n === "string"),
        checkedRules: planned.checkedRules,
        compiled: {
            vhostRateLimits: c.vhostRateLimits,
            routePatches: c.routePatches,
            plannedDescriptors: c.plannedDescriptors,
            configDescriptors: c.configDescriptors,
        },
        limits: platformLimits(source, limits),
        ...(policy !== undefined ? { policy } : {}),
    };
}

/** What a GlobalRateLimit rule may say and a platform rule may not: a route, an identity. */
function platformRuleProblems(source: PlatformSource, r: unknown, i: number): Problem[] {
    if (!r || typeof r !== "object") return [];
    const rule = r as { route?: unknown; identity?: unknown };
    const out: Problem[] = [];
    if (rule.route !== undefined)
        out.push({
            key: `${source}.rules[${i}].route`,
            value: rule.route,
            problem: "a platform rule applies on every host and route of the gateway, so it cannot sit on one route",
            fix: `remove route (a team limits its own routes with its GlobalRateLimit), or match the route's path with path`,
        });
    if (rule.identity !== undefined)
        out.push({
            key: `${source}.rules[${i}].identity`,
            value: rule.identity,
            problem: "is GlobalRateLimit's only: PlatformRateLimit renders no token check, so no request would carry a verified identity",
            fix: "remove identity, and limit per verified identity with the team's GlobalRateLimit (it renders the token check on its gateway)",
        });
    return out;
}

/** The sources given, each checked; refused when two share a rule name or none is given. */
export function sourcesOf(a: Partial<PlatformRateLimitArgs>, problems: Problem[], headersOn = false): CheckedSource[] {
    const sources = SOURCES.map((s) => resolveSource(s, a[s], problems, headersOn)).filter((s): s is CheckedSource => s !== undefined);
    sharedNameProblems(sources, problems);
    if (!sources.length && a.defaults === undefined && a.overrides === undefined)
        problems.push({
            key: "defaults",
            value: undefined,
            problem: "no defaults and no overrides: the component would limit nothing",
            fix: "give defaults, overrides or both",
        });
    return sources;
}

/** A source's limits under the platform's own descriptor keys, as they are compiled. */
function platformLimits(source: PlatformSource, l: PlatformLimitsArgs): GlobalLimitsInput {
    return { ...l, ruleKey: PLATFORM_RULE_KEYS[source], ...(l.perPath ? { perPath: { ...l.perPath, descriptorKey: PLATFORM_PATH_KEYS[source] } } : {}) };
}

/** The platform store's policy: by use when a source (well-formed or not) holds a per-value counter. */
export function platformEvictionPolicy(a: Partial<PlatformRateLimitArgs>): string {
    const holds = (l: PlatformLimitsArgs | undefined) =>
        l !== null && typeof l === "object" && holdsPerValueCounters({ rules: Array.isArray(l.rules) ? l.rules : [], perPath: l.perPath });
    return evictionPolicyFor(SOURCES.some((s) => holds(a[s])));
}

/** A rule name in both sources would make one dashboard series of two limits. */
function sharedNameProblems(sources: CheckedSource[], problems: Problem[]): void {
    const [first, second] = sources;
    if (!first || !second) return;
    for (const n of first.ruleNames.filter((x) => second.ruleNames.includes(x)))
        problems.push({
            key: "defaults.rules",
            value: n,
            problem: `rule name '${n}' is also an override's: each platform rule needs a name of its own`,
            fix: `rename the default, e.g. '${n}-default'`,
        });
}
