/**
 * GlobalRateLimit's plan: every object it creates, computed from the arguments and validated before
 * any resource is registered (pure; the program's preflight, the renderer and the tests read it).
 * The arguments are resolved once (global-ratelimit-resolve.ts); every object here is built from the
 * resolved value alone, and the built objects' sizes are checked last (global-ratelimit-size.ts).
 */
import { accessLogFilter } from "../../builders/access-log";
import {
    EnvoyFilterPatch,
    EnvoyFilterSpec,
    PER_INSTANCE_STAGE,
    policyHeaderFilter,
    ratelimitHttpFilter,
    routeDescriptors,
    routePerFilterRateLimits,
    routeRateLimitsFilter,
    vhostPerFilterRateLimits,
    vhostRateLimitsFilter,
} from "../../builders/envoy-filters";
import { tokenChecks } from "../../builders/identity";
import { perValueFilters } from "../../builders/per-value-filters";
import { PreLimitPlan, preLimitConfig, preLimitPatches } from "../../builders/pre-limit";
import { policyHeaderOption, policyHeaderValue, policyItems } from "../../builders/policy-header";
import { configYaml } from "../../builders/ratelimit-config";
import { responseCostPatches } from "../../builders/request-cost";
import { PathKeyMode } from "../../builders/rule-args";
import { DeepReadonly } from "../../lib/frozen";
import { PolicyObject } from "../../lib/k8s-object";
import { Problem } from "../../lib/problems";
import { accessManifests } from "../service/access-policies";
import { GlobalRateLimitArgs } from "./args.generated";
import { ResolvedGlobalRateLimit, ResolvedPerValue, resolveWithFallbacks } from "./resolve";
import { builtSizeProblems } from "./size";
import { CheckedLimits } from "./limits-plan";
import { PerValueFiguresPlan } from "./per-value-figures";
import { PerValuePlan } from "./per-value-store";
import { platformDefaultsPatches } from "./platform-defaults";
import { MonitoringPlan, buildMonitoring } from "../service/ratelimit-monitoring";
import { ServiceSettings } from "../service/settings";

/** One EnvoyFilter of the plan: its name, namespace and spec. */
export interface PlannedFilter {
    name: string;
    namespace: string;
    spec: EnvoyFilterSpec;
}

/** Everything the component creates, computed and validated before any resource is registered. */
export interface GlobalRateLimitPlan {
    /** The arguments planned (the very object given). */
    args: GlobalRateLimitArgs;
    problems: Problem[];
    compiled: DeepReadonly<CheckedLimits>;
    /** Settings of the service and Redis (internal components), defaults filled in. */
    service: DeepReadonly<ServiceSettings>;
    configYaml: string;
    filters: PlannedFilter[];
    /** The AuthorizationPolicies and NetworkPolicies of `accessPolicy` and the token check of rules with `identity` (none in a refused plan). */
    policies: PolicyObject[];
    grpcAddress: string;
    /** The gateway listeners the rate-limit filter goes on (`<namespace>|<pods>|<port or *>`): two instances must not share one, or each would send every descriptor of the listener to its own service. */
    listenerKeys: readonly string[];
    /** The pre-limit's buckets and the limits it leaves to the service; undefined with `preLimit: false`. */
    preLimit?: DeepReadonly<PreLimitPlan>;
    /** The virtual hosts on which this instance turns a platform's defaults off (its namespace must own them). */
    platformDefaultsOff: readonly string[];
    /** The HTTP filters' names on the gateway (the pre-limit's only when it has buckets). */
    httpFilterNames: { global: string; local?: string };
    /** The dashboard and alert rules (builders/monitoring.ts), from the same compiled limits. */
    monitoring: MonitoringPlan;
    /** The per-value side (its own service and Redis) with `CounterStore.Split` and both kinds of counters; undefined otherwise. */
    perValue?: PerValuePlan;
    /** What each per-value rule gets from its store (printed by the preview and `npm start`). */
    perValueFigures: DeepReadonly<PerValueFiguresPlan>;
}

/** The objects built from a resolved GlobalRateLimit (the plan without its arguments, problems and policies). */
export type BuiltGlobalRateLimit = Omit<GlobalRateLimitPlan, "args" | "problems" | "policies">;

