/**
 * What a store holding per-value counters gives each per-value rule, for the rule's own window: how
 * many counters of its key fit, the rate of new values that the store holds for their whole life,
 * and what an attacker must send to make the store evict (and so reset) a counter used once or k
 * times. Redis evicts by use (`allkeys-lfu`, every access counted: builders/failure-bounds.ts), so a
 * flood of values used once ties only with counters used once; to push out a counter used k times
 * the flood's values must each be used k times as well.
 *
 * Pure: no Pulumi runtime, no I/O.
 */
import { ConfigDescriptor, GlobalLimitsPlan, limitOf, ruleConfig } from "./rules";
import { configDescriptorsOf } from "./ratelimit-config";
import { ResolvedLimit, ResolvedRule } from "./rule-args";
import { MAX_COST, ResolvedRequestCost } from "./request-cost-args";
import { MAX_COUNTED_PATH_BYTES, isPerValueRule, longestCounterKeyBytes } from "./counter-stores";
import { LFU_CEILING_USES, REDIS_BASE_BYTES, counterBytes, countersHeld, redisMemoryBytes } from "./failure-bounds";
import { spentCounterAttackRequests } from "./over-limit-cache";

/** A window from which an unverified per-value rule must be sized for (or accept the risk): one hour. */
export const SIZED_WINDOW_SECONDS = 3600;

/** The store the per-value counters live in, as the plan resolved it. */
export interface PerValueStore {
    /** `maxmemory` of the Redis the component deploys; undefined for an existing Redis (its owner sizes it). */
    maxMemory?: string;
    /** Whether it is sized: a declared `newValuesPerSecond` (its `maxMemory`, given or derived, checked to hold it), or an existing Redis. A `maxMemory` alone is not. */
    sized: boolean;
    /** The service's `EXPIRATION_JITTER_MAX_SECONDS`. */
    jitterSeconds: number;
    domain: string;
    /** The `LOCAL_CACHE_SIZE_IN_BYTES` of the service that counts in it (its over-limit cache keeps a spent counter refused). */
    overLimitCacheBytes?: number;
}

/** One per-value rule (or the per-path catch-all) in its store. */
export interface PerValueRuleFigures {
    /** The argument it is given in: `rules[<i>]` or `perPath.eachPath`. */
    field: string;
    name: string;
    /** What a client writes to get a new counter (`header x-api-key`, `client address`, ...). */
    value: string;
    /** Whether that value is one any client writes freely (a header, a query parameter, a path), as opposed to its address. */
    unverified: boolean;
    /** Requests (cost units when `costed`) each counter allows per window. */
    requests: number;
    unit: string;
    windowSeconds: number;
    /** A counter's life: the window plus the service's jitter. */
    lifeSeconds: number;
    keyBytes: number;
    counterBytes: number;
    /** Undefined for an existing Redis. */
    countersHeld?: number;
    /** New values a second the store holds for a whole life without evicting one (all of this rule's). */
    newValuesPerSecondHeld?: number;
    /** New values an attacker must send within a window to evict a counter used once; k times: k × this, in requests, for k up to `LFU_CEILING_USES` (any counter costs at most that many times this). */
    toEvictUsedOnce?: number;
    /**
     * Requests a flood must send to give a spent counter (one refused once) its budget back: Redis must
     * evict it and the service's over-limit cache drop it (builders/over-limit-cache.ts). Undefined
     * for an existing Redis or a service whose cache size is not known here.
     */
    toResetSpent?: number;
    /** Whether `requests` counts cost units (a rule with `cost`). */
    costed: boolean;
    /** Whether the preview refuses it: unverified, a window of an hour or longer, the store not sized, the risk not accepted. */
    refused: boolean;
}

