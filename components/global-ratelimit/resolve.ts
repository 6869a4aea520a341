/**
 * GlobalRateLimit's arguments resolved once: every check, each problem under its property path, and
 * a read-only value (frozen) with every default filled in, every unit converted and every name
 * derived. The plan (global-ratelimit-plan.ts) builds its objects from this value alone.
 */
import { CompiledLimits, GlobalLimitsPlan, buildGlobalLimits } from "../../builders/rules";
import { SplitLimits, configWindows, holdsPerValueCounters, sideAsCompiled } from "../../builders/counter-stores";
import {
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    RATELIMIT_FILTER,
    RateLimitFilterCall,
    RateLimitHeaders,
    instanceFilterName,
} from "../../builders/envoy-filters";
import { REDIS_TIMEOUT, expirationJitterFor } from "../../builders/failure-bounds";
import { PreLimitPlan, preLimitPlan } from "../../builders/pre-limit";
import { HEADER_TO_METADATA_FILTER, responseCosts } from "../../builders/request-cost";
import { ResolvedRequestCost } from "../../builders/request-cost-args";
import { RoutePatch } from "../../builders/rate-limit-entries";
import { GlobalLimitsInput, PathKeyMode, RateLimitRuleArgs } from "../../builders/rule-args";
import { DeepReadonly, deepFreeze, plainCopy } from "../../lib/frozen";
import { FieldValues, givenProblems, resolvedFields, withDefaults } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";
import { AccessTarget } from "../service/access-policies";
import { checkCostLayout } from "../rules/request-cost-checks";
import { dnsProblem, planned } from "../common/arg-checks";
import { componentFieldProblems } from "../common/arg-checks";
import { GLOBAL_ARG_TYPES } from "./arg-types";
import { CALL_FIELDS, DEFAULT_FILTER_PREFIX, GLOBAL_ARGS_FIELDS, GLOBAL_FIELDS } from "./fields";
import { MeshMode } from "../common/mesh-enums";
import { ResolvedAccessLog, accessLogOf, ruleClaimNames, ruleHeaderNames } from "./gateway-access-log";
import { ResolvedGateway, gatewayTargetOf, routePatchesFor } from "./gateway-target";
import { GlobalRateLimitArgs } from "./args.generated";
import { accessPolicyProblems, headersOf, layoutOf, scopeProblems, serviceOptionsOf } from "./checks";
import { globalMonitoringContext } from "./monitoring";
import { CheckedLimits, planGlobalLimits } from "./limits-plan";
import { PerValueFiguresPlan, oneStoreOf, perValueFiguresOf } from "./per-value-figures";
import { PerValueSide, overLimitCacheOf, perValueCallOf, perValueSideOf, splitOf } from "./per-value-store";
import { PlatformDefaultsInput, platformDefaultsOffHosts, platformNameProblems } from "./platform-defaults";
import { ResolvedMonitoring, resolveMonitoring } from "../service/ratelimit-monitoring";
import { redisConnectionOf, resolvedRedisOf } from "../service/redis-options";
import { serviceDefaults, tuningOf } from "./service-defaults";
import { RateLimitServiceSettings, ServiceSettings } from "../service/settings";
import { RedisConnection } from "../../builders/redis-connection";

/** The prefix of the shared layout's EnvoyFilter names. */
export { DEFAULT_FILTER_PREFIX };

/** How the gateway reaches a rate-limit service: its cluster-local host, `host:port`, and Istio's outbound cluster name. */
export interface ServiceEndpoint {
    readonly host: string;
    readonly grpcAddress: string;
    readonly clusterName: string;
}

/** The per-value side resolved (`counterStore: CounterStore.Split` with both kinds of counters): read-only at every level (frozen). */
export type ResolvedPerValue = DeepReadonly<PerValueResolution>;

/** The fields of `ResolvedPerValue` as `perValueOf` assembles them. */
export interface PerValueResolution extends PerValueSide {
    /** Its limits, their route patches on the gateway's virtual hosts. */
    readonly limits: SplitLimits["perValue"];
    /** How its filter calls its service: its own timeout, failure mode and error status; the fixed filter's domain and headers. */
    readonly call: RateLimitFilterCall;
    readonly endpoint: ServiceEndpoint;
    /** Prefix of its EnvoyFilters' names. */
    readonly prefix: string;
}

