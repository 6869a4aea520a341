/**
 * The per-value side of a GlobalRateLimit (`counterStore: CounterStore.Split`): its arguments, the
 * check of `counterStore` and `perValueStore`, and the settings of its own service and Redis
 * (builders/counter-stores.ts says which counters go there, builders/per-value-filters.ts builds its
 * gateway filters).
 */
import { Problem } from "../../lib/problems";
import { FixStyle } from "../../lib/fix-style";
import { COMPONENT_FIX, fieldProblem } from "../../lib/field-checks";
import { ConfigDescriptor, GlobalLimitsPlan } from "../../builders/rules";
import { CheckedLimits } from "./limits-plan";
import { GlobalLimitsInput } from "../../builders/rule-args";
import {
    CounterStore,
    LONG_PATH_KEY,
    OTHER_PATHS_KEY,
    SplitLimits,
    configWindows,
    hasBothKinds,
    longestCounterKeyBytes,
    splitLimits,
} from "../../builders/counter-stores";
import {
    PER_VALUE_EVICTION_POLICY,
    REDIS_BASE_BYTES,
    REDIS_MAXMEMORY_SHARE,
    REDIS_MEMORY_LIMIT_BYTES,
    counterBytes,
    countersHeld,
    expirationJitterFor,
    maxMemoryFor,
    redisMemoryBytes,
} from "../../builders/failure-bounds";
import { ErrorStatus, RATELIMIT_FILTER, instanceFilterName } from "../../builders/envoy-filters";
import { RedisModeName } from "../../builders/redis-connection";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { GLOBAL_FIELDS } from "./fields";
import { PER_VALUE_FIELDS } from "../service/fields";
import { dnsProblem, planned } from "../common/arg-checks";
import { statusOnErrorProblems } from "./filter-field-checks";
import { redisConnectionOf, redisMaxMemoryProblem, resolvedRedisOf } from "../service/redis-options";
import { overLimitCacheBytes } from "../../builders/over-limit-cache";
import { PerValueStoreArgs } from "./args.generated";

export { PerValueStoreArgs };
import { ServiceSettings } from "../service/settings";

/** What the per-value store holds, from the rules and `newValuesPerSecond` (reported; builders/failure-bounds.ts). */
export interface PerValueSizing {
    /** The Redis `maxmemory` (the given one, else the one the rate needs, else the default). */
    maxMemory: string;
    /** The longest counter key and what one such counter takes in Redis (bytes). */
    keyBytes: number;
    counterBytes: number;
    /** How long a counter lives at most: the longest window of the per-value rules plus the service's jitter. */
    lifeSeconds: number;
    /** `EXPIRATION_JITTER_MAX_SECONDS` of the per-value service. */
    jitterSeconds: number;
    /** Counters of the longest key `maxMemory` holds, and the rate of new ones it holds for their whole life. */
    countersHeld: number;
    newValuesPerSecondHeld: number;
}

/** The per-value counters' service and Redis, and the name of the gateway's second filter (resolved from the arguments). */
export interface PerValueSide {
    readonly service: ServiceSettings;
    readonly sizing: PerValueSizing;
    readonly httpFilterName: string;
}

/** The per-value side with what is built from it: its service's config and address. */
export interface PerValuePlan extends PerValueSide {
    configYaml: string;
    grpcAddress: string;
}

/** What the per-value side reads of GlobalRateLimit's arguments (its limits and its two fields). */
export interface PerValueInput extends GlobalLimitsInput {
    counterStore?: CounterStore;
    perValueStore?: PerValueStoreArgs;
    /** The service's over-limit cache, when the user gives its size. */
    service?: { localCacheSizeInBytes?: number };
}

/**
 * `LOCAL_CACHE_SIZE_IN_BYTES` of a service whose store holds per-value counters: the given one, else
 * one that keeps a spent key refused through a flood of over-limit keys 4 times the counters its
 * store of `maxMemory` holds (builders/over-limit-cache.ts), the longest counter key counted.
 */
export function overLimitCacheOf(a: PerValueInput, maxMemory: string, domain: string, descriptors: ConfigDescriptor[]): number {
    const given = a.service?.localCacheSizeInBytes;
    if (given !== undefined) return given;
    const p = a.perValueStore ?? {};
    const valueBytes = Number.isSafeInteger(p.longestValueBytes) ? p.longestValueBytes! : PER_VALUE_FIELDS.longestValueBytes.default;
    const keyBytes = longestCounterKeyBytes(domain, descriptors, valueBytes);
    return overLimitCacheBytes(countersHeld(redisMemoryBytes(maxMemory) ?? 0, keyBytes), keyBytes);
}

/**
 * `counterStore` (checked) and, with `CounterStore.Split` and both kinds of counters in valid limits,
 * the split of `limits`, the plan's limits as resolved once (a rule's own headers written against the
 * filter's, as on the one store).
 */
