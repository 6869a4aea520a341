/**
 * MeshRateLimit: the whole specified stack (docs/specification.md) from its typed arguments, one
 * per stack config key: the global limits (GlobalRateLimit with the specification's rules), the
 * local bucket (LocalRateLimit), bookinfo, the managed API and mesh mutual TLS.
 */
import * as pulumi from "@pulumi/pulumi";
import { BOOKINFO_PORT, Bookinfo, BookinfoArgs, BookinfoPlan, bookinfoVirtualHosts, planBookinfo } from "../components/bookinfo";
import { FILTER_NAMES, FilterLayout, LOCAL_STAT_PREFIX } from "../builders/envoy-filters";
import { escapeRe2 } from "../builders/rules";
import { podMatchers } from "../components/ratelimit-monitoring";
import { GlobalRateLimit } from "../components/global-ratelimit";
import { GlobalRateLimitArgs } from "../components/global-ratelimit-args";
import { GlobalRateLimitPlan, planGlobalRateLimit } from "../components/global-ratelimit-plan";
import { redisOptionsOf } from "../components/redis-options";
import { effectiveLimits } from "./limits-table";
import { PlannedOptions, planOrCompute } from "../components/arg-checks";
import { LocalRateLimit, LocalRateLimitArgs } from "../components/local-ratelimit";
import { ManagedApi, ManagedApiArgs } from "../components/managed-api";
import { planProblemsError, settingsFromArgs } from "./mesh-args";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args";
import { MeshMutualTls } from "../components/mesh-mtls";
import { BookinfoMode } from "../components/mesh-enums";
import { Problem } from "../lib/problems";
import { StackSettings } from "./settings-types";
import { globalLimitsFromSettings } from "./spec-limits";

/** One effective limit, as the stack output `limits` shows it. */
export interface LimitRowOutput {
    /** `global` or `local`. */
    scope: string;
    /** What is counted. */
    match: string;
    /** Requests per unit, e.g. `1/minute`. */
    limit: string;
    /** Where it is enforced and how a refusal looks. */
    enforcedBy: string;
}

/**
 * The GlobalRateLimit arguments of the specified stack (pure; exported for testing). `bookinfo`: the
 * plan of the stack's Bookinfo, whose virtual hosts the limits go on (computed when not given).
 */
export function globalArgsFromSettings(
    s: StackSettings,
    bookinfo: Pick<BookinfoPlan, "s" | "selector"> = planBookinfo(bookinfoArgsFromSettings(s)),
): GlobalRateLimitArgs {
    const r = s.ratelimit;
    return {
        ...globalLimitsFromSettings(s),
        domain: s.global.domain,
        gateway: {
            selector: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value },
            namespace: s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace,
            // Istio's names of the virtual hosts of the Gateway and VirtualService Bookinfo creates.
            virtualHosts: bookinfoVirtualHosts(bookinfo),
            ...(s.mesh.vhostScope === "all" ? { allVirtualHosts: true } : {}),
        },
        namespace: r.namespace,
        failureModeDeny: s.global.failureModeDeny,
        preLimit: s.global.preLimit,
        counterStore: s.global.counterStore,
        timeout: s.global.timeout,
        service: {
            name: r.serviceName,
            configName: r.configName,
            grpcPort: r.grpcPort,
            image: r.image,
            replicas: r.replicas,
            logLevel: r.logLevel,
            redisPoolSize: r.redisPoolSize,
            redisPipelineWindow: r.redisPipelineWindow,
            redisPipelineLimit: r.redisPipelineLimit,
            localCacheSizeInBytes: r.localCacheSizeInBytes,
            prometheus: r.prometheus,
            shadowMode: r.shadowMode,
        },
        redis: redisOptionsOf(s.redis, r.redisImage, r.redisMaxMemory),
        // The specification's names in its own layout; per-instance names otherwise (unique on a shared gateway).
        ...(s.global.filterLayout === FilterLayout.Shared ? { filterNamePrefix: FILTER_NAMES.global } : {}),
        filterLayout: s.global.filterLayout,
        ...(s.global.statusOnError !== undefined ? { statusOnError: s.global.statusOnError } : {}),
        monitoring: {
            dashboard: s.monitoring.dashboard,
            dashboardNamespace: s.monitoring.dashboardNamespace,
            dashboardLabel: s.monitoring.dashboardLabel,
            alerts: s.monitoring.alerts,
            ruleLabels: s.monitoring.ruleLabels,
            // The gateway's rate-limit counters are kept per route target cluster: bookinfo's productpage only.
            gatewayClusters: escapeRe2(`outbound|${BOOKINFO_PORT}||productpage.${s.bookinfo.namespace}.svc.cluster.local`),
            localBuckets: [
                { title: s.local.serviceLabel, selector: podMatchers(s.bookinfo.namespace, { app: s.local.serviceLabel }), statPrefix: LOCAL_STAT_PREFIX },
            ],
        },
        awaitRollout: s.awaitRollout,
        // Who may call the service and Redis (components/access-policies.ts).
        ...(s.access.enabled ? { accessPolicy: { gatewayPrincipal: s.access.gatewayPrincipal } } : {}),
    };
}