/** GlobalRateLimit resolved: read-only at every level (frozen), every default filled in; what the plan's builders read. */
export type ResolvedGlobalRateLimit = DeepReadonly<GlobalRateLimitResolution>;

/** The fields of `ResolvedGlobalRateLimit` as `resolveWithFallbacks` assembles them, before they are frozen. */
export interface GlobalRateLimitResolution {
    /** The rules and how they are keyed, as checked (`rules` defaulted to none). */
    readonly limits: GlobalLimitsInput & { readonly rules: RateLimitRuleArgs[] };
    /** The limits that passed their checks, each resolved once (builders/rule-args.ts `ResolvedLimit`). */
    readonly resolvedLimits: GlobalLimitsPlan;
    /** `pathKey`, defaulted. */
    readonly pathKey: PathKeyMode;
    /** Every limit compiled, with their problems. */
    readonly compiled: CheckedLimits;
    /** The limits the fixed store counts (all of them without a split). */
    readonly fixed: CompiledLimits;
    readonly split?: SplitLimits;
    readonly gateway: ResolvedGateway;
    /** The fixed side's route patches on the gateway's virtual hosts. */
    readonly routePatches: RoutePatch[];
    /** The virtual hosts host-wide patches name (`""`: every virtual host). */
    readonly vhostNames: string[];
    /** The service's namespace and name. */
    readonly namespace: string;
    readonly name: string;
    readonly layout: FilterLayout;
    readonly perInstance: boolean;
    /** Prefix of the EnvoyFilters' names (given, else derived from the layout). */
    readonly prefix: string;
    /** The HTTP filters' names on the gateway: the rate-limit filter, the pre-limit's, the response costs'. */
    readonly filterNames: { readonly global: string; readonly local: string; readonly cost: string };
    readonly call: RateLimitFilterCall;
    /** `rateLimitHeaders`, defaulted (as in `call`). */
    readonly headers: RateLimitHeaders;
    /** The service's shadow mode: it refuses nothing, so no policy header is published. */
    readonly shadowMode: boolean;
    /** The fixed side's service and Redis, every setting filled in (expiry jitter and the one store's sizing included). */
    readonly service: ServiceSettings;
    readonly endpoint: ServiceEndpoint;
    /** The pre-limit's buckets; undefined when it is off (`preLimit: false`, or the service's shadow mode). */
    readonly preLimit?: PreLimitPlan;
    /** What the platform's defaults patches read (`platformDefaults`, `domain`, `filterNamePrefix`). */
    readonly platformDefaults: PlatformDefaultsInput;
    /** The virtual hosts on which this instance turns a platform's defaults off. */
    readonly platformDefaultsOff: string[];
    /** The gateway listeners this instance's rate-limit filter owns (the shared layout only). */
    readonly listenerKeys: string[];
    readonly accessLog?: ResolvedAccessLog;
    /** The response costs of the rules, once each. */
    readonly responseCosts: ResolvedRequestCost[];
    readonly perValue?: PerValueResolution;
    readonly perValueFigures: PerValueFiguresPlan;
    /** The dashboard's and alert rules' input, names and placement, and the switches as given (their size problems name them). */
    readonly monitoring: ResolvedMonitoring;
    readonly monitoringGiven: { readonly dashboard: unknown; readonly alerts: unknown };
    /** The services the access policies admit the gateway to (none without `accessPolicy`). */
    readonly access: AccessTarget[];
    /** The limits, gateway and service passed their checks: the `RateLimit-Policy` header can be computed. */
    readonly policyHeaderReady: boolean;
}

/** Every problem of GlobalRateLimit's arguments, each under its property path, or the resolved value (pure). */
export function resolveGlobalRateLimit(args: GlobalRateLimitArgs): { problems: Problem[]; value?: ResolvedGlobalRateLimit } {
    const { problems, value } = resolveWithFallbacks(args);
    return problems.length ? { problems } : { problems, value };
}

