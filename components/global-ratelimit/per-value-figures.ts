/**
 * GlobalRateLimit's per-value rules in the store that holds them (the split layout's per-value store,
 * else its one store): the figures each rule gets (builders/store-figures.ts), printed by `pulumi
 * preview` and `npm start`, and the refusal of an unverified per-value rule with a window of an hour
 * or longer in a store nobody sized.
 */
import { withDefaults } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";
import { fieldProblem } from "../../lib/field-checks";
import { ConfigDescriptor, GlobalLimitsPlan } from "../../builders/rules";
import { GlobalLimitsInput } from "../../builders/rule-args";
import { PLATFORM_DOMAIN } from "../../builders/platform-filters";
import { holdsPerValueCounters } from "../../builders/counter-stores";
import { RedisModeName } from "../../builders/redis-connection";
import { REDIS_MAXMEMORY_SHARE, REDIS_MEMORY_LIMIT_BYTES, countersHeld, evictionPolicyFor, redisMemoryBytes } from "../../builders/failure-bounds";
import { RateLimitServiceSettings } from "../service/settings";
import { PER_VALUE_FIELDS } from "../service/fields";
import { PerValueRuleFigures, PerValueStore, costFigureLines, perValueFigures, perValueFiguresText } from "../../builders/store-figures";
import { PerValueInput, PerValueSide, perValueSizingOf } from "./per-value-store";
import { resolveCheckedLimits } from "./limits-plan";
import { RedisOptionsArgs } from "../service/redis-options";

/** The figures count the limits only: what the gateway tells clients changes none of them. */
const FIGURES_HEADERS = true;

/** The per-value rules' figures and the lines the preview prints: one per cost rule (builders/store-figures.ts costFigureLines), then one per per-value rule. */
export interface PerValueFiguresPlan {
    store?: PerValueStore;
    figures: PerValueRuleFigures[];
    lines: string[];
}

/** What the figures read of GlobalRateLimit's arguments. */
export interface FiguresInput extends PerValueInput {
    domain?: string;
    redis?: RedisOptionsArgs;
}

/**
 * The one store's (no split) settings for limits with per-value counters: it evicts by use, and its
 * `maxmemory` is the given one, else what `perValueStore.newValuesPerSecond` needs for the longest
 * window, else `fallback`. A store of fixed counters only gets their policy and `fallback`.
 */
export function oneStoreOf(
    a: FiguresInput,
    fallback: string,
    descriptors: ConfigDescriptor[],
    problems: Problem[],
): Pick<RateLimitServiceSettings, "redisEvictionPolicy" | "redisMaxMemory"> {
    return { redisEvictionPolicy: evictionPolicyFor(holdsPerValueCounters(a)), redisMaxMemory: oneStoreMaxMemory(a, descriptors, fallback, problems) };
}

function oneStoreMaxMemory(a: FiguresInput, descriptors: ConfigDescriptor[], fallback: string, problems: Problem[]): string {
    const rate = a.perValueStore?.newValuesPerSecond;
    const inCluster = (a.redis?.mode ?? RedisModeName.InCluster) === RedisModeName.InCluster;
    const given = a.redis?.maxMemory;
    if (!inCluster || !holdsPerValueCounters(a) || !(Number.isSafeInteger(rate) && rate! > 0)) return given ?? fallback;
    const sizing = (p: Problem[]) => perValueSizingOf({ ...a.perValueStore, redis: undefined }, { domain: a.domain ?? "", descriptors, fallback }, p);
    if (given === undefined) return sizing(problems).maxMemory;
    // A given maxMemory must hold what the declared rate needs, as the split layout's per-value store must.
    const needProblems: Problem[] = [];
    const need = sizing(needProblems).maxMemory;
    // A rate no Redis the component deploys can hold is refused at the rate (its fix a rate that fits), not at the memory.
    if (needProblems.length) {
        problems.push(...needProblems);
        return given;
    }
    const [givenBytes, needBytes] = [redisMemoryBytes(given), redisMemoryBytes(need)];
    if (givenBytes !== undefined && needBytes !== undefined && givenBytes < needBytes)
        problems.push(
            fieldProblem(
                "redis.maxMemory",
                given,
                `is below what perValueStore.newValuesPerSecond (${rate}/s) needs for the per-value counters' life: ${need}`,
                (x) => `${x.set("redis.maxMemory", need)}, or ${x.rm("redis.maxMemory")}`,
            ),
        );
    return given;
}

/** The store of the per-value counters: the per-value side's, else the one store (when it holds any). */
function storeOf(a: FiguresInput, s: { perValue?: PerValueSide; maxMemory: string; jitterSeconds: number; cacheBytes: number }): PerValueStore | undefined {
    const inCluster = (r: RedisOptionsArgs | undefined) => (r?.mode ?? RedisModeName.InCluster) === RedisModeName.InCluster;
    const rated = (a.perValueStore?.newValuesPerSecond ?? 0) > 0;
    const domain = a.domain ?? "";
    if (s.perValue) {
        const r = a.perValueStore?.redis;
        const own = inCluster(r);
        // A maxMemory alone says nothing of what it must hold: the store is sized by a declared rate (checked against it) or its owner.
        const sized = rated || !own;
        const overLimitCacheBytes = s.perValue.service.ratelimit.localCacheSizeInBytes;
        return {
            ...(own ? { maxMemory: s.perValue.sizing.maxMemory } : {}),
            sized,
            jitterSeconds: s.perValue.sizing.jitterSeconds,
            domain,
            overLimitCacheBytes,
        };
    }
    if (!holdsPerValueCounters(a)) return undefined;
    const own = inCluster(a.redis);
    return { ...(own ? { maxMemory: s.maxMemory } : {}), sized: rated || !own, jitterSeconds: s.jitterSeconds, domain, overLimitCacheBytes: s.cacheBytes };
}