/** Validates the arguments and computes every object (pure; exported for the tests and the renderer): resolve, build, then check the built objects' sizes. */
export function planGlobalRateLimit(args: GlobalRateLimitArgs): GlobalRateLimitPlan {
    const { problems: resolveProblems, value } = resolveWithFallbacks(args);
    const built = buildGlobalRateLimit(value);
    const problems = [...resolveProblems, ...builtSizeProblems(value, built)];
    return { args, problems, ...built, policies: problems.length ? [] : accessPolicies(value) };
}

/** Every object of a resolved GlobalRateLimit but its policies. */
export function buildGlobalRateLimit(r: ResolvedGlobalRateLimit): BuiltGlobalRateLimit {
    const perValue = r.perValue ? perValuePlan(r, r.perValue) : undefined;
    return {
        compiled: r.compiled,
        service: r.service,
        configYaml: configYaml(r.call.domain, r.fixed.configDescriptors),
        filters: [...gatewayFilters(r), ...(r.perValue ? perValueSideFilters(r, r.perValue) : [])],
        grpcAddress: r.endpoint.grpcAddress,
        preLimit: r.preLimit,
        monitoring: buildMonitoring(r.monitoring),
        listenerKeys: r.listenerKeys,
        httpFilterNames: { global: r.filterNames.global, ...(r.preLimit?.buckets.length ? { local: r.filterNames.local } : {}) },
        platformDefaultsOff: r.platformDefaultsOff,
        ...(perValue ? { perValue } : {}),
        perValueFigures: r.perValueFigures,
    };
}

/** The access policies of the services and the token check of the rules with `identity`. */
export function accessPolicies(r: ResolvedGlobalRateLimit): PolicyObject[] {
    return [...r.access.flatMap(accessManifests), ...tokenChecks(r.prefix, r.gateway, r.limits.rules)];
}

/** The gateway's EnvoyFilters of the fixed side: the rate-limit filter, the virtual-host and the route actions, the access log. */
function gatewayFilters(r: ResolvedGlobalRateLimit): PlannedFilter[] {
    const { prefix, gateway: gw, fixed } = r;
    const routes = r.perInstance
        ? routePerFilterRateLimits(gw.target, r.filterNames.global, r.call.domain, r.routePatches, fixed.vhostRateLimits, r.pathKey)
        : routeRateLimitsFilter(gw.target, r.routePatches, r.pathKey);
    const vhosts = r.perInstance
        ? vhostPerFilterRateLimits(gw.target, r.filterNames.global, r.call.domain, r.vhostNames, fixed.vhostRateLimits)
        : vhostRateLimitsFilter(gw.target, r.vhostNames, fixed.vhostRateLimits);
    const at = (name: string, spec: EnvoyFilterSpec): PlannedFilter => ({ name, namespace: gw.namespace, spec });
    return [
        at(prefix, httpFilter(r)),
        ...(fixed.vhostRateLimits.length ? [at(`${prefix}-svc`, vhosts)] : []),
        ...(routes ? [at(`${prefix}-svc-api`, routes)] : []),
        ...(r.accessLog ? [at(`${prefix}-access-log`, accessLogFilter({ target: gw.target, ports: gw.ports, ...r.accessLog }))] : []),
    ];
}

/** The rate-limit HTTP filter's spec, with the other patches its EnvoyFilter carries, in their order. */
function httpFilter(r: ResolvedGlobalRateLimit): EnvoyFilterSpec {
    const gw = r.gateway;
    const base = ratelimitHttpFilter({
        target: gw.target,
        ports: gw.ports,
        ...r.call,
        clusterName: r.endpoint.clusterName,
        authority: r.endpoint.host,
        filterName: r.filterNames.global,
        ...(r.perInstance ? { stage: PER_INSTANCE_STAGE } : {}),
    });
    // Only from limits that all passed their checks (a refused plan creates nothing anyway).
    const policy = r.policyHeaderReady ? policyFilter(r) : undefined;
    return {
        ...base,
        configPatches: [
            ...base.configPatches,
            // After the global filter's insertion: the local filter lands directly before it.
            ...preLimitPatchesOf(r),
            // A platform's defaults off on this instance's listed hosts (components/global-ratelimit/platform-defaults.ts).
            ...platformDefaultsPatches(r.platformDefaults, r.layout, gw.virtualHosts),
            // What this instance adds to the gateway's responses.
            ...(policy?.configPatches ?? []),
            // The copy of each response cost header into dynamic metadata.
            ...responseCostPatches(r.responseCosts, gw.ports, r.filterNames.cost),
        ],
    };
}

