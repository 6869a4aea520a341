/**
 * The per-value side of a GlobalRateLimit (`counterStore: CounterStore.Split`): its arguments, the
 * check of `counterStore` and `perValueStore`, and the settings of its own service and Redis
 * (builders/counter-stores.ts says which counters go there, builders/per-value-filters.ts builds its
 * gateway filters).
 */
import { Problem } from "../lib/problems";
import { oneOfProblems } from "../lib/field-checks";
import { CompiledLimits } from "../builders/rules";
import { GlobalLimitsInput } from "../builders/rule-args";
import { CounterStore, OTHER_PATHS_KEY, LONG_PATH_KEY, SplitLimits, hasBothKinds, splitLimits } from "../builders/counter-stores";
import { PER_VALUE_EVICTION_POLICY } from "../builders/failure-bounds";
import { RATELIMIT_FILTER, instanceFilterName } from "../builders/envoy-filters";
import { dnsProblem } from "./arg-checks";
import { RedisOptionsArgs, redisConnectionOf } from "./redis-options";
import { ServiceSettings } from "./service-settings";

/** The service and Redis of the per-value counters (`counterStore: CounterStore.Split`). */
export interface PerValueStoreArgs {
    /**
     * Redis of the per-value counters: never the fixed counters' Redis. Its `maxmemory` bounds them;
     * full, it refuses new counters (`noeviction`) rather than forgetting live ones. Defaults to one
     * deployed by the component (`redis-per-value`).
     */
    redis?: RedisOptionsArgs;
    /**
     * When the per-value service cannot answer (down, or its Redis full): `false` lets the request
     * through uncounted by the per-value rules, `true` refuses it (`statusOnError`, else 500). The
     * fixed limits keep `failureModeDeny`. A boolean. Defaults to `false`.
     */
    failureModeDeny?: boolean;
}

/** The per-value counters' service, Redis, config and the gateway's second filter. */
export interface PerValuePlan {
    service: ServiceSettings;
    configYaml: string;
    grpcAddress: string;
    httpFilterName: string;
}

/** `counterStore` (checked) and, with `CounterStore.Split` and both kinds of counters in valid limits, the split. */
/** What the per-value side reads of GlobalRateLimit's arguments (its limits and its two fields). */
export interface PerValueInput extends GlobalLimitsInput {
    counterStore?: CounterStore;
    perValueStore?: PerValueStoreArgs;
}

export function splitOf(a: PerValueInput, compiled: CompiledLimits, problems: Problem[]): SplitLimits | undefined {
    const store = a.counterStore ?? CounterStore.Split;
    const storeProblems = oneOfProblems("counterStore", store, Object.values(CounterStore), CounterStore.Split);
    if (storeProblems.length) {
        problems.push(...storeProblems);
        return undefined;
    }
    if (a.perValueStore !== undefined && a.perValueStore?.failureModeDeny !== undefined && typeof a.perValueStore.failureModeDeny !== "boolean") {
        problems.push({
            key: "perValueStore.failureModeDeny",
            value: a.perValueStore.failureModeDeny,
            problem: "must be a boolean: false lets a request through when the per-value service cannot answer, true refuses it",
            fix: "use false (the default) or true",
        });
    }
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
    return splitLimits(input);
}

/** The per-value side's service and Redis: the fixed side's settings under names of their own, a Redis that refuses when full. */
export function perValuePlanOf(a: PerValueInput, fixed: ServiceSettings, problems: Problem[]): PerValuePlan {
    const r = fixed.ratelimit;
    const pvRedis = a.perValueStore?.redis ?? {};
    const given = redisConnectionOf(pvRedis, problems);
    // A deployed per-value Redis reads the password Secret the user gave for the fixed side's Redis,
    // when there is one (no generated password, no Random provider); otherwise it generates its own.
    const redis = a.perValueStore?.redis === undefined && fixed.redis.password ? { ...given, password: fixed.redis.password } : given;
    const serviceName = `${r.serviceName}-per-value`;
    problems.push(...dnsProblem("service.name", serviceName, "label"));
    return {
        service: {
            ...fixed,
            redis,
            ratelimit: {
                ...r,
                serviceName,
                configName: `${r.configName}-per-value`,
                redisName: `${r.redisName}-per-value`,
                redisEvictionPolicy: PER_VALUE_EVICTION_POLICY,
                redisImage: pvRedis.image ?? r.redisImage,
                redisMaxMemory: pvRedis.maxMemory ?? r.redisMaxMemory,
            },
        },
        configYaml: "",
        grpcAddress: "",
        httpFilterName: instanceFilterName(RATELIMIT_FILTER, r.namespace, serviceName),
    };
}
