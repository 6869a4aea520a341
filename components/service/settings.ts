/**
 * The rate-limit service's settings, as the components that deploy it (GlobalRateLimit's service, its
 * Redis, their access policies) take them. The stack's settings hold one of these; the components never
 * read stack config.
 */
import { ResolvedRedis } from "../../builders/redis-connection";
import { ServiceLogLevel, ServiceTuning } from "./fields";

export { ServiceLogLevel };

/** The service's settings; its tuning options as declared in service-fields.ts. */
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
    /** The service's `REDIS_TIMEOUT`: its dial bound, the same for every gateway timeout (builders/failure-bounds.ts). */
    redisTimeout: string;
}

/** What the service, its Redis and their policies are built from. */
export interface ServiceSettings {
    ratelimit: RateLimitServiceSettings;
    /** Which Redis the service counts in (builders/redis-connection.ts). */
    redis: ResolvedRedis;
    /** Whether Pulumi waits for the Deployments to roll out. */
    awaitRollout: boolean;
    /** Whether the pods join an ambient mesh (ztunnel, no sidecar) instead of getting sidecars. */
    ambient?: boolean;
}
