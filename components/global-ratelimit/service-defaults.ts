/**
 * The rate-limit service's settings at the components' defaults, and its tuning options over them
 * (GlobalRateLimit's plan fills in what its arguments leave out from these).
 */
import { REDIS_EVICTION_POLICY, UPSTREAM_JITTER_MAX_SECONDS } from "../../builders/failure-bounds";
import { DEFAULTS } from "../common/defaults";
import { GLOBAL_FIELDS } from "./fields";
import { REDIS_NAME } from "../service/redis";
import { REDIS_FIELDS, REDIS_IMAGE } from "../service/redis-fields";
import { SERVICE_FIELDS, SERVICE_IMAGE, tuningOf } from "../service/fields";
import { RateLimitServiceSettings } from "../service/settings";

export { tuningOf };

/** The service settings at the components' defaults (their declarations and defaults.ts; the stack config prints the same values). */
export function serviceDefaults(): Omit<RateLimitServiceSettings, "redisTimeout"> {
    return {
        namespace: GLOBAL_FIELDS.namespace.default,
        serviceName: SERVICE_FIELDS.name.default,
        grpcPort: SERVICE_FIELDS.grpcPort.default,
        httpPort: DEFAULTS.ratelimitHttpPort,
        debugPort: DEFAULTS.ratelimitDebugPort,
        configName: SERVICE_FIELDS.configName.default,
        image: SERVICE_IMAGE,
        replicas: SERVICE_FIELDS.replicas.default,
        logLevel: SERVICE_FIELDS.logLevel.default,
        ...tuningOf({}),
        redisImage: REDIS_IMAGE,
        redisMaxMemory: REDIS_FIELDS.maxMemory.default,
        redisName: REDIS_NAME,
        redisEvictionPolicy: REDIS_EVICTION_POLICY,
        expirationJitterSeconds: UPSTREAM_JITTER_MAX_SECONDS,
    };
}