/** What a client varies to get a new counter of `r`, and whether it is a value any client writes. */
function valueOf(r: ResolvedRule): { value: string; unverified: boolean } {
    if (r.header?.perValue) return { value: `header ${r.header.name}`, unverified: true };
    if (r.query?.perValue) return { value: `query parameter ${r.query.name}`, unverified: true };
    // An identity rule counts the verified claim; only requests without a verified token of its issuer count per client.
    if (r.identity) return { value: `verified ${r.identity.jwt.claim} (requests without a verified token: client address)`, unverified: false };
    return { value: "client address", unverified: false };
}

/**
 * The figures of every per-value rule (and the per-path catch-all) of valid limits in `store`. The
 * limits were planned without problems (components/global-ratelimit/limits-plan.ts): rule `i` is the argument's `rules[i]`.
 */
export function perValueFigures(
    plan: Pick<GlobalLimitsPlan, "rules" | "perPath" | "ruleKey">,
    store: PerValueStore,
    valueBytes: number,
): PerValueRuleFigures[] {
    const ruleKey = plan.ruleKey;
    const out: PerValueRuleFigures[] = [];
    plan.rules.forEach((r, i) => {
        if (!isPerValueRule(r)) return;
        const { value, unverified } = valueOf(r);
        const accepted = r.acceptEvictionRisk === true;
        const config = configDescriptorsOf([ruleConfig(r, ruleKey)]);
        out.push(figuresOf(`rules[${i}]`, r.name, value, unverified, accepted, config, r, r.cost !== undefined, store, valueBytes));
    });
    const each = plan.perPath?.eachPath;
    if (each) {
        const d = configDescriptorsOf([{ key: plan.perPath!.key, limit: limitOf(each) }]);
        // The catch-all is not refused: a path is bounded (longer ones share one counter) and the stack's own.
        out.push(figuresOf("perPath.eachPath", "each path", "path", true, true, d, each, false, store, MAX_COUNTED_PATH_BYTES));
    }
    // The cheapest over-limit key of the service is the flood's: its lowest limit (a fixed rule's too, when it counts in this store).
    const cheapestLimit = Math.min(...plan.rules.map((r) => r.requests), ...(each ? [each.requests] : []));
    return out.map((f) => withSpentCost(f, store, cheapestLimit));
}

/** `f` with what a flood must send to reset a spent counter of it, when the store and its service's cache are known. */
function withSpentCost(f: PerValueRuleFigures, store: PerValueStore, cheapestLimit: number): PerValueRuleFigures {
    if (f.countersHeld === undefined || store.overLimitCacheBytes === undefined) return f;
    const toResetSpent = spentCounterAttackRequests({
        limit: f.requests,
        cheapestLimit,
        countersHeld: f.countersHeld,
        cacheBytes: store.overLimitCacheBytes,
        keyBytes: f.keyBytes,
    });
    return { ...f, toResetSpent };
}

function figuresOf(
    field: string,
    name: string,
    value: string,
    unverified: boolean,
    accepted: boolean,
    descriptors: ConfigDescriptor[],
    limit: ResolvedLimit,
    costed: boolean,
    store: PerValueStore,
    valueBytes: number,
): PerValueRuleFigures {
    const windowSeconds = limit.seconds;
    const lifeSeconds = windowSeconds + store.jitterSeconds;
    const keyBytes = longestCounterKeyBytes(store.domain, descriptors, valueBytes);
    const bytes = redisMemoryBytes(store.maxMemory);
    const held = bytes === undefined ? undefined : countersHeld(bytes, keyBytes);
    return {
        field,
        name,
        value,
        unverified,
        requests: limit.requests,
        unit: limit.unit,
        windowSeconds,
        lifeSeconds,
        keyBytes,
        counterBytes: counterBytes(keyBytes),
        ...(held !== undefined ? { countersHeld: held, newValuesPerSecondHeld: held / lifeSeconds, toEvictUsedOnce: held } : {}),
        costed,
        refused: unverified && !accepted && !store.sized && windowSeconds >= SIZED_WINDOW_SECONDS,
    };
}