/** The namespaces the stack runs pods in (bookinfo, the rate-limit service and Redis, the managed API), each once. */
export function stackNamespaces(s: StackSettings): string[] {
    return [...new Set([s.bookinfo.namespace, s.ratelimit.namespace, ...(s.managedApi ? [s.managedApi.namespace] : [])])];
}

/** The LocalRateLimit arguments of the specified stack (pure; exported for testing). */
export function localArgsFromSettings(s: StackSettings): LocalRateLimitArgs {
    return {
        selector: { app: s.local.serviceLabel },
        port: s.local.servicePort,
        bucket: s.local.bucket,
        fillInterval: s.local.fillInterval,
        // single-route: the bucket per route on every route of the inbound virtual host.
        ...(s.local.placement === "single-route" ? { routes: [] } : {}),
        // The workload's own namespace: the filter then reaches only its pods (root: every namespace's).
        namespace: s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.bookinfo.namespace,
        rootNamespace: s.mesh.namespace,
        ...(s.mesh.filterNamespaces === "root" ? { reachAllNamespaces: true } : {}),
        filterName: FILTER_NAMES.local,
        filterLayout: s.global.filterLayout,
    };
}

/** The Bookinfo arguments of the specified stack (pure; exported for testing). */
export function bookinfoArgsFromSettings(s: StackSettings): BookinfoArgs {
    const b = s.bookinfo;
    return {
        namespace: b.namespace,
        version: b.version,
        gatewaySelector: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value },
        gatewayName: b.gatewayName,
        gatewayPort: b.gatewayPort,
        hosts: b.hosts,
        virtualServiceName: b.virtualServiceName,
        routes: b.routes.map((r) => ({ ...(r.name !== undefined ? { name: r.name } : {}), exact: r.exact, prefix: r.prefix })),
        localStatsApp: s.local.serviceLabel,
        awaitRollout: s.awaitRollout,
    };
}

/** The ManagedApi arguments of the specified stack (pure; exported for testing). */
export function managedApiArgsFromSettings(s: StackSettings): ManagedApiArgs {
    const m = s.managedApi!;
    return {
        serviceName: m.serviceName,
        includeIpRanges: m.includeIpRanges,
        namespace: m.namespace,
        ...(m.serviceAccountSecret !== undefined ? { serviceAccountSecret: m.serviceAccountSecret } : {}),
        portMode: m.portMode,
        ingressName: m.ingressName,
        ingressClassName: m.ingressClassName,
        ingressPath: m.ingressPath,
        espImage: m.espImage,
        echoImage: m.echoImage,
        apiProfile: s.apiProfile,
        awaitRollout: s.awaitRollout,
    };
}

/** Only `planMeshRateLimit` makes a MeshRateLimitPlan. */
const PLAN_MAKER = Symbol("planMeshRateLimit");

/**
 * MeshRateLimit's arguments, validated (every problem reported before anything is registered), and
 * what they make: the settings and the plans of the components that are computed before any of them
 * is registered. Made only by `planMeshRateLimit`; the program reads its settings for the preflight
 * and hands it to MeshRateLimit (`opts.plan`), so nothing is validated or computed twice.
 */
export class MeshRateLimitPlan {
    /** The Bookinfo and GlobalRateLimit of the stack: their arguments' plans (the component checks `plan.args`). */
    readonly bookinfo: BookinfoPlan;
    readonly global: GlobalRateLimitPlan;

    constructor(
        maker: typeof PLAN_MAKER,
        /** The arguments, as given (the fields that are not stack config keys included). */
        readonly args: MeshRateLimitArgs,
        /** The validated, fully-defaulted settings. */
        readonly settings: StackSettings,
        plans?: { bookinfo: BookinfoPlan; global: GlobalRateLimitPlan },
    ) {
        if (maker !== PLAN_MAKER) throw new Error("internal: a MeshRateLimitPlan is made by planMeshRateLimit");
        this.bookinfo = plans?.bookinfo ?? planBookinfo(bookinfoArgsFromSettings(settings));
        this.global = plans?.global ?? planGlobalRateLimit(globalArgsFromSettings(settings, this.bookinfo));
    }