export function splitOf(a: PerValueInput, compiled: CheckedLimits, limits: GlobalLimitsPlan, problems: Problem[]): SplitLimits | undefined {
    const store = withDefaults(GLOBAL_FIELDS, a).counterStore;
    const storeProblems = givenProblems(GLOBAL_FIELDS.counterStore, "counterStore", store);
    if (storeProblems.length) {
        problems.push(...storeProblems);
        return undefined;
    }
    problems.push(...perValueStoreProblems(a.perValueStore ?? {}));
    const input = { rules: a.rules, perPath: a.perPath, pathKey: a.pathKey, ruleKey: a.ruleKey, clientPrefix: a.clientPrefix };
    if (store !== CounterStore.Split || compiled.problems.length || !hasBothKinds(input)) return undefined;
    for (const [field, key] of [
        ["ruleKey", a.ruleKey],
        ["perPath.descriptorKey", a.perPath?.descriptorKey],
    ] as const) {
        if (key === OTHER_PATHS_KEY || key === LONG_PATH_KEY) {
            problems.push({
                key: field,
                value: key,
                problem: `is a key the per-value side uses for the per-path counters (counterStore: split)`,
                fix: "use another key, or counterStore: CounterStore.Single",
            });
        }
    }
    return splitLimits(limits);
}

/** The per-value store's own fields (its Redis is checked with its connection): each refused with its field and fix. */
function perValueStoreProblems(p: PerValueStoreArgs): Problem[] {
    const F = PER_VALUE_FIELDS;
    const f = (name: Exclude<keyof typeof F, "redis">) => givenProblems(F[name], `perValueStore.${name}`, p[name]);
    return [
        ...f("failureModeDeny"),
        ...f("timeout"),
        // The status's rule with its dependence on the failure mode (filter-field-checks.ts).
        ...statusOnErrorProblems("perValueStore.", p.statusOnError, p.failureModeDeny === true),
        ...f("newValuesPerSecond"),
        ...f("longestValueBytes"),
    ];
}

/** How the per-value filter calls its service: its own timeout, failure mode and error status. */
export function perValueCallOf(a: PerValueInput & { statusOnError?: ErrorStatus }): { timeout: string; failureModeDeny: boolean; statusOnError?: ErrorStatus } {
    const p = a.perValueStore ?? {};
    const failureModeDeny = p.failureModeDeny === true;
    const statusOnError = p.statusOnError ?? a.statusOnError;
    return {
        timeout: withDefaults(PER_VALUE_FIELDS, p).timeout,
        failureModeDeny,
        ...(failureModeDeny && statusOnError !== undefined ? { statusOnError } : {}),
    };
}

/**
 * The per-value store's `maxmemory` and what it holds: the given `redis.maxMemory`, else what
 * `newValuesPerSecond` needs (rate × (longest window + jitter) × counter bytes), else the fixed
 * side's. The need is refused over the container's bound, and so is a given `maxMemory` below it.
 */
export function perValueSizingOf(
    p: PerValueStoreArgs,
    side: { domain: string; descriptors: ConfigDescriptor[]; fallback: string },
    problems: Problem[],
): PerValueSizing {
    const windows = configWindows(side.descriptors);
    const jitterSeconds = expirationJitterFor(windows);
    const lifeSeconds = Math.max(0, ...windows) + jitterSeconds;
    const valueBytes = Number.isSafeInteger(p.longestValueBytes) ? p.longestValueBytes! : PER_VALUE_FIELDS.longestValueBytes.default;
    const keyBytes = longestCounterKeyBytes(side.domain, side.descriptors, valueBytes);
    const rate = Number.isSafeInteger(p.newValuesPerSecond) && p.newValuesPerSecond! > 0 ? p.newValuesPerSecond : undefined;
    const need =
        rate !== undefined ? maxMemoryFor({ newValuesPerSecond: rate, windowSeconds: lifeSeconds - jitterSeconds, jitterSeconds, keyBytes }) : undefined;
    const given = p.redis?.maxMemory;
    const inCluster = (p.redis?.mode ?? RedisModeName.InCluster) === RedisModeName.InCluster;
    const arithmetic =
        need &&
        `${rate}/s × (${lifeSeconds - jitterSeconds} s window + ${jitterSeconds} s jitter) × ${counterBytes(keyBytes)} B per counter (a ${keyBytes}-byte key) + ${REDIS_BASE_BYTES / (1024 * 1024)} MiB = ${need.maxMemory}`;
    if (need && inCluster && given === undefined && redisMaxMemoryProblem(need.maxMemory) !== undefined)
        problems.push(
            fieldProblem(
                "perValueStore.newValuesPerSecond",
                rate,
                `needs ${arithmetic}, more than the per-value Redis may hold (${redisMaxMemoryProblem(need.maxMemory)})`,
                (s) =>
                    `${s.set("perValueStore.newValuesPerSecond", String(Math.max(1, Math.floor((maxMemoryBound() - REDIS_BASE_BYTES) / (lifeSeconds * counterBytes(keyBytes))))))}, or give the per-value rules shorter windows, or an existing Redis (perValueStore.redis.mode) sized for it`,
            ),
        );
    const givenBytes = redisMemoryBytes(given);
    if (need && inCluster && givenBytes !== undefined && givenBytes < need.bytes)
        problems.push(
            fieldProblem(
                "perValueStore.redis.maxMemory",
                given,
                `is below what perValueStore.newValuesPerSecond needs: ${arithmetic}`,
                (s) => `${s.set("perValueStore.redis.maxMemory", need.maxMemory)}, or ${s.rm("perValueStore.redis.maxMemory")}`,
            ),
        );
    const maxMemory = given ?? need?.maxMemory ?? side.fallback;
    const held = countersHeld(redisMemoryBytes(maxMemory) ?? 0, keyBytes);
    return {
        maxMemory,
        keyBytes,
        counterBytes: counterBytes(keyBytes),
        lifeSeconds,
        jitterSeconds,
        countersHeld: held,
        newValuesPerSecondHeld: Math.floor(held / Math.max(1, lifeSeconds)),
    };
}