const n = (x: number) => x.toLocaleString("en-US", { maximumFractionDigits: x < 10 ? 2 : 0 });

/** One line per rule, as `pulumi preview` and `npm start` print it. */
export function perValueFiguresText(f: PerValueRuleFigures, store: PerValueStore): string {
    const head = `per-value limit '${f.name}' (${f.field}: ${f.requests}${f.costed ? " cost units" : ""} per ${f.unit} per ${f.value})`;
    const back = `a reset gives back up to ${f.requests} ${f.costed ? "cost units" : "requests"}`;
    if (f.countersHeld === undefined)
        return `${head}: an existing Redis, sized by its owner: with maxmemory M bytes it holds (M - ${REDIS_BASE_BYTES / (1024 * 1024)} MiB) / ${f.counterBytes} B counters, each living ${n(f.lifeSeconds)} s; ${back}`;
    return (
        `${head}: the store (${store.maxMemory}, evicting the least used) holds ${n(f.countersHeld)} counters of ${f.counterBytes} B (a ${f.keyBytes}-byte key), ` +
        `${n(f.newValuesPerSecondHeld!)} new values/s for ${n(f.lifeSeconds)} s (window + ${n(f.lifeSeconds - f.windowSeconds)} s jitter); ` +
        `to evict a counter used once an attacker sends ${n(f.toEvictUsedOnce!)} new values within the window (${n(f.toEvictUsedOnce! / f.windowSeconds)}/s), ` +
        `used k times k × ${n(f.toEvictUsedOnce!)} requests for k up to ${LFU_CEILING_USES}; a counter used ${LFU_CEILING_USES} times or more is as hot as ` +
        `Redis's use counter can tell (it stops at 255), so ${n(LFU_CEILING_USES * f.toEvictUsedOnce!)} requests (${n(f.toEvictUsedOnce!)} values used ${LFU_CEILING_USES} times) ` +
        `can reset any counter of it; ${spentText(f)}${back}`
    );
}

/** What resetting a spent counter costs, with the over-limit cache that keeps it refused ("" when not known). */
function spentText(f: PerValueRuleFigures): string {
    if (f.toResetSpent === undefined) return "";
    return `a spent counter (refused once, then kept refused by the service's over-limit cache) comes back only after ${n(f.toResetSpent)} requests within its window; `;
}

/** The most one request (or response) takes from a rule's budget with `cost`: Envoy sends at most `MAX_COST`. */
export function mostOneRequestTakes(cost: ResolvedRequestCost): number {
    if (cost.fixed !== undefined) return cost.fixed;
    // Without maxCost the header's largest number (9 digits) is what one request can take.
    if (cost.requestHeader !== undefined) return cost.maxCost !== undefined ? cost.maxCost : MAX_COST - 1;
    return MAX_COST;
}

/**
 * One line per rule with a cost, as the preview prints it: the most one request takes from the
 * rule's budget, and whether that budget is every client's (one counter) or each client's own.
 */
export function costFigureLines(rules: readonly ResolvedRule[], prefix = ""): string[] {
    return rules.flatMap((r, i) => {
        if (!r.cost) return [];
        const most = mostOneRequestTakes(r.cost);
        const shared = !isPerValueRule(r);
        const from =
            r.cost.fixed !== undefined
                ? "a fixed cost"
                : r.cost.requestHeader !== undefined
                  ? `request header ${r.cost.requestHeader}`
                  : `response header ${r.cost.responseHeader}`;
        const whose = shared
            ? `every client shares: ${n(Math.ceil(r.requests / Math.max(1, most)))} such request${most >= r.requests ? "" : "s"} spend it for everyone until the ${r.unit} ends`
            : "each client has (its own counter): one client spends only its own";
        return [`cost of '${r.name}' (${prefix}rules[${i}], ${from}): one request takes at most ${n(most)} of the ${n(r.requests)} a ${r.unit} ${whose}`];
    });
}
