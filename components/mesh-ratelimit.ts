/**
 * The whole stack: wires the parts in dependency order.
 */
import * as pulumi from "@pulumi/pulumi";
import { AccessPolicies } from "./access-policies";
import { Bookinfo } from "./bookinfo";
import { LimitRow, effectiveLimits } from "./limits-table";
import { ManagedApi } from "./managed-api";
import { MeshMutualTls } from "./mesh-mtls";
import { SharedObjectsPlan } from "./preflight";
import { GlobalRateLimitFilters, LocalRateLimitFilter } from "./rate-limit-filters";
import { RateLimitService } from "./ratelimit-service";
import { Redis } from "./redis";
import { deploysRedis } from "./redis-connection";
import { StackSettings } from "./settings";

export interface MeshRateLimitArgs {
    /** Validated settings (see `resolveSettings`). */
    settings: StackSettings;
    /** kubectl context used by the seed profile's mesh ConfigMap edit. Defaults to the current context. */
    kubeContext?: string;
    /**
     * What the preflight decided for the fixed-name objects outside the stack's namespaces
     * (preflight.ts). Absent: the stack creates all of them.
     */
    shared?: Pick<SharedObjectsPlan, "ingressClass" | "peerAuthentication">;
}

export class MeshRateLimit extends pulumi.ComponentResource {
    /** Absent when `redisMode` names an existing Redis. */
    public readonly redis?: Redis;
    public readonly rateLimitService: RateLimitService;
    public readonly globalFilters: GlobalRateLimitFilters;
    public readonly localFilter: LocalRateLimitFilter;
    public readonly bookinfo: Bookinfo;
    public readonly managedApi?: ManagedApi;
    public readonly mutualTls?: MeshMutualTls;
    /** Paths to try through the gateway. */
    public readonly gatewayPaths: string[];
    public readonly limits: LimitRow[];

    constructor(name: string, args: MeshRateLimitArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:MeshRateLimit", name, {}, opts);
        const s = args.settings;

        if (deploysRedis(s.redis)) this.redis = new Redis("redis", { settings: s }, { parent: this });
        // The service crash-loops while Redis is unreachable, so Redis comes first.
        this.rateLimitService = new RateLimitService("ratelimit", { settings: s, redisAddress: this.redis?.address ?? "" }, { parent: this, dependsOn: this.redis ? [this.redis] : [] });
        // With failure_mode_deny the gateway refuses everything until the service answers: filters last.
        this.globalFilters = new GlobalRateLimitFilters("global-filters", { settings: s }, { parent: this, dependsOn: [this.rateLimitService] });
        // ServiceAccounts of the service and Redis, and who may call them (before the pods that use them).
        new AccessPolicies("access-policies", { settings: s }, { parent: this });
        this.bookinfo = new Bookinfo("bookinfo", { settings: s }, { parent: this });
        this.localFilter = new LocalRateLimitFilter("local-filter", { settings: s }, { parent: this });
        if (s.managedApi) this.managedApi = new ManagedApi("managed-api", { settings: s, createIngressClass: args.shared?.ingressClass ?? true }, { parent: this });
        if (s.mesh.mutualTls) {
            this.mutualTls = new MeshMutualTls("mesh-mtls", { settings: s, kubeContext: args.kubeContext, createPeerAuthentication: args.shared?.peerAuthentication ?? true }, { parent: this });
        }

        const p = s.paths;
        this.gatewayPaths = [p.limited, ...(s.global.apiRoute ? [`${p.apiPrefix}/1`] : []), p.login, p.logout];
        this.limits = effectiveLimits(s);
        this.registerOutputs({ gatewayPaths: this.gatewayPaths, limits: this.limits, rateLimitService: this.rateLimitService.grpcAddress });
    }
}