/** The pre-limit's local filter and its buckets on the virtual hosts (and, per instance, on the routes); none without buckets. */
function preLimitPatchesOf(r: ResolvedGlobalRateLimit): EnvoyFilterPatch[] {
    const pre = r.preLimit;
    if (!pre?.buckets.length) return [];
    const { gateway: gw, fixed, pathKey } = r;
    const vhMode = pathKey === PathKeyMode.Literal ? "OVERRIDE" : "INCLUDE";
    const names = { localFilterName: r.filterNames.local, globalFilterName: r.filterNames.global };
    const placement = r.perInstance
        ? {
              ports: gw.ports,
              virtualHosts: r.vhostNames,
              ...names,
              routes: r.routePatches.map((p) => ({
                  virtualHost: p.virtualHost,
                  route: p.route,
                  config: preLimitConfig(pre.buckets, vhMode, routeDescriptors(p, fixed.vhostRateLimits, pathKey)),
              })),
          }
        : { ports: gw.ports, virtualHosts: r.vhostNames, ...names };
    return preLimitPatches(placement, preLimitConfig(pre.buckets, vhMode, r.perInstance ? fixed.vhostRateLimits : undefined));
}

/** `RateLimit-Policy` on the virtual hosts (their per-path limits and rules) and on each route with rules of its own. */
function policyFilter(r: ResolvedGlobalRateLimit): EnvoyFilterSpec | undefined {
    // The service's shadow mode refuses nothing: no policy to publish.
    if (r.shadowMode) return undefined;
    const { resolvedLimits: limits, routePatches, gateway: gw } = r;
    // With the literal path key a route's own rules replace the host's, so a host-wide header would
    // list limits those routes do not apply: then only the routes publish theirs.
    const literalRoutes = r.pathKey === PathKeyMode.Literal && routePatches.length > 0;
    const vhostValue = literalRoutes ? undefined : policyHeaderValue(policyItems(limits));
    const vhosts = vhostValue === undefined ? [] : r.vhostNames.map((name) => ({ name, header: policyHeaderOption(vhostValue) }));
    const everyHost = new Set(routePatches.filter((p) => p.virtualHost === "").map((p) => p.route));
    const seen = new Set<string>();
    const routes = routePatches.flatMap((p) => {
        if (seen.has(`${p.virtualHost}|${p.route}`)) return [];
        seen.add(`${p.virtualHost}|${p.route}`);
        const at = { name: p.route, virtualHost: p.virtualHost, namedOnly: p.virtualHost !== "" && everyHost.has(p.route) };
        const value = policyHeaderValue(policyItems(limits, at));
        return value === undefined ? [] : [{ virtualHost: p.virtualHost, route: p.route, header: policyHeaderOption(value) }];
    });
    return policyHeaderFilter(gw.target, vhosts, routes);
}

/** The per-value side's plan: its service and sizing with its config and address. */
function perValuePlan(r: ResolvedGlobalRateLimit, pv: ResolvedPerValue): PerValuePlan {
    return {
        service: pv.service,
        sizing: pv.sizing,
        configYaml: configYaml(r.call.domain, pv.limits.configDescriptors),
        grpcAddress: pv.endpoint.grpcAddress,
        httpFilterName: pv.httpFilterName,
    };
}

/** The per-value side's filters (with `CounterStore.Split` and both kinds of counters). */
function perValueSideFilters(r: ResolvedGlobalRateLimit, pv: ResolvedPerValue): PlannedFilter[] {
    return perValueFilters(pv.limits, {
        target: r.gateway.target,
        ports: r.gateway.ports,
        virtualHosts: r.vhostNames,
        perInstance: r.perInstance,
        filterName: pv.httpFilterName,
        ...pv.call,
        clusterName: pv.endpoint.clusterName,
        authority: pv.endpoint.host,
        prefix: pv.prefix,
        namespace: r.gateway.namespace,
    });
}
