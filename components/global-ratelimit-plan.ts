/**
 * GlobalRateLimit's plan: every object it creates, computed from the arguments and validated before
 * any resource is registered (pure; the program's preflight, the renderer and the tests read it).
 */
import { SplitLimits, configWindows, sideAsCompiled } from "../builders/counter-stores";
import {
    EnvoyFilterSpec,
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    PER_INSTANCE_STAGE,
    RATELIMIT_FILTER,
    RateLimitFilterCall,
    RateLimitHeaders,
    instanceFilterName,
    policyHeaderFilter,
    ratelimitHttpFilter,
    routeDescriptors,
    routePerFilterRateLimits,
    routeRateLimitsFilter,
    vhostPerFilterRateLimits,
    vhostRateLimitsFilter,
} from "../builders/envoy-filters";
import { expirationJitterFor, redisTimeoutFor } from "../builders/failure-bounds";
import { perValueFilters } from "../builders/per-value-filters";
import { PreLimitPlan, preLimitConfig, preLimitPatches, preLimitPlan } from "../builders/pre-limit";
import { configYaml } from "../builders/ratelimit-config";
import { HEADER_TO_METADATA_FILTER, responseCostPatches, responseCosts } from "../builders/request-cost";
import { checkCostLayout } from "./request-cost-checks";
import { RedisConnection } from "../builders/redis-connection";
import { Problem } from "../lib/problems";
import { accessLogPlan, ruleHeaderNames } from "./gateway-access-log";
import { booleanProblems, dnsNameProblems } from "../lib/field-checks";
import { AccessTarget, accessManifests } from "./access-policies";
import { tokenChecks } from "../builders/identity";
import { dnsProblem, planned, unknownFieldProblems } from "./arg-checks";
import { DEFAULTS } from "./defaults";
import { gatewayTargetOf, routePatchesFor } from "./gateway-target";
import { PerValuePlan, perValueCallOf, perValuePlanOf, splitOf } from "./per-value-store";
import { PerValueFiguresPlan, oneStoreOf, perValueFiguresOf } from "./per-value-figures";
import { platformDefaultsOffHosts, platformDefaultsPatches, platformNameProblems } from "./platform-defaults";
import { serviceDefaults, tuningOf } from "./service-defaults";

import { PathKeyMode } from "../builders/rule-args";
import { CompiledLimits, buildGlobalLimits } from "../builders/rules";
import { RoutePatch } from "../builders/rate-limit-entries";
import { CheckedLimits, planGlobalLimits, resolveCheckedLimits } from "./limits-plan";
import { policyHeaderOption, policyHeaderValue, policyItems } from "../builders/policy-header";
import { GlobalRateLimitArgs } from "./global-ratelimit-args";
import {
    accessPolicyProblems,
    countLimits,
    failureProblems,
    headersOf,
    layoutOf,
    scopeProblems,
    serviceOptionsOf,
    sizeProblems,
} from "./global-ratelimit-checks";
import { MonitoringPlan, monitoringPlanOf } from "./ratelimit-monitoring";
import { globalMonitoringContext } from "./global-ratelimit-monitoring";
import { redisConnectionOf } from "./redis-options";
import { ServiceLogLevel, ServiceSettings } from "./service-settings";

export const DEFAULT_FILTER_PREFIX = "filter-ratelimit";

/** Everything the component creates, computed and validated before any resource is registered. */
export interface GlobalRateLimitPlan {
    /** The arguments planned (the very object given). */
    args: GlobalRateLimitArgs;
    problems: Problem[];
    compiled: CheckedLimits;
    /** Settings of the service and Redis (internal components), defaults filled in. */
    service: ServiceSettings;
    configYaml: string;
    filters: { name: string; namespace: string; spec: EnvoyFilterSpec }[];
    /** The AuthorizationPolicies and NetworkPolicies of `accessPolicy` (none without it). */
    policies: any[];
    grpcAddress: string;
    /** The gateway listeners the rate-limit filter goes on (`<namespace>|<pods>|<port or *>`): two instances must not share one, or each would send every descriptor of the listener to its own service. */
    listenerKeys: string[];
    /** The pre-limit's buckets and the limits it leaves to the service; undefined with `preLimit: false`. */
    preLimit?: PreLimitPlan;
    /** The virtual hosts on which this instance turns a platform's defaults off (its namespace must own them). */
    platformDefaultsOff: string[];
    /** The HTTP filters' names on the gateway (the pre-limit's only when it has buckets). */
    httpFilterNames: { global: string; local?: string };
    /** The dashboard and alert rules (builders/monitoring.ts), from the same compiled limits. */
    monitoring: MonitoringPlan;
    /** The per-value side (its own service and Redis) with `CounterStore.Split` and both kinds of counters; undefined otherwise. */
    perValue?: PerValuePlan;
    /** What each per-value rule gets from its store (printed by the preview and `npm start`). */
    perValueFigures: PerValueFiguresPlan;
}