/**
 * The problems and the resolved value even when there are problems: a refused field then holds the
 * fallback its check names. The plan builds from it, so that a refused plan keeps its shape and the
 * size of its objects is checked in the same round.
 */
export function resolveWithFallbacks(args: GlobalRateLimitArgs): { problems: Problem[]; value: ResolvedGlobalRateLimit } {
    // A copy: the value is frozen, the caller's arguments are not.
    const a: Partial<GlobalRateLimitArgs> = plainCopy(args) ?? {};
    const base = checkedArgs(a, args);
    const { problems, compiled, gw, ns, name, perInstance, prefix, call } = base;
    const split = splitOf(a, compiled, base.limits, problems);
    const fixed = split ? sideAsCompiled(split.fixed) : compiled;
    const service = storeSettings(a, base.service, split ? undefined : compiled, expirationJitterFor(configWindows(fixed.configDescriptors)), problems);
    const host = `${name}.${ns}.svc.cluster.local`;
    const endpoint: ServiceEndpoint = { host, grpcAddress: `${host}:${base.grpcPort}`, clusterName: `outbound|${base.grpcPort}||${host}` };
    problems.push(...platformNameProblems(a, prefix));
    const routePatches = routePatchesFor(fixed.routePatches, a.rules ?? [], gw, problems);
    problems.push(...givenProblems(GLOBAL_FIELDS.preLimit, "preLimit", a.preLimit));
    const shadowMode = a.service?.shadowMode === true;
    // In global shadow mode the service refuses nothing, so neither may the pre-limit.
    const preLimit = withDefaults(GLOBAL_FIELDS, a).preLimit === false || shadowMode ? undefined : preLimitPlan(fixed.plannedDescriptors);
    const policyHeaderReady = !problems.length;
    const rest = laterParts(a, { ...base, split, service, preLimit });
    const instanceName = (filter: string) => (perInstance ? instanceFilterName(filter, ns, name) : filter);
    const value: GlobalRateLimitResolution = {
        limits: { rules: a.rules ?? [], perPath: a.perPath, pathKey: a.pathKey, ruleKey: a.ruleKey, clientPrefix: a.clientPrefix },
        resolvedLimits: base.limits,
        pathKey: withDefaults(GLOBAL_FIELDS, a).pathKey,
        compiled,
        fixed,
        ...(split ? { split } : {}),
        gateway: gw,
        routePatches,
        vhostNames: gw.all ? [""] : gw.virtualHosts,
        namespace: ns,
        name,
        layout: base.layout,
        perInstance,
        prefix,
        // Computed once: the rate-limit filter's name is where its per-route config goes.
        filterNames: { global: instanceName(RATELIMIT_FILTER), local: instanceName(LOCAL_RATELIMIT_FILTER), cost: instanceName(HEADER_TO_METADATA_FILTER) },
        call,
        headers: base.headers,
        shadowMode,
        service,
        endpoint,
        ...(preLimit ? { preLimit } : {}),
        platformDefaults: { domain: a.domain, platformDefaults: a.platformDefaults, filterNamePrefix: a.filterNamePrefix },
        platformDefaultsOff: platformDefaultsOffHosts(a, base.layout, gw.virtualHosts),
        // Only the shared layout reads the listener's route rate_limits: per-instance filters never meet.
        listenerKeys: perInstance ? [] : (gw.all ? ["*"] : gw.ports.map(String)).map((port) => `${gw.namespace}|${JSON.stringify(gw.target)}|${port}`),
        responseCosts: responseCosts(base.limits.rules.map((r) => r.cost)),
        ...rest,
        policyHeaderReady,
    };
    return { problems, value: deepFreeze(value) };
}

