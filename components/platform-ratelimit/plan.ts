/**
 * PlatformRateLimit's plan: every object it creates, computed and validated before any resource is
 * registered (pure). The arguments are resolved once (platform-ratelimit-resolve.ts); the objects
 * are then built from the resolved value only: each source's filter (builders/platform-filters.ts)
 * with its pre-limit, the service's config, the names. Nothing here checks or fills a default.
 */
import { DeepReadonly } from "../../lib/frozen";
import { EnvoyFilterSpec } from "../../builders/envoy-filters";
import { PLATFORM_DOMAIN, PLATFORM_OBJECT_PREFIX, PlatformSource, platformFilter, platformPreLimitPatches } from "../../builders/platform-filters";
import { PreLimitPlan, preLimitPlan } from "../../builders/pre-limit";
import { configYaml } from "../../builders/ratelimit-config";
import { CompiledLimits } from "../../builders/rules";
import { Problem } from "../../lib/problems";
import { admissionPolicyObjects } from "../../builders/admission-policy";
import { ROUTE_BOUND_ANNOTATION, TEAM_HOSTS_ANNOTATION } from "../../builders/host-ownership-rule";
import { PlatformRateLimitArgs } from "./args.generated";
import { ResolvedPlatformRateLimit, ResolvedPlatformSource, resolvePlatformRateLimit } from "./resolve";
import { MonitoringPlan } from "../service/ratelimit-monitoring";
import { PerValueFiguresPlan } from "../global-ratelimit/per-value-figures";
import { ServiceSettings } from "../service/settings";

/** One source's compiled limits: its rules' names, descriptors and config entries. */
export interface PlatformSourcePlan {
    source: PlatformSource;
    ruleNames: string[];
    compiled: DeepReadonly<CompiledLimits>;
    /** The pre-limit's buckets (the source's fixed limits) and the limits it leaves to the service; undefined with `preLimit: false` or in shadow mode. */
    preLimit?: PreLimitPlan;
}

/** One EnvoyFilter of the plan. */
export interface PlatformFilterPlan {
    name: string;
    namespace: string;
    spec: EnvoyFilterSpec;
    annotations?: Record<string, string>;
}

/** Everything the component creates, computed and validated before any resource is registered. */
export interface PlatformRateLimitPlan {
    args: PlatformRateLimitArgs;
    problems: Problem[];
    service: DeepReadonly<ServiceSettings>;
    configYaml: string;
    grpcAddress: string;
    /** The sources with at least one limit, overrides first. */
    sources: PlatformSourcePlan[];
    filters: PlatformFilterPlan[];
    /** Labels of the gateway's pods (the Gateways that select them are the ones checked for servers no HTTP filter covers). */
    gatewayPodLabels: Record<string, string>;
    /** Claim key of the gateway (two PlatformRateLimits of one program on one gateway are refused). */
    gatewayKey: string;
    monitoring: DeepReadonly<MonitoringPlan>;
    /** What each per-value rule gets from the platform's store (printed by the preview). */
    perValueFigures: DeepReadonly<PerValueFiguresPlan>;
    /** The admission policy and its binding; absent with `admission.install: false`. */
    admission?: { policy: Record<string, any>; binding: Record<string, any> };
}

/** What the plan builds from a resolved value (everything but the arguments and their problems). */
export type PlatformBuild = Omit<PlatformRateLimitPlan, "args" | "problems">;

/** Resolves the arguments and, when they hold no problem, builds every object from the resolved value (pure; exported for the tests and the renderer). */
export function planPlatformRateLimit(args: PlatformRateLimitArgs): PlatformRateLimitPlan {
    const { problems, value } = resolvePlatformRateLimit(args);
    return value ? { args, problems, ...buildPlatformRateLimit(value) } : refusedPlan(args, problems);
}