/** The figures of valid limits (none when the limits have problems), and a problem for each refused rule. */
export function perValueFiguresOf(
    a: FiguresInput,
    limits: GlobalLimitsPlan,
    r: RateLimitServiceSettings,
    perValue: PerValueSide | undefined,
    limitsValid: boolean,
    problems: Problem[],
): PerValueFiguresPlan {
    const s = { perValue, maxMemory: r.redisMaxMemory, jitterSeconds: r.expirationJitterSeconds, cacheBytes: r.localCacheSizeInBytes };
    const store = limitsValid ? storeOf(a, s) : undefined;
    const costs = limitsValid ? costFigureLines(limits.rules) : [];
    if (!store) return { figures: [], lines: costs };
    // The value length the store's sizing counts with (perValueStore.longestValueBytes): the suggested fix then fits.
    const figures = perValueFigures(limits, store, withDefaults(PER_VALUE_FIELDS, a.perValueStore).longestValueBytes);
    const memoryField = s.perValue ? "perValueStore.redis.maxMemory" : "redis.maxMemory";
    for (const f of figures.filter((x) => x.refused)) problems.push(refusal(f, store, memoryField, "perValueStore.newValuesPerSecond"));
    return { store, figures, lines: [...costs, ...figures.map((f) => perValueFiguresText(f, store))] };
}

/**
 * A PlatformRateLimit's per-value rules in its one store, each under its source (`defaults.rules[0]`),
 * refused as GlobalRateLimit's are (its store is sized by `redis.maxMemory` only).
 */
export function platformFiguresOf(
    sources: { source: string; limits: GlobalLimitsInput }[],
    r: RateLimitServiceSettings,
    redis: RedisOptionsArgs | undefined,
    problems: Problem[],
): PerValueFiguresPlan {
    const own = (redis?.mode ?? RedisModeName.InCluster) === RedisModeName.InCluster;
    // The platform's store has no declared rate: only an existing Redis (sized by its owner) counts as sized.
    const sized = !own;
    const store: PerValueStore = {
        ...(own ? { maxMemory: r.redisMaxMemory } : {}),
        sized,
        jitterSeconds: r.expirationJitterSeconds,
        domain: PLATFORM_DOMAIN,
        overLimitCacheBytes: r.localCacheSizeInBytes,
    };
    const resolved = sources.map(({ source, limits }) => ({ source, limits: resolveCheckedLimits({ ...limits, headersOn: FIGURES_HEADERS }) }));
    const figures = resolved.flatMap(({ source, limits }) =>
        perValueFigures(limits, store, PER_VALUE_FIELDS.longestValueBytes.default).map((f) => ({ ...f, field: `${source}.${f.field}` })),
    );
    for (const f of figures.filter((x) => x.refused)) problems.push(refusal(f, store, "redis.maxMemory"));
    const costs = resolved.flatMap(({ source, limits }) => costFigureLines(limits.rules, `${source}.`));
    return { store, figures, lines: [...costs, ...figures.map((f) => perValueFiguresText(f, store))] };
}

const MIB = 1024 * 1024;

/**
 * Why an unverified per-value rule over an hour or longer is refused in a store nobody sized (a
 * `maxMemory` alone sizes nothing: it says how big the store is, not what it must hold), and the ways out.
 */
function refusal(f: PerValueRuleFigures, store: PerValueStore, memoryField: string, rateField?: string): Problem {
    const rate = (f.newValuesPerSecondHeld ?? 0).toLocaleString("en-US", { maximumFractionDigits: 2 });
    const held = (f.countersHeld ?? 0).toLocaleString("en-US");
    // The most new values a second the largest Redis the component deploys holds for this rule's counters' life.
    const largest = Math.floor(REDIS_MEMORY_LIMIT_BYTES * REDIS_MAXMEMORY_SHARE);
    const most = Math.max(1, Math.floor(countersHeld(largest, f.keyBytes) / f.lifeSeconds));
    const here = Math.max(1, Math.floor(f.newValuesPerSecondHeld ?? 0));
    return fieldProblem(
        f.field,
        f.name,
        `is a per-value limit on ${f.value}, a value any client writes, over a ${f.unit}: its store (${store.maxMemory}, sized for no declared rate of new values) holds ` +
            `${held} counters of this rule, so ${held} new values within the ${f.unit} (${rate}/s over a counter's life) make it evict ` +
            `a counter used once, whose client then gets its ${f.requests} back`,
        (x) =>
            (rateField
                ? `declare the new values a second the store must hold, e.g. ${x.set(rateField, String(here))} (what ${store.maxMemory} holds for this window; ` +
                  `${most}/s is the most a ${largest / MIB}mb Redis holds, ${x.set(memoryField, `${largest / MIB}mb`)}), or `
                : `give the platform an existing Redis sized by its owner (redis.mode), or `) +
            `accept the risk: ${x.set(`${f.field}.acceptEvictionRisk`, "true")}`,
    );
}