/** Validates the arguments and computes every object (pure; exported for the tests and the renderer). */
export function planGlobalRateLimit(args: GlobalRateLimitArgs): GlobalRateLimitPlan {
    const a: Partial<GlobalRateLimitArgs> = args ?? {};
    const { compiled, problems, gw, ns, name, grpcPort, service, perInstance, prefix, call } = checkedArgs(args);
    const split = splitOf(a, compiled, problems);
    const fixed = split ? sideAsCompiled(split.fixed) : compiled;
    service.ratelimit.expirationJitterSeconds = expirationJitterFor(configWindows(fixed.configDescriptors));
    if (!split) oneStoreOf(a, service.ratelimit, compiled.configDescriptors, problems);
    const host = `${name}.${ns}.svc.cluster.local`;
    // Computed once: the rate-limit filter's name is where its per-route config goes.
    const globalName = perInstance ? instanceFilterName(RATELIMIT_FILTER, ns, name) : RATELIMIT_FILTER;
    const localName = perInstance ? instanceFilterName(LOCAL_RATELIMIT_FILTER, ns, name) : LOCAL_RATELIMIT_FILTER;
    const placement = { prefix, perInstance, globalName, localName, call, clusterName: `outbound|${grpcPort}||${host}`, authority: host };
    problems.push(...platformNameProblems(a, prefix));
    const { filters, pre } = gatewayFilters(a, fixed, gw, problems, placement);
    checkCostLayout(a.rules, perInstance, problems);
    const accessLog = accessLogPlan(a.accessLog, ruleHeaderNames(a.rules), gw, problems);
    if (accessLog) filters.push({ name: `${prefix}-access-log`, namespace: gw.namespace, spec: accessLog });
    // In the HTTP filter's EnvoyFilter: the copy of each response cost header into dynamic metadata.
    const costFilter = perInstance ? instanceFilterName(HEADER_TO_METADATA_FILTER, ns, name) : HEADER_TO_METADATA_FILTER;
    filters[0]!.spec.configPatches.push(...responseCostPatches(responseCosts((a.rules ?? []).map((r) => r?.cost)), gw.ports, costFilter));
    const perValue = split ? perValuePlanOf(a, service, { domain: call.domain, descriptors: split.perValue.configDescriptors }, problems) : undefined;
    if (split && perValue) filters.push(...perValueSide(a, split.perValue, perValue, { gw, ns, grpcPort, perInstance, prefix, call }));
    const figures = perValueFiguresOf(a, service.ratelimit, perValue, !compiled.problems.length, problems);
    const descriptors = split ? [...split.fixed.configDescriptors, ...split.perValue.configDescriptors] : compiled.configDescriptors;
    const monitoring = monitoringPlanOf(a.monitoring, globalMonitoringContext(a, { name, ns, call, descriptors, gw, pre, service, perValue }), problems);
    const config = configYaml(call.domain, fixed.configDescriptors);
    const limits = countLimits(compiled.configDescriptors);
    problems.push(...sizeProblems(a, { config, perValue, filters, monitoring, configName: service.ratelimit.configName, limits }));
    const accessOf = (s: ServiceSettings): AccessTarget[] =>
        a.accessPolicy ? [{ ...s, gatewayPrincipal: a.accessPolicy.gatewayPrincipal, gatewaySelector: gw.podLabels }] : [];
    const access = [...accessOf(service), ...(perValue ? accessOf(perValue.service) : [])];
    return {
        args,
        problems,
        compiled,
        service,
        policies: problems.length ? [] : [...access.flatMap(accessManifests), ...tokenChecks(prefix, gw, a.rules)],
        configYaml: config,
        filters,
        grpcAddress: `${host}:${grpcPort}`,
        preLimit: pre,
        monitoring,
        // Only the shared layout reads the listener's route rate_limits: per-instance filters never meet.
        listenerKeys: perInstance ? [] : (gw.all ? ["*"] : gw.ports.map(String)).map((port) => `${gw.namespace}|${JSON.stringify(gw.target)}|${port}`),
        httpFilterNames: { global: globalName, ...(pre?.buckets.length ? { local: localName } : {}) },
        platformDefaultsOff: platformDefaultsOffHosts(a, layoutName(perInstance), gw.virtualHosts),
        ...(perValue ? { perValue } : {}),
        perValueFigures: figures,
    };
}

