/**
 * The validated, fully-defaulted settings of the stack (what `resolveSettings` returns) and the
 * specification's variant presets. Types and constants only.
 */
import { RedisConnection } from "./redis-connection";

export type Variant = "A" | "B";
export type ApiProfile = "seed" | "current";
export type LocalPlacement = "all-routes" | "single-route";
export type VhostScope = "gateway-hosts" | "all";
export type FilterNamespacesMode = "own" | "root";
export type MutualTlsScopeName = "workloads" | "mesh";
export type EspPortMode = "http" | "tcp";
export type RateLimitUnit = "second" | "minute" | "hour" | "day";
/**
 * What the gateway's descriptors key a request on: `url-path`, the path without its query (the
 * specification's behaviour: limits per path); `literal`, the `:path` header as the specification's
 * field tables write it (query included, route limits replace the virtual host's).
 */
export type PathKey = "url-path" | "literal";
export const PATH_KEYS: readonly PathKey[] = ["url-path", "literal"];
export const RATE_LIMIT_UNITS: readonly RateLimitUnit[] = ["second", "minute", "hour", "day"];

/** The descriptor key every filter action of this stack produces (spec 2.4, 2.6). */
export const DESCRIPTOR_KEY = "PATH";

export interface DescriptorLimit {
    key: string;
    /** Absent: catch-all for the key (each distinct value gets its own counter). */
    value?: string;
    unit: RateLimitUnit;
    requestsPerUnit: number;
}

export interface HttpRoute {
    name?: string;
    exact: string[];
    prefix: string[];
}

/** Route-level limit (spec 2.6, variant A). */
export interface ApiRouteLimit {
    route: string;
    regex: string;
    descriptorValue: string;
}

export interface StackSettings {
    variant: Variant;
    apiProfile: ApiProfile;
    paths: { limited: string; page: string; login: string; logout: string; staticPrefix: string; apiPrefix: string };
    global: {
        domain: string;
        descriptors: DescriptorLimit[];
        failureModeDeny: boolean;
        /** The gateway's local pre-limit before the rate-limit filter. */
        preLimit: boolean;
        timeout: string;
        /** How requests are keyed: by path without its query (default), or the literal `:path`. */
        pathKey: PathKey;
        /** Present in variant A only. */
        apiRoute?: ApiRouteLimit;
    };
    local: {
        bucket: number;
        fillInterval: string;
        placement: LocalPlacement;
        serviceLabel: string;
        servicePort: number;
    };
    mesh: {
        /** Istio's root namespace. */
        namespace: string;
        gatewaySelector: { key: string; value: string };
        /** Namespace of the gateway's pods (and of the gateway filters unless `filterNamespaces` is `root`). */
        gatewayNamespace: string;
        vhostScope: VhostScope;
        filterNamespaces: FilterNamespacesMode;
        mutualTls: boolean;
        mutualTlsScope: MutualTlsScopeName;
    };
    bookinfo: {
        namespace: string;
        /** Hosts of the Gateway's server and of the VirtualService. */
        hosts: string[];
        version: string;
        gatewayName: string;
        gatewayPort: number;
        virtualServiceName: string;
        routes: HttpRoute[];
    };
    ratelimit: {
        namespace: string;
        serviceName: string;
        grpcPort: number;
        httpPort: number;
        debugPort: number;
        configName: string;
        image: string;
        replicas: number;
        logLevel: string;
        redisPoolSize: number;
        redisPipelineWindow: string;
        redisPipelineLimit: number;
        localCacheSizeInBytes: number;
        prometheus: boolean;
        /** Limits counted and reported, nothing refused (`SHADOW_MODE`; components/safe-rollout.ts). */
        shadowMode: boolean;
        redisImage: string;
        /** `maxmemory` of the in-cluster Redis (components/failure-bounds.ts). */
        redisMaxMemory: string;
        /** The service's `REDIS_TIMEOUT`, derived from the gateway's timeout (components/failure-bounds.ts). */
        redisTimeout: string;
    };
    /** Which Redis the service counts in (components/redis-connection.ts). */
    redis: RedisConnection;
    /** Who may call the rate-limit service and Redis (components/access-policies.ts). */
    access: { enabled: boolean; gatewayPrincipal: string };
    managedApi?: {
        namespace: string;
        includeIpRanges: string[];
        serviceName: string;
        serviceAccountSecret?: string;
        portMode: EspPortMode;
        ingressName: string;
        ingressClassName: string;
        ingressPath: string;
        espImage: string;
        echoImage: string;
    };
    awaitRollout: boolean;
}

/** What differs between the two variants of the specification (docs/specification.md, "The two variants"). */
export interface VariantPreset {
    domain: string;
    apiLimit?: number;
    localBucket: number;
    /** Whether the VirtualService splits off the `api` route and the route-level patch exists. */
    routeSplit: boolean;
}

export const VARIANT_PRESETS: Readonly<Record<Variant, VariantPreset>> = {
    A: { domain: "ratelimit", apiLimit: 2, localBucket: 4, routeSplit: true },
    B: { domain: "productpage-ratelimit", localBucket: 10, routeSplit: false },
};