/** The arguments checked (every problem) and planned: the limits, the gateway, the service's settings, the filter's call. */
function checkedArgs(a: Partial<GlobalRateLimitArgs>, args: GlobalRateLimitArgs) {
    const headers = headersOf(a);
    const planned = planGlobalLimits({
        rules: a.rules,
        perPath: a.perPath,
        pathKey: a.pathKey,
        ruleKey: a.ruleKey,
        clientPrefix: a.clientPrefix,
        headersOn: headers === RateLimitHeaders.Draft03,
    });
    const { plan: limits, problems: limitProblems, checkedRules } = planned;
    const compiled: CheckedLimits = { ...buildGlobalLimits(limits), problems: limitProblems };
    const problems: Problem[] = [...componentFieldProblems(GLOBAL_ARG_TYPES, "GlobalRateLimit", args), ...limitProblems];
    scopeProblems(a, problems);
    const gw = gatewayTargetOf(a.gateway, problems);
    const ns = withDefaults(GLOBAL_FIELDS, a).namespace;
    problems.push(...givenProblems(GLOBAL_FIELDS.namespace, "namespace", ns));
    const given = resolvedFields(CALL_FIELDS, a, problems);
    const { name, configName, grpcPort, replicas, logLevel } = serviceOptionsOf(a.service ?? {}, problems, a.redis?.mode);
    const redis = redisConnectionOf(a.redis ?? {}, problems);
    accessPolicyProblems(a, problems);
    problems.push(...givenProblems(GLOBAL_ARGS_FIELDS.meshMode, "meshMode", a.meshMode ?? undefined));
    const perInstance = layoutOf(a, problems) === FilterLayout.PerInstance;
    // A refused layout builds as the shared one.
    const layout = perInstance ? FilterLayout.PerInstance : FilterLayout.Shared;
    const prefix = a.filterNamePrefix ?? (perInstance ? `${ns}-${name}` : DEFAULT_FILTER_PREFIX);
    // A derived prefix is made of checked names: only a given one can be wrong.
    if (a.filterNamePrefix !== undefined) problems.push(...dnsProblem("filterNamePrefix", prefix, "subdomain"));
    const service = fixedServiceOf(a, { ns, name, configName, grpcPort, replicas, logLevel, redis, call: given });
    const call: RateLimitFilterCall = {
        domain: a.domain ?? "",
        ...given,
        ...(a.statusOnError !== undefined ? { statusOnError: a.statusOnError } : {}),
        rateLimitHeaders: headers,
    };
    return { limits, checkedRules, compiled, problems, gw, ns, name, grpcPort, service, layout, perInstance, prefix, call, headers };
}

/** The fixed side's service and Redis (internal components): the arguments over the components' defaults. */
function fixedServiceOf(
    a: Partial<GlobalRateLimitArgs>,
    o: Pick<RateLimitServiceSettings, "configName" | "grpcPort" | "replicas" | "logLevel"> & {
        ns: string;
        name: string;
        redis: RedisConnection;
        /** The call's declared fields, the service's Redis timeout derived from them. */
        call: FieldValues<typeof CALL_FIELDS>;
    },
): ServiceSettings {
    const svc = a.service ?? {};
    // Every other service setting keeps the stack's documented default.
    const defaults = serviceDefaults();
    return {
        awaitRollout: withDefaults(GLOBAL_ARGS_FIELDS, a).awaitRollout,
        ...(a.meshMode === MeshMode.Ambient ? { ambient: true } : {}),
        redis: resolvedRedisOf(o.redis, defaults.redisName),
        ratelimit: {
            ...defaults,
            namespace: o.ns,
            serviceName: o.name,
            configName: o.configName,
            grpcPort: o.grpcPort,
            replicas: o.replicas,
            logLevel: o.logLevel,
            image: svc.image !== undefined ? planned(svc.image) : defaults.image,
            ...tuningOf(svc),
            redisImage: a.redis?.image !== undefined ? planned(a.redis.image) : defaults.redisImage,
            redisMaxMemory: a.redis?.maxMemory ?? defaults.redisMaxMemory,
            redisName: defaults.redisName,
            redisEvictionPolicy: defaults.redisEvictionPolicy,
            // The dial bound, whatever the gateway's timeout: a lost SYN must not crash the service's start.
            redisTimeout: REDIS_TIMEOUT,
        },
    };
}

type Checked = ReturnType<typeof checkedArgs>;