/** The arguments checked (every problem) and planned: the limits, the gateway, the service's settings, the filter's call. */
function checkedArgs(args: GlobalRateLimitArgs) {
    const a: Partial<GlobalRateLimitArgs> = args ?? {};
    const headers = headersOf(a);
    const { plan: limits, problems: limitProblems } = planGlobalLimits({
        rules: a.rules,
        perPath: a.perPath,
        pathKey: a.pathKey,
        ruleKey: a.ruleKey,
        clientPrefix: a.clientPrefix,
        headersOn: headers === RateLimitHeaders.Draft03,
    });
    const compiled: CheckedLimits = { ...buildGlobalLimits(limits), problems: limitProblems };
    const problems: Problem[] = [...unknownFieldProblems("GlobalRateLimit", args), ...limitProblems];
    scopeProblems(a, problems);
    const gw = gatewayTargetOf(a.gateway, problems);
    const ns = a.namespace ?? DEFAULTS.ratelimitNamespace;
    problems.push(...dnsNameProblems("namespace", ns, "label"));
    const { timeout, secs } = failureProblems(a, problems);
    const { name, configName, grpcPort, replicas, logLevel } = serviceOptionsOf(a.service ?? {}, problems, a.redis?.mode);
    const redis = redisConnectionOf(a.redis ?? {}, problems);
    accessPolicyProblems(a, problems);
    const perInstance = layoutOf(a, problems) === FilterLayout.PerInstance;
    const prefix = a.filterNamePrefix ?? (perInstance ? `${ns}-${name}` : DEFAULT_FILTER_PREFIX);
    // A derived prefix is made of checked names: only a given one can be wrong.
    if (a.filterNamePrefix !== undefined) problems.push(...dnsProblem("filterNamePrefix", prefix, "subdomain"));
    const service = serviceSettingsOf(a, { ns, name, configName, grpcPort, replicas, logLevel, redis, secs });
    const call: RateLimitFilterCall = {
        domain: a.domain ?? "",
        failureModeDeny: (a.failureModeDeny ?? DEFAULTS.failureModeDeny) !== false,
        timeout,
        ...(a.statusOnError !== undefined ? { statusOnError: a.statusOnError } : {}),
        rateLimitHeaders: headers,
    };
    return { compiled, problems, gw, ns, name, grpcPort, service, perInstance, prefix, call };
}

/** The per-value side's filters (with `CounterStore.Split` and both kinds of counters); its config and address set on `perValue`. */
function perValueSide(
    a: Partial<GlobalRateLimitArgs>,
    side: SplitLimits["perValue"],
    perValue: PerValuePlan,
    o: { gw: ReturnType<typeof gatewayTargetOf>; ns: string; grpcPort: number; perInstance: boolean; prefix: string; call: RateLimitFilterCall },
): GlobalRateLimitPlan["filters"] {
    const { gw, call } = o;
    const pvHost = `${perValue.service.ratelimit.serviceName}.${o.ns}.svc.cluster.local`;
    perValue.configYaml = configYaml(call.domain, side.configDescriptors);
    perValue.grpcAddress = `${pvHost}:${o.grpcPort}`;
    // Routes resolved to the gateway's virtual hosts as the fixed side's are (their problems are reported there).
    return perValueFilters(
        { ...side, routePatches: routePatchesFor(side.routePatches, [], gw, []) },
        {
            target: gw.target,
            ports: gw.ports,
            virtualHosts: gw.all ? [""] : gw.virtualHosts,
            perInstance: o.perInstance,
            filterName: perValue.httpFilterName,
            // Its own timeout, failure mode and error status; the domain and headers are the fixed filter's.
            domain: call.domain,
            rateLimitHeaders: call.rateLimitHeaders,
            ...perValueCallOf(a),
            clusterName: `outbound|${o.grpcPort}||${pvHost}`,
            authority: pvHost,
            prefix: `${o.prefix}-per-value`,
            namespace: gw.namespace,
        },
    );
}