/** The per-value side's service and Redis: the fixed side's settings under names of their own, a Redis that evicts the least used when full. */
export function perValueSideOf(
    a: PerValueInput,
    fixed: ServiceSettings,
    side: { domain: string; descriptors: ConfigDescriptor[] },
    problems: Problem[],
): PerValueSide {
    const r = fixed.ratelimit;
    const pvRedis = a.perValueStore?.redis ?? {};
    const redisProblems: Problem[] = [];
    const given = redisConnectionOf(pvRedis, redisProblems);
    problems.push(...redisProblems.map((p) => underField("perValueStore", p)));
    // A deployed per-value Redis reads the password Secret the user gave for the fixed side's Redis,
    // when there is one (no generated password, no Random provider); otherwise it generates its own.
    const inherited = a.perValueStore?.redis === undefined && fixed.redis.auth.kind === "given" ? { ...given, password: fixed.redis.auth.secret } : given;
    const redisName = `${r.redisName}-per-value`;
    const redis = resolvedRedisOf(inherited, redisName);
    const serviceName = `${r.serviceName}-per-value`;
    problems.push(...dnsProblem("service.name", serviceName, "label"));
    const sizing = perValueSizingOf(a.perValueStore ?? {}, { ...side, fallback: r.redisMaxMemory }, problems);
    return {
        service: {
            ...fixed,
            redis,
            ratelimit: {
                ...r,
                serviceName,
                configName: `${r.configName}-per-value`,
                redisName,
                redisEvictionPolicy: PER_VALUE_EVICTION_POLICY,
                redisImage: pvRedis.image !== undefined ? planned(pvRedis.image) : r.redisImage,
                redisMaxMemory: sizing.maxMemory,
                expirationJitterSeconds: sizing.jitterSeconds,
                localCacheSizeInBytes: overLimitCacheOf(a, sizing.maxMemory, side.domain, side.descriptors),
            },
        },
        sizing,
        httpFilterName: instanceFilterName(RATELIMIT_FILTER, r.namespace, serviceName),
    };
}

/** The largest `maxmemory` the deployed Redis may have (bytes). */
function maxMemoryBound(): number {
    return Math.floor(REDIS_MEMORY_LIMIT_BYTES * REDIS_MAXMEMORY_SHARE);
}

/** One line of the sizing, as the `perValueMaxMemory` output and the limits table give it. */
export function perValueSizingText(z: PerValueSizing): string {
    return `${z.maxMemory}: ${z.countersHeld} counters of ${z.counterBytes} B (a ${z.keyBytes}-byte key), ${z.newValuesPerSecondHeld} new values/s for ${z.lifeSeconds} s (window + ${z.jitterSeconds} s jitter)`;
}

/**
 * A problem of the per-value store's Redis, which the Redis rules check as `redis.*`, under the
 * field it is given in (`perValueStore.redis.*`), its fix naming that field too.
 */
function underField(prefix: string, p: Problem): Problem {
    const at = (f: string) => `${prefix}.${f}`;
    const style = (s: FixStyle): FixStyle => ({ ...s, set: (f, v) => s.set(at(f), v), rm: (f) => s.rm(at(f)), rename: (a, b, v) => s.rename(at(a), at(b), v) });
    const fixWith = p.fixWith;
    return { ...p, key: at(p.key), ...(fixWith ? { fix: fixWith(style(COMPONENT_FIX)), fixWith: (s: FixStyle) => fixWith(style(s)) } : {}) };
}