/** The fixed service's settings with its counters' expiry jitter and, with one store (`oneStore`: its limits), that store's eviction and size. */
function storeSettings(
    a: Partial<GlobalRateLimitArgs>,
    service: ServiceSettings,
    oneStore: CompiledLimits | undefined,
    jitterSeconds: number,
    problems: Problem[],
): ServiceSettings {
    const r = service.ratelimit;
    if (!oneStore) return { ...service, ratelimit: { ...r, expirationJitterSeconds: jitterSeconds } };
    const store = oneStoreOf(a, r.redisMaxMemory, oneStore.configDescriptors, problems);
    // A store with per-value counters: the over-limit cache sized to keep a spent key refused through a flood.
    const cache = holdsPerValueCounters(a)
        ? { localCacheSizeInBytes: overLimitCacheOf(a, store.redisMaxMemory, a.domain ?? "", oneStore.configDescriptors) }
        : {};
    return { ...service, ratelimit: { ...r, expirationJitterSeconds: jitterSeconds, ...store, ...cache } };
}

/** The parts checked after the gateway's: the access log, the per-value side, its figures, the monitoring and the access policies. */
function laterParts(
    a: Partial<GlobalRateLimitArgs>,
    o: Checked & { split: SplitLimits | undefined; service: ServiceSettings; preLimit: PreLimitPlan | undefined },
): Pick<GlobalRateLimitResolution, "accessLog" | "perValue" | "perValueFigures" | "monitoring" | "monitoringGiven" | "access"> {
    const { problems, compiled, gw, split, service, call } = o;
    checkCostLayout(a.rules, o.perInstance, problems);
    const accessLog = accessLogOf(a.accessLog, ruleHeaderNames(a.rules), problems, ruleClaimNames(a.rules));
    const perValue = split ? perValueOf(a, o, split) : undefined;
    const perValueFigures = perValueFiguresOf(a, o.limits, service.ratelimit, perValue, !compiled.problems.length, problems);
    const descriptors = split ? [...split.fixed.plannedDescriptors, ...split.perValue.plannedDescriptors] : compiled.plannedDescriptors;
    const watched = { name: o.name, ns: o.ns, call, descriptors, gw, pre: o.preLimit, service, perValue, rules: o.checkedRules };
    const monitoring = resolveMonitoring(a.monitoring, globalMonitoringContext(watched), problems);
    const accessOf = (s: ServiceSettings): AccessTarget[] =>
        a.accessPolicy ? [{ ...s, gatewayPrincipal: a.accessPolicy.gatewayPrincipal, gatewaySelector: gw.podLabels }] : [];
    return {
        ...(accessLog ? { accessLog } : {}),
        ...(perValue ? { perValue } : {}),
        perValueFigures,
        monitoring,
        monitoringGiven: { dashboard: a.monitoring?.dashboard ?? true, alerts: a.monitoring?.alerts },
        access: [...accessOf(service), ...(perValue ? accessOf(perValue.service) : [])],
    };
}

/** The per-value side: its service and Redis (checked), its own call, its routes on the gateway's virtual hosts, its names. */
function perValueOf(a: Partial<GlobalRateLimitArgs>, o: Checked & { service: ServiceSettings }, split: SplitLimits): PerValueResolution {
    const side = perValueSideOf(a, o.service, { domain: o.call.domain, descriptors: split.perValue.configDescriptors }, o.problems);
    const host = `${side.service.ratelimit.serviceName}.${o.ns}.svc.cluster.local`;
    const grpcPort = o.grpcPort;
    return {
        ...side,
        // Routes resolved to the gateway's virtual hosts as the fixed side's are (their problems are reported there).
        limits: { ...split.perValue, routePatches: routePatchesFor(split.perValue.routePatches, [], o.gw, []) },
        // Its own timeout, failure mode and error status; the domain and headers are the fixed filter's.
        call: { domain: o.call.domain, rateLimitHeaders: o.call.rateLimitHeaders, ...perValueCallOf(a) },
        endpoint: { host, grpcAddress: `${host}:${grpcPort}`, clusterName: `outbound|${grpcPort}||${host}` },
        prefix: `${o.prefix}-per-value`,
    };
}
