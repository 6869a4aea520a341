/**
 * GlobalRateLimit's defaults in the shape of its arguments, for whoever reads a default by the
 * field's path (the stack's config keys). Each value is stated once elsewhere (defaults.ts, the
 * service's tuning table, the rules' client prefix, the Redis mode) and placed here under its
 * field; the object is type-checked against the arguments. A field absent here has no fixed
 * default. Pure.
 */
import { RedisModeName } from "../builders/redis-connection";
import { DEFAULT_CLIENT_PREFIX } from "../builders/rule-args";
import { DEFAULTS } from "./defaults";
import { GlobalRateLimitArgs } from "./global-ratelimit-args";
import { SERVICE_TUNING, ServiceTuning } from "./service-settings";

/** Any part of `T`, at any depth (a default may sit under a field whose siblings are required). */
type Partially<T> = {
    [K in keyof T]?: NonNullable<T[K]> extends readonly unknown[] ? T[K] : NonNullable<T[K]> extends object ? Partially<NonNullable<T[K]>> : T[K];
};

/** The service's tuning options at their defaults (the tuning table's own). */
const TUNING_DEFAULTS = Object.fromEntries(Object.entries(SERVICE_TUNING).map(([k, o]) => [k, o.default])) as ServiceTuning;

export const GLOBAL_DEFAULTS = {
    timeout: DEFAULTS.rateLimitTimeout,
    failureModeDeny: DEFAULTS.failureModeDeny,
    clientPrefix: { ...DEFAULT_CLIENT_PREFIX },
    service: {
        name: DEFAULTS.ratelimitServiceName,
        configName: DEFAULTS.configName,
        grpcPort: DEFAULTS.ratelimitGrpcPort,
        image: DEFAULTS.ratelimitImage,
        replicas: DEFAULTS.ratelimitReplicas,
        logLevel: DEFAULTS.ratelimitLogLevel,
        ...TUNING_DEFAULTS,
    },
    redis: {
        mode: RedisModeName.InCluster,
        image: DEFAULTS.redisImage,
        maxMemory: DEFAULTS.redisMaxMemory,
        tls: DEFAULTS.redisTls,
        passwordSecret: { key: DEFAULTS.redisPasswordSecretKey },
    },
    perValueStore: {
        timeout: DEFAULTS.perValueTimeout,
        failureModeDeny: DEFAULTS.perValueFailureModeDeny,
        newValuesPerSecond: DEFAULTS.perValueNewValuesPerSecond,
    },
} satisfies Partially<GlobalRateLimitArgs>;