/** The settings of the service and Redis (internal components): the arguments over the components' defaults. */
function serviceSettingsOf(
    a: Partial<GlobalRateLimitArgs>,
    o: {
        ns: string;
        name: string;
        configName: string;
        grpcPort: number;
        replicas: number;
        logLevel: ServiceLogLevel;
        redis: RedisConnection;
        secs: number;
    },
): ServiceSettings {
    const { ns, name, configName, grpcPort, replicas, logLevel, redis, secs } = o;
    const svc = a.service ?? {};
    // Every other service setting keeps the stack's documented default.
    const base = serviceDefaults();
    return {
        awaitRollout: a.awaitRollout ?? DEFAULTS.awaitRollout,
        redis,
        ratelimit: {
            ...base,
            namespace: ns,
            serviceName: name,
            configName,
            grpcPort,
            replicas,
            logLevel,
            image: svc.image !== undefined ? planned(svc.image) : base.image,
            ...tuningOf(svc),
            redisImage: a.redis?.image !== undefined ? planned(a.redis.image) : base.redisImage,
            redisMaxMemory: a.redis?.maxMemory ?? base.redisMaxMemory,
            redisName: base.redisName,
            redisEvictionPolicy: base.redisEvictionPolicy,
            // The service gives up on a hung Redis while the gateway still waits for its answer.
            redisTimeout: redisTimeoutFor(secs),
        },
    };
}

/** Where and how the gateway's filters go (computed once by the plan). */
interface FilterPlacement {
    prefix: string;
    perInstance: boolean;
    globalName: string;
    localName: string;
    call: RateLimitFilterCall;
    clusterName: string;
    authority: string;
}

/** The gateway's EnvoyFilters: the rate-limit filter (with the pre-limit's patches), the virtual-host and the route actions. */
function gatewayFilters(
    a: Partial<GlobalRateLimitArgs>,
    compiled: CompiledLimits,
    gw: ReturnType<typeof gatewayTargetOf>,
    problems: Problem[],
    f: FilterPlacement,
): { filters: GlobalRateLimitPlan["filters"]; pre: PreLimitPlan | undefined } {
    const { prefix, perInstance, globalName, localName } = f;
    const domain = f.call.domain;
    const svc = a.service ?? {};
    const mode = a.pathKey ?? PathKeyMode.UrlPath;
    const routePatches = routePatchesFor(compiled.routePatches, a.rules ?? [], gw, problems);
    const vhostNames = gw.all ? [""] : gw.virtualHosts;
    const filters = serviceFilters(compiled, gw, f, vhostNames);
    if (a.preLimit !== undefined) problems.push(...booleanProblems("preLimit", a.preLimit, DEFAULTS.preLimit));
    // In global shadow mode the service refuses nothing, so neither may the pre-limit.
    const pre = (a.preLimit ?? DEFAULTS.preLimit) === false || svc.shadowMode === true ? undefined : preLimitPlan(compiled.configDescriptors);
    if (pre?.buckets.length) {
        // In the global filter's EnvoyFilter, after its insertion: the local filter lands directly before it.
        const vhMode = mode === PathKeyMode.Literal ? "OVERRIDE" : "INCLUDE";
        const placement = perInstance
            ? {
                  ports: gw.ports,
                  virtualHosts: vhostNames,
                  localFilterName: localName,
                  globalFilterName: globalName,
                  routes: routePatches.map((p) => ({
                      virtualHost: p.virtualHost,
                      route: p.route,
                      config: preLimitConfig(pre.buckets, vhMode, routeDescriptors(p, compiled.vhostRateLimits, mode)),
                  })),
              }
            : { ports: gw.ports, virtualHosts: vhostNames };
        const vhostConfig = preLimitConfig(pre.buckets, vhMode, perInstance ? compiled.vhostRateLimits : undefined);
        filters[0]!.spec.configPatches.push(...preLimitPatches(placement, vhostConfig));
    }
    const routes = perInstance
        ? routePerFilterRateLimits(gw.target, globalName, domain, routePatches, compiled.vhostRateLimits, mode)
        : routeRateLimitsFilter(gw.target, routePatches, mode);
    if (routes) filters.push({ name: `${prefix}-svc-api`, namespace: gw.namespace, spec: routes });
    // In the HTTP filter's EnvoyFilter: a platform's defaults off on this instance's listed hosts (components/platform-defaults.ts).
    filters[0]!.spec.configPatches.push(...platformDefaultsPatches(a, layoutName(perInstance), gw.virtualHosts));
    // In the HTTP filter's EnvoyFilter, as the pre-limit: what this instance adds to the gateway's responses.
    // Only from limits that all passed their checks (a refused plan creates nothing anyway).
    const policy = problems.length ? undefined : policyFilter(a, compiled, gw, routePatches);
    if (policy) filters[0]!.spec.configPatches.push(...policy.configPatches);
    return { filters, pre };
}

