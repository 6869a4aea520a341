/**
 * The rate-limit service's settings at the components' defaults, and its tuning options over them
 * (GlobalRateLimit's plan fills in what its arguments leave out from these).
 */
import { REDIS_EVICTION_POLICY, UPSTREAM_JITTER_MAX_SECONDS } from "../builders/failure-bounds";
import { DEFAULTS } from "./defaults";
import { RateLimitServiceOptionsArgs } from "./global-ratelimit-args";
import { REDIS_NAME } from "./redis";
import { RateLimitServiceSettings, SERVICE_TUNING, ServiceTuning } from "./service-settings";

/** The service's tuning options: each given one, else its declared default. */
export function tuningOf(svc: RateLimitServiceOptionsArgs): ServiceTuning {
    return Object.fromEntries(Object.entries(SERVICE_TUNING).map(([k, o]) => [k, svc[k as keyof ServiceTuning] ?? o.default])) as ServiceTuning;
}

/** The service settings at the components' defaults (defaults.ts; the stack config prints the same values). */
export function serviceDefaults(): Omit<RateLimitServiceSettings, "redisTimeout"> {
    return {
        namespace: DEFAULTS.ratelimitNamespace,
        serviceName: DEFAULTS.ratelimitServiceName,
        grpcPort: DEFAULTS.ratelimitGrpcPort,
        httpPort: DEFAULTS.ratelimitHttpPort,
        debugPort: DEFAULTS.ratelimitDebugPort,
        configName: DEFAULTS.configName,
        image: DEFAULTS.ratelimitImage,
        replicas: DEFAULTS.ratelimitReplicas,
        logLevel: DEFAULTS.ratelimitLogLevel,
        ...tuningOf({}),
        redisImage: DEFAULTS.redisImage,
        redisMaxMemory: DEFAULTS.redisMaxMemory,
        redisName: REDIS_NAME,
        redisEvictionPolicy: REDIS_EVICTION_POLICY,
        expirationJitterSeconds: UPSTREAM_JITTER_MAX_SECONDS,
    };
}
