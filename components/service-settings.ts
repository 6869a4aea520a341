/**
 * The rate-limit service's settings, as the components that deploy it (GlobalRateLimit's service, its
 * Redis, their access policies) take them. The stack's settings hold one of these; the components never
 * read stack config.
 */
import { RedisConnection } from "../builders/redis-connection";
import { booleanOption, goDurationOption, wholeNumberOption } from "../lib/field-checks";

/** `LOG_LEVEL` of the rate-limit service. */
export const ServiceLogLevel = {
    Debug: "debug",
    Info: "info",
    Warn: "warn",
    Error: "error",
} as const;
export type ServiceLogLevel = (typeof ServiceLogLevel)[keyof typeof ServiceLogLevel];

/**
 * The service's tuning options (GlobalRateLimit's `service.<name>`), each declared once: its default,
 * its rule and, where the service reads it as it is, its environment variable. The plan checks a given
 * value by the rule and fills in the default (global-ratelimit-plan.ts), the service writes the
 * variables (ratelimit-service.ts), and the stack config prints the default (program/config-keys.ts).
 * `prometheus` and `shadowMode` switch several variables: ratelimit-service.ts and safe-rollout.ts.
 */
export const SERVICE_TUNING = {
    redisPoolSize: { ...wholeNumberOption(10, { min: 1, max: 10_000 }), env: "REDIS_POOL_SIZE" },
    redisPipelineWindow: { ...goDurationOption("0"), env: "REDIS_PIPELINE_WINDOW" },
    redisPipelineLimit: { ...wholeNumberOption(0, { min: 0 }), env: "REDIS_PIPELINE_LIMIT" },
    localCacheSizeInBytes: { ...wholeNumberOption(1048576, { min: 0 }), env: "LOCAL_CACHE_SIZE_IN_BYTES" },
    stopCountingWhenOverLimit: { ...booleanOption(false), env: "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT" },
    prometheus: booleanOption(false),
    shadowMode: booleanOption(false),
};

/** The tuning options with their defaults filled in. */
export type ServiceTuning = { [K in keyof typeof SERVICE_TUNING]: (typeof SERVICE_TUNING)[K]["default"] };

/** The environment variables of the tuning options the service reads as they are, in the table's order. */
export function tuningEnv(t: ServiceTuning): { name: string; value: string }[] {
    return Object.entries(SERVICE_TUNING).flatMap(([k, o]) => ("env" in o ? [{ name: o.env, value: String(t[k as keyof ServiceTuning]) }] : []));
}

export interface RateLimitServiceSettings extends ServiceTuning {
    namespace: string;
    serviceName: string;
    grpcPort: number;
    httpPort: number;
    debugPort: number;
    configName: string;
    image: string;
    replicas: number;
    logLevel: ServiceLogLevel;
    redisImage: string;
    /** `maxmemory` of the in-cluster Redis (builders/failure-bounds.ts). */
    redisMaxMemory: string;
    /** Name of the in-cluster Redis (Deployment, Service, ServiceAccount, `app` label); its generated password's Secret is `<name>-auth`. */
    redisName: string;
    /** `maxmemory-policy` of the in-cluster Redis (builders/failure-bounds.ts). */
    redisEvictionPolicy: string;
    /** The service's `EXPIRATION_JITTER_MAX_SECONDS`: a tenth of the shortest window of its config (builders/failure-bounds.ts). */
    expirationJitterSeconds: number;
    /** The service's `REDIS_TIMEOUT`, derived from the gateway's timeout (builders/failure-bounds.ts). */
    redisTimeout: string;
}

/** What the service, its Redis and their policies are built from. */
export interface ServiceSettings {
    ratelimit: RateLimitServiceSettings;
    /** Which Redis the service counts in (builders/redis-connection.ts). */
    redis: RedisConnection;
    /** Whether Pulumi waits for the Deployments to roll out. */
    awaitRollout: boolean;
}