/** The rate-limit filter's EnvoyFilter and, with virtual-host actions, the one that puts them on the hosts. */
function serviceFilters(
    compiled: CompiledLimits,
    gw: ReturnType<typeof gatewayTargetOf>,
    f: FilterPlacement,
    vhostNames: string[],
): GlobalRateLimitPlan["filters"] {
    const { prefix, perInstance, globalName } = f;
    const filters: GlobalRateLimitPlan["filters"] = [
        {
            name: prefix,
            namespace: gw.namespace,
            spec: ratelimitHttpFilter({
                target: gw.target,
                ports: gw.ports,
                ...f.call,
                clusterName: f.clusterName,
                authority: f.authority,
                ...(perInstance ? { filterName: globalName, stage: PER_INSTANCE_STAGE } : {}),
            }),
        },
    ];
    if (compiled.vhostRateLimits.length) {
        filters.push({
            name: `${prefix}-svc`,
            namespace: gw.namespace,
            spec: perInstance
                ? vhostPerFilterRateLimits(gw.target, globalName, f.call.domain, vhostNames, compiled.vhostRateLimits)
                : vhostRateLimitsFilter(gw.target, vhostNames, compiled.vhostRateLimits),
        });
    }
    return filters;
}

/** `RateLimit-Policy` on the virtual hosts (their per-path limits and rules) and on each route with rules of its own. */
function policyFilter(
    a: Partial<GlobalRateLimitArgs>,
    compiled: CompiledLimits,
    gw: ReturnType<typeof gatewayTargetOf>,
    routePatches: RoutePatch[],
): EnvoyFilterSpec | undefined {
    // The service's shadow mode refuses nothing: no policy to publish.
    if (a.service?.shadowMode === true) return undefined;
    const input = resolveCheckedLimits(a);
    const headers = headersOf(a);
    // With the literal path key a route's own rules replace the host's, so a host-wide header would
    // list limits those routes do not apply: then only the routes publish theirs.
    const literalRoutes = a.pathKey === PathKeyMode.Literal && routePatches.length > 0;
    const vhostValue = literalRoutes ? undefined : policyHeaderValue(policyItems(input, headers));
    const vhosts = vhostValue === undefined ? [] : (gw.all ? [""] : gw.virtualHosts).map((name) => ({ name, header: policyHeaderOption(vhostValue) }));
    const everyHost = new Set(routePatches.filter((p) => p.virtualHost === "").map((p) => p.route));
    const seen = new Set<string>();
    const routes = routePatches.flatMap((p) => {
        if (seen.has(`${p.virtualHost}|${p.route}`)) return [];
        seen.add(`${p.virtualHost}|${p.route}`);
        const at = { name: p.route, virtualHost: p.virtualHost, namedOnly: p.virtualHost !== "" && everyHost.has(p.route) };
        const value = policyHeaderValue(policyItems(input, headers, at));
        return value === undefined ? [] : [{ virtualHost: p.virtualHost, route: p.route, header: policyHeaderOption(value) }];
    });
    return policyHeaderFilter(gw.target, vhosts, routes);
}

const layoutName = (perInstance: boolean) => (perInstance ? FilterLayout.PerInstance : FilterLayout.Shared);