/** Every object of a resolved PlatformRateLimit (pure: reads the value, changes nothing). */
export function buildPlatformRateLimit(v: ResolvedPlatformRateLimit): PlatformBuild {
    const sources = v.sources.map(sourcePlanOf);
    return {
        service: v.service,
        configYaml: configYaml(
            PLATFORM_DOMAIN,
            v.sources.flatMap((s) => s.compiled.configDescriptors),
        ),
        grpcAddress: v.reach.grpcAddress,
        sources,
        filters: v.sources.map((s, i) => platformEnvoyFilter(v, s, sources[i]!.preLimit)),
        gatewayPodLabels: v.gateway.podLabels,
        gatewayKey: v.gateway.key,
        monitoring: v.monitoring,
        perValueFigures: v.perValueFigures,
        ...(v.admission ? { admission: admissionOf(v) } : {}),
    };
}

/** A source's plan: its compiled limits, and its pre-limit's buckets when it has one. */
function sourcePlanOf(s: ResolvedPlatformSource): PlatformSourcePlan {
    return {
        source: s.source,
        ruleNames: [...s.ruleNames],
        compiled: s.compiled,
        ...(s.preLimit ? { preLimit: preLimitPlan(s.compiled.plannedDescriptors) } : {}),
    };
}

/** A source's EnvoyFilter: its HTTP filter, then its pre-limit (inserted directly before the filter), in the gateway's namespace. */
function platformEnvoyFilter(v: ResolvedPlatformRateLimit, s: ResolvedPlatformSource, preLimit: PreLimitPlan | undefined): PlatformFilterPlan {
    const ports = [...s.ports];
    const filter = platformFilter(s.source, {
        target: v.gateway.target,
        ports,
        ...s.call,
        clusterName: v.reach.clusterName,
        authority: v.reach.authority,
        rateLimits: s.compiled.vhostRateLimits,
        headersOn: v.headersOn,
        ...(s.policy !== undefined ? { policy: s.policy } : {}),
    });
    const pre = preLimit?.buckets.length ? platformPreLimitPatches(s.source, ports, preLimit.buckets, s.compiled.vhostRateLimits, v.headersOn) : [];
    const annotations = s.source === PlatformSource.Defaults ? ownershipAnnotations(v) : undefined;
    return {
        name: `${PLATFORM_OBJECT_PREFIX}-${s.source}`,
        namespace: v.gateway.namespace,
        ...(annotations ? { annotations } : {}),
        spec: { ...filter, configPatches: [...filter.configPatches, ...pre] },
    };
}

/** What the defaults filter tells every preview of the ownership rule: the assignments and the route-bound opt-in; undefined when neither is given. */
function ownershipAnnotations(v: ResolvedPlatformRateLimit): Record<string, string> | undefined {
    const out: Record<string, string> = {
        ...(v.teamHosts ? { [TEAM_HOSTS_ANNOTATION]: JSON.stringify(v.teamHosts) } : {}),
        ...(v.routeBound ? { [ROUTE_BOUND_ANNOTATION]: "true" } : {}),
    };
    return Object.keys(out).length ? out : undefined;
}

/** The admission policy and its binding (builders/admission-policy.ts), from the same assignments; undefined when the component does not install it. */
function admissionOf(v: ResolvedPlatformRateLimit): PlatformBuild["admission"] {
    if (!v.admission) return undefined;
    return admissionPolicyObjects({ ...v.admission, teamHosts: v.teamHosts ?? {}, routeBound: v.routeBound });
}

/**
 * The plan of refused arguments: their problems, no source and no filter. It has no service,
 * monitoring or figures (nothing was resolved): reading them is a programming error, said as one.
 */
function refusedPlan(args: PlatformRateLimitArgs, problems: Problem[]): PlatformRateLimitPlan {
    const none = (what: string): never => {
        throw new Error(`internal: the plan of refused PlatformRateLimit arguments has no ${what} (${problems.length} problem(s))`);
    };
    return {
        args,
        problems,
        configYaml: "",
        grpcAddress: "",
        sources: [],
        filters: [],
        gatewayPodLabels: {},
        gatewayKey: "",
        get service(): DeepReadonly<ServiceSettings> {
            return none("service");
        },
        get monitoring(): DeepReadonly<MonitoringPlan> {
            return none("monitoring");
        },
        get perValueFigures(): DeepReadonly<PerValueFiguresPlan> {
            return none("per-value figures");
        },
    };
}