    /**
     * The same plan for arguments that differ only in the fields that are not stack config keys
     * (what the program learns from the cluster: `kubeContext`, `createIngressClass`, `keepIngressClassOnDestroy`, `createPeerAuthentication`).
     */
    withOptions(
        options: Pick<
            MeshRateLimitArgs,
            "kubeContext" | "createIngressClass" | "keepIngressClassOnDestroy" | "createPeerAuthentication" | "keepPeerAuthenticationOnDestroy"
        >,
    ): MeshRateLimitPlan {
        return new MeshRateLimitPlan(PLAN_MAKER, { ...this.args, ...options }, this.settings, { bookinfo: this.bookinfo, global: this.global });
    }
}

/** Validates MeshRateLimit's arguments (an `InputError` with argument-phrased fixes) and computes its plan. Pure. */
export function planMeshRateLimit(args: MeshRateLimitArgs, extraProblems: Problem[] = []): MeshRateLimitPlan {
    const plan = new MeshRateLimitPlan(PLAN_MAKER, args, settingsFromArgs(args, extraProblems));
    // The settings are checked; what only the built objects show (their size) is reported here, before any is registered.
    if (plan.global.problems.length) throw planProblemsError(plan.global.problems);
    return plan;
}

export class MeshRateLimit extends pulumi.ComponentResource {
    /** The variant deployed. */
    public readonly variant: string;
    /** gRPC address of the rate-limit service (what the gateway filter calls). */
    public readonly rateLimitService: string;
    /** Paths to try through the gateway. */
    public readonly gatewayPaths: string[];
    /** The effective global and local limits, one row each. */
    public readonly limits: LimitRowOutput[];

    /** `opts.plan`: the `planMeshRateLimit` of these same `args`, when the caller has it already (the program does). */
    constructor(name: string, args: MeshRateLimitArgs, opts?: PlannedOptions<MeshRateLimitPlan>) {
        // Every argument is checked (and every problem reported) before anything is registered.
        const { plan, opts: options } = planOrCompute(`MeshRateLimit ${name}`, args, opts, planMeshRateLimit);
        const s = plan.settings;
        super("mesh-ratelimit:index:MeshRateLimit", name, {}, options);

        const global = new GlobalRateLimit("global-ratelimit", plan.global.args, { parent: this, plan: plan.global });
        // An existing bookinfo (`bookinfo: existing`) gets the limits only: its Gateway and VirtualService
        // are the ones the plan names, so the virtual hosts the filters patch are the same.
        if (s.bookinfoMode === BookinfoMode.Deploy) new Bookinfo("bookinfo", plan.bookinfo.args, { parent: this, plan: plan.bookinfo });
        new LocalRateLimit("local-ratelimit", localArgsFromSettings(s), { parent: this });
        if (s.managedApi)
            new ManagedApi(
                "managed-api",
                {
                    ...managedApiArgsFromSettings(s),
                    createIngressClass: args.createIngressClass ?? true,
                    keepIngressClassOnDestroy: args.keepIngressClassOnDestroy ?? false,
                },
                { parent: this },
            );
        if (s.mesh.mutualTls) {
            new MeshMutualTls(
                "mesh-mtls",
                {
                    apiProfile: s.apiProfile,
                    scope: s.mesh.mutualTlsScope,
                    meshNamespace: s.mesh.namespace,
                    namespaces: stackNamespaces(s),
                    kubeContext: args.kubeContext,
                    createPeerAuthentication: args.createPeerAuthentication ?? true,
                    keepPeerAuthenticationOnDestroy: args.keepPeerAuthenticationOnDestroy ?? false,
                },
                { parent: this },
            );
        }

        const p = s.paths;
        this.variant = s.variant;
        this.gatewayPaths = [p.limited, ...(s.global.apiRoute ? [`${p.apiPrefix}/1`] : []), p.login, p.logout];
        this.limits = effectiveLimits(s);
        this.rateLimitService = global.grpcAddress;
        this.registerOutputs({ variant: this.variant, gatewayPaths: this.gatewayPaths, limits: this.limits, rateLimitService: this.rateLimitService });
    }
}
