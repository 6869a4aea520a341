/**
 * The validated, fully-defaulted settings of the stack (what `resolveSettings` returns) and the
 * specification's variant presets. Types and constants only. Each choice is the package's const
 * object and its type (components/common/mesh-enums.ts, builders/rules.ts), named here by that one name.
 */
import { ResolvedRedis } from "../builders/redis-connection";
import { SpecPaths } from "../builders/routes";
import { LimitUnit, PathKeyMode } from "../builders/rule-args";
import { CounterStore } from "../builders/counter-stores";
import { ErrorStatus, FilterLayout } from "../builders/envoy-filters";
import {
    ApiProfileName,
    BookinfoMode,
    FilterNamespaces,
    LocalPlacementMode,
    MeshMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "../components/common/mesh-enums";
import { BookinfoOptions } from "../components/bookinfo/args.generated";
import { BookinfoSettings } from "../components/bookinfo/resolve";
import { LocalBucketOptions } from "../components/local-ratelimit/component";
import { DescriptorArgs } from "../components/common/mesh-enums";
import { ManagedApiOptions } from "../components/managed-api/args.generated";
import { ManagedApiSettings } from "../components/managed-api/resolve";
import { RateLimitServiceSettings } from "../components/service/settings";

/** What the gateway's descriptors key a request on (builders/rules.ts `PathKeyMode`), every value. */
export const PATH_KEYS: readonly PathKeyMode[] = Object.values(PathKeyMode);
export const RATE_LIMIT_UNITS: readonly LimitUnit[] = Object.values(LimitUnit);

/** Route-level limit (spec 2.6, variant A). */
export interface ApiRouteLimit {
    route: string;
    regex: string;
    descriptorValue: string;
}

export interface StackSettings {
    variant: StackVariant;
    apiProfile: ApiProfileName;
    /** Sidecars, or ambient mode (no sidecars; a Gateway API ingress; no local bucket). */
    meshMode: MeshMode;
    paths: SpecPaths;
    global: {
        domain: string;
        descriptors: DescriptorArgs[];
        failureModeDeny: boolean;
        /** The gateway's local pre-limit before the rate-limit filter. */
        preLimit: boolean;
        /** Fixed and per-value counters in stores of their own (split), or one store (the specification's). */
        counterStore: CounterStore;
        /** How requests are keyed: by path without its query (default), or the literal `:path`. */
        pathKey: PathKeyMode;
        /** How the gateway filters share their listener (shared: the specification's names). */
        filterLayout: FilterLayout;
        /** `status_on_error`; undefined: Envoy's 500. */
        statusOnError?: ErrorStatus;
        /** Present in variant A only. */
        apiRoute?: ApiRouteLimit;
    };
    /** The bucket's options as given (LocalRateLimit's, which it checks), and what MeshRateLimit resolves. */
    local: LocalBucketOptions & {
        bucket: number;
        fillInterval: string;
        placement: LocalPlacementMode;
        /** Whether the stack creates the bucket (`false` on ambient). */
        enabled: boolean;
        serviceLabel: string;
        port: number;
        shadow: boolean;
    };
    mesh: {
        /** Istio's root namespace. */
        namespace: string;
        gatewaySelector: { key: string; value: string };
        /** Namespace of the gateway's pods (and of the gateway filters unless `filterNamespaces` is `root`). */
        gatewayNamespace: string;
        vhostScope: VirtualHostScope;
        filterNamespaces: FilterNamespaces;
        mutualTls: boolean;
        mutualTlsScope: MutualTlsScope;
    };
    /** Bookinfo's options as given, with the stack's defaults filled in. */
    bookinfo: BookinfoOptions & BookinfoSettings;
    /** `deploy`: the stack deploys bookinfo; `existing`: it only puts its limits on the one that runs. */
    bookinfoMode: BookinfoMode;
    /** The service as the stack config sets it (its Redis timeout is derived by GlobalRateLimit from the gateway's timeout). */
    ratelimit: Omit<RateLimitServiceSettings, "redisTimeout">;
    /** Which Redis the service counts in (builders/redis-connection.ts). */
    redis: ResolvedRedis;
    /** Who may call the rate-limit service and Redis (components/service/access-policies.ts). */
    access: { enabled: boolean; gatewayPrincipal: string };
    /** ManagedApi's options as given, with the stack's defaults filled in. */
    managedApi?: ManagedApiOptions & ManagedApiSettings;
    /** The dashboard and alert rules (components/service/ratelimit-monitoring.ts). */
    monitoring: { dashboard: boolean; dashboardNamespace: string; dashboardLabel: string; alerts: boolean; ruleLabels: Record<string, string> };
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

export const VARIANT_PRESETS: Readonly<Record<StackVariant, VariantPreset>> = {
    A: { domain: "ratelimit", apiLimit: 2, localBucket: 4, routeSplit: true },
    B: { domain: "productpage-ratelimit", localBucket: 10, routeSplit: false },
};
