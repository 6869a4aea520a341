/**
 * PlatformRateLimit's plan: every object it creates, computed from the arguments and validated
 * before any resource is registered (pure). The service, Redis, their checks and the monitoring
 * placement are GlobalRateLimit's own (its plan of the same service arguments, without rules); the
 * rules of each source are compiled as GlobalRateLimit compiles its own, under the source's
 * descriptor keys, and go into the source's filter (builders/platform-filters.ts).
 */
import { CounterStore, holdsPerValueCounters } from "../builders/counter-stores";
import { evictionPolicyFor } from "../builders/failure-bounds";
import { EnvoyFilterSpec } from "../builders/envoy-filters";
import { ruleSummaries } from "../builders/monitoring";
import {
    PLATFORM_DOMAIN,
    PLATFORM_OBJECT_PREFIX,
    PLATFORM_PATH_KEYS,
    PLATFORM_RULE_KEYS,
    PlatformSource,
    platformFilter,
    platformPreLimitPatches,
} from "../builders/platform-filters";
import { PreLimitPlan, preLimitPlan } from "../builders/pre-limit";
import { configYaml } from "../builders/ratelimit-config";
import { CompiledLimits, ConfigDescriptor } from "../builders/rules";
import { GlobalLimitsInput } from "../builders/rule-args";
import { compileGlobalLimits } from "./limits-plan";
import { Problem } from "../lib/problems";
import { dnsProblem, portProblem, unknownFieldProblems } from "./arg-checks";
import { TEAM_HOSTS_ANNOTATION } from "./host-ownership";
import { isGatewayHost } from "../lib/formats";
import { gatewayTargetOf } from "./gateway-target";
import { GlobalRateLimitArgs } from "./global-ratelimit-args";
import { planGlobalRateLimit } from "./global-ratelimit-plan";
import { PlatformFilterCallArgs, PlatformLimitsArgs, PlatformRateLimitArgs } from "./platform-ratelimit-args";
import { booleanProblems, protoDurationProblems } from "../lib/field-checks";
import { MonitoringPlan, monitoringPlanOf } from "./ratelimit-monitoring";
import { PerValueFiguresPlan, platformFiguresOf } from "./per-value-figures";
import { ServiceSettings } from "./service-settings";
import { givenProblems } from "../lib/field-decl";
import { GLOBAL_FIELDS } from "./global-ratelimit-fields";

/** The platform service's default names (apart from a GlobalRateLimit's `ratelimit` and `ratelimit-config`). */
export const PLATFORM_SERVICE_NAME = "ratelimit-platform";
export const PLATFORM_CONFIG_NAME = "ratelimit-platform-config";

/** One source's compiled limits: its rules' names, descriptors and config entries. */
export interface PlatformSourcePlan {
    source: PlatformSource;
    ruleNames: string[];
    compiled: CompiledLimits;
    /** The pre-limit's buckets (the source's fixed limits) and the limits it leaves to the service; undefined with `preLimit: false` or in shadow mode. */
    preLimit?: PreLimitPlan;
}

/** Everything the component creates, computed and validated before any resource is registered. */
export interface PlatformRateLimitPlan {
    args: PlatformRateLimitArgs;
    problems: Problem[];
    service: ServiceSettings;
    configYaml: string;
    grpcAddress: string;
    /** The sources with at least one limit, overrides first. */
    sources: PlatformSourcePlan[];
    filters: { name: string; namespace: string; spec: EnvoyFilterSpec; annotations?: Record<string, string> }[];
    /** Labels of the gateway's pods (the Gateways that select them are the ones checked for servers no HTTP filter covers). */
    gatewayPodLabels: Record<string, string>;
    /** Claim key of the gateway (two PlatformRateLimits of one program on one gateway are refused). */
    gatewayKey: string;
    monitoring: MonitoringPlan;
    /** What each per-value rule gets from the platform's store (printed by the preview). */
    perValueFigures: PerValueFiguresPlan;
}

const SOURCES = [PlatformSource.Overrides, PlatformSource.Defaults] as const;

/** A source's limits compiled under its own keys; its problems under `<source>.`. Exported for testing. */
export function planSource(source: PlatformSource, limits: PlatformLimitsArgs | undefined, problems: Problem[]): PlatformSourcePlan | undefined {
    if (limits === undefined) return undefined;
    if (typeof limits !== "object" || limits === null || Array.isArray(limits)) {
        problems.push({ key: source, value: limits, problem: "must be an object of rules and perPath", fix: `give { rules: [...] } or omit ${source}` });
        return undefined;
    }
    const rules = Array.isArray(limits.rules) ? limits.rules : [];
    rules.forEach((r, i) => {
        if (r && typeof r === "object" && r.route !== undefined)
            problems.push({
                key: `${source}.rules[${i}].route`,
                value: r.route,
                problem: "a platform rule applies on every host and route of the gateway, so it cannot sit on one route",
                fix: `remove route (a team limits its own routes with its GlobalRateLimit), or match the route's path with path`,
            });
        if (r && typeof r === "object" && r.identity !== undefined)
            problems.push({
                key: `${source}.rules[${i}].identity`,
                value: r.identity,
                problem: "is GlobalRateLimit's only: PlatformRateLimit renders no token check, so no request would carry a verified identity",
                fix: "remove identity, and limit per verified identity with the team's GlobalRateLimit (it renders the token check on its gateway)",
            });
    });
    if (limits.perPath?.descriptorKey !== undefined)
        problems.push({
            key: `${source}.perPath.descriptorKey`,
            value: limits.perPath.descriptorKey,
            problem: `is the platform's own (${PLATFORM_PATH_KEYS[source]}), so its counters never meet a team's`,
            fix: "remove descriptorKey",
        });
    const perPath = limits.perPath ? { ...limits.perPath, descriptorKey: PLATFORM_PATH_KEYS[source] } : undefined;
    const compiled = compileGlobalLimits({ rules: limits.rules, perPath, ruleKey: PLATFORM_RULE_KEYS[source], headersOn: false });
    problems.push(...compiled.problems.map((p) => ({ ...p, key: `${source}.${p.key}` })));
    if (!compiled.vhostRateLimits.length && !compiled.routePatches.length) return undefined;
    return { source, ruleNames: rules.map((r) => r?.name).filter((n): n is string => typeof n === "string"), compiled };
}

/** The GlobalRateLimit arguments of the platform's service (no rules: its plan gives the service, Redis and their checks). */
function serviceArgsOf(a: Partial<PlatformRateLimitArgs>): GlobalRateLimitArgs {
    return {
        domain: PLATFORM_DOMAIN,
        gateway: { ...(a.gateway ?? {}), listenerPorts: undefined, allVirtualHosts: true },
        rules: [],
        namespace: a.namespace,
        failureModeDeny: a.failureModeDeny ?? false,
        // The service's Redis timeout is derived from it: the service gives up before the gateway does.
        timeout: a.timeout ?? PLATFORM_FILTER_TIMEOUT,
        service: { name: PLATFORM_SERVICE_NAME, configName: PLATFORM_CONFIG_NAME, ...(a.service ?? {}) },
        redis: a.redis,
        counterStore: CounterStore.Single,
        preLimit: false,
        monitoring: { dashboard: false, alerts: false },
        // Its filters are not used (the platform builds its own): a prefix outside the platform's names.
        filterNamePrefix: "platform-service",
    };
}

/** Validates the arguments and computes every object (pure; exported for the tests and the renderer). */
export function planPlatformRateLimit(args: PlatformRateLimitArgs): PlatformRateLimitPlan {
    const a: Partial<PlatformRateLimitArgs> = args ?? {};
    const problems: Problem[] = [...unknownFieldProblems("PlatformRateLimit", args)];
    const base = planGlobalRateLimit(serviceArgsOf(a));
    // Its "no rule" problem is about the rules it was not given (the sources are checked below), and
    // its "platform's domain" problem is about a team taking the domain this component owns.
    problems.push(...base.problems.filter((p) => p.key !== "rules" && p.key !== "domain"));
    const gw = gatewayTargetOf({ ...(a.gateway ?? {}), listenerPorts: undefined, allVirtualHosts: true }, []);
    const ports = listenerPortsOf(a.gateway?.listenerPorts, problems);
    const sources = sourcesOf(a, problems);
    // Its one store holds the sources' counters: a per-value one among them makes it evict by use.
    const service = { ...base.service, ratelimit: { ...base.service.ratelimit, redisEvictionPolicy: platformEvictionPolicy(a) } };
    const r = service.ratelimit;
    const host = `${r.serviceName}.${r.namespace}.svc.cluster.local`;
    const calls = filterCallsOf(a, problems);
    const teamHosts = teamHostsOf(a.teamHosts, problems);
    preLimitsOf(a, sources, problems);
    const filters = sources.map((s) => {
        // The overrides go on every HTTP listener of the pods, whichever port a team's Gateway adds later.
        const sourcePorts = s.source === PlatformSource.Overrides ? [] : ports;
        const spec = platformFilter(s.source, {
            target: gw.target,
            ports: sourcePorts,
            ...calls[s.source],
            clusterName: `outbound|${r.grpcPort}||${host}`,
            authority: host,
            rateLimits: s.compiled.vhostRateLimits,
        });
        // The pre-limit in the source's EnvoyFilter, after the filter's insertion: it lands directly before it.
        if (s.preLimit?.buckets.length)
            spec.configPatches.push(...platformPreLimitPatches(s.source, sourcePorts, s.preLimit.buckets, s.compiled.vhostRateLimits));
        return {
            name: `${PLATFORM_OBJECT_PREFIX}-${s.source}`,
            namespace: gw.namespace,
            ...(s.source === PlatformSource.Defaults && teamHosts ? { annotations: { [TEAM_HOSTS_ANNOTATION]: JSON.stringify(teamHosts) } } : {}),
            spec,
        };
    });
    const descriptors = sources.flatMap((s) => s.compiled.configDescriptors);
    // What each per-value rule gets from the platform's store (valid sources only), printed by the preview.
    const figured = problems.length ? [] : sources.map((s) => ({ source: s.source, limits: platformLimits(s.source, a[s.source]!) }));
    const perValueFigures = platformFiguresOf(figured, r, a.redis, problems);
    const monitoring = platformMonitoringOf(a, { r, descriptors, gw, sources, calls }, problems);
    return {
        args,
        problems,
        service,
        configYaml: configYaml(PLATFORM_DOMAIN, descriptors),
        grpcAddress: `${host}:${r.grpcPort}`,
        sources,
        filters,
        gatewayPodLabels: gw.podLabels,
        gatewayKey: `platform|${gw.namespace}|${JSON.stringify(gw.target)}`,
        monitoring,
        perValueFigures,
    };
}

/** The sources given, each planned; refused when two share a name or none is given. */
function sourcesOf(a: Partial<PlatformRateLimitArgs>, problems: Problem[]): PlatformSourcePlan[] {
    const sources = SOURCES.map((s) => planSource(s, a[s], problems)).filter((s): s is PlatformSourcePlan => s !== undefined);
    sharedNameProblems(sources, problems);
    if (!sources.length && a.defaults === undefined && a.overrides === undefined)
        problems.push({
            key: "defaults",
            value: undefined,
            problem: "no defaults and no overrides: the component would limit nothing",
            fix: "give defaults, overrides or both",
        });
    return sources;
}

/** What the platform's monitoring watches: its service, its descriptors and the gateway calling it. */
interface PlatformWatched {
    r: PlatformRateLimitPlan["service"]["ratelimit"];
    descriptors: ConfigDescriptor[];
    gw: { namespace: string; podLabels: Record<string, string> };
    sources: PlatformSourcePlan[];
    calls: ReturnType<typeof filterCallsOf>;
}

/** The platform's dashboard and alerts (instance `platform`, domain the platform's). */
function platformMonitoringOf(a: Partial<PlatformRateLimitArgs>, w: PlatformWatched, problems: Problem[]): PlatformRateLimitPlan["monitoring"] {
    const { r, descriptors, gw, sources, calls } = w;
    return monitoringPlanOf(
        a.monitoring,
        {
            instance: "platform",
            domain: PLATFORM_DOMAIN,
            namespace: r.namespace,
            serviceName: r.serviceName,
            descriptors,
            gatewayNamespace: gw.namespace,
            gatewayPodLabels: gw.podLabels,
            failureModeDeny: sources.some((s) => calls[s.source].failureModeDeny),
            serviceMetrics: r.prometheus,
            ruleSummaries: ruleSummaries([...(a.overrides?.rules ?? []), ...(a.defaults?.rules ?? [])]),
        },
        problems,
    );
}

/** Each source's pre-limit plan (its fixed limits' buckets), unless `preLimit: false` or the service's shadow mode (it refuses nothing, so neither may a pre-limit). */
function preLimitsOf(a: Partial<PlatformRateLimitArgs>, sources: PlatformSourcePlan[], problems: Problem[]): void {
    problems.push(...givenProblems(GLOBAL_FIELDS.preLimit, "preLimit", a.preLimit));
    if ((a.preLimit ?? GLOBAL_FIELDS.preLimit.default) === false || a.service?.shadowMode === true) return;
    for (const s of sources) s.preLimit = preLimitPlan(s.compiled.configDescriptors);
}

/** A source's limits under the platform's own descriptor keys, as they are compiled. */
function platformLimits(source: PlatformSource, l: PlatformLimitsArgs): GlobalLimitsInput {
    return { ...l, ruleKey: PLATFORM_RULE_KEYS[source], ...(l.perPath ? { perPath: { ...l.perPath, descriptorKey: PLATFORM_PATH_KEYS[source] } } : {}) };
}

/** The platform store's policy: by use when a source (well-formed or not) holds a per-value counter. */
function platformEvictionPolicy(a: Partial<PlatformRateLimitArgs>): string {
    const holds = (l: PlatformLimitsArgs | undefined) =>
        l !== null && typeof l === "object" && holdsPerValueCounters({ rules: Array.isArray(l.rules) ? l.rules : [], perPath: l.perPath });
    return evictionPolicyFor(SOURCES.some((s) => holds(a[s])));
}

function listenerPortsOf(ports: unknown, problems: Problem[]): number[] {
    if (ports === undefined) return [];
    if (!Array.isArray(ports) || !ports.length) {
        problems.push({
            key: "gateway.listenerPorts",
            value: ports,
            problem: "must be a non-empty list of ports",
            fix: "give e.g. [8080], or omit it for every listener",
        });
        return [];
    }
    ports.forEach((p, i) => problems.push(...portProblem(`gateway.listenerPorts[${i}]`, p)));
    return [...new Set(ports as number[])];
}

/** The default timeout of both filters' calls: 5× the service's p99 (10.9 ms) with its store saturated (docs/proof/benchmarks.md). */
export const PLATFORM_FILTER_TIMEOUT = "0.05s";

/** Each filter's failure mode and timeout: its own (`filters.<source>`), else the component's, else the defaults. */
function filterCallsOf(a: Partial<PlatformRateLimitArgs>, problems: Problem[]): Record<PlatformSource, { failureModeDeny: boolean; timeout: string }> {
    const shared = { failureModeDeny: a.failureModeDeny ?? false, timeout: a.timeout ?? PLATFORM_FILTER_TIMEOUT };
    const call = (source: PlatformSource) => {
        const own: PlatformFilterCallArgs = a.filters?.[source] ?? {};
        if (own.failureModeDeny !== undefined)
            problems.push(...booleanProblems(`filters.${source}.failureModeDeny`, own.failureModeDeny, shared.failureModeDeny));
        if (own.timeout !== undefined) problems.push(...protoDurationProblems(`filters.${source}.timeout`, own.timeout, 0.001, PLATFORM_FILTER_TIMEOUT));
        return { failureModeDeny: own.failureModeDeny ?? shared.failureModeDeny, timeout: own.timeout ?? shared.timeout };
    };
    return { overrides: call(PlatformSource.Overrides), defaults: call(PlatformSource.Defaults) };
}

/** The platform's host assignments, checked: namespace names and Gateway hosts; undefined when none are given. */
function teamHostsOf(given: unknown, problems: Problem[]): Record<string, string[]> | undefined {
    if (given === undefined) return undefined;
    if (typeof given !== "object" || given === null || Array.isArray(given)) {
        problems.push({ key: "teamHosts", value: given, problem: "must be an object of namespace → hosts", fix: 'give e.g. { "team-b": ["b.example.com"] }' });
        return undefined;
    }
    const owner = new Map<string, string>();
    for (const [ns, hosts] of Object.entries(given)) {
        problems.push(...dnsProblem(`teamHosts.${ns}`, ns, "label"));
        if (!Array.isArray(hosts)) {
            problems.push({ key: `teamHosts.${ns}`, value: hosts, problem: "must be a list of hosts", fix: 'give e.g. ["b.example.com"]' });
            continue;
        }
        hosts.forEach((h, i) => {
            if (typeof h !== "string" || !isGatewayHost(h))
                problems.push({
                    key: `teamHosts.${ns}[${i}]`,
                    value: h,
                    problem: "must be a Gateway host (a DNS name, `*.<domain>` or `*`)",
                    fix: 'give e.g. "b.example.com"',
                });
            else if (owner.has(h) && owner.get(h) !== ns)
                problems.push({
                    key: `teamHosts.${ns}[${i}]`,
                    value: h,
                    problem: `is also assigned to namespace ${owner.get(h)}: a host has one team`,
                    fix: `keep ${h} under one namespace`,
                });
            else owner.set(h, ns);
        });
    }
    return given as Record<string, string[]>;
}

/** A rule name in both sources would make one dashboard series of two limits. */
function sharedNameProblems(sources: PlatformSourcePlan[], problems: Problem[]): void {
    const [first, second] = sources;
    if (!first || !second) return;
    for (const n of first.ruleNames.filter((x) => second.ruleNames.includes(x)))
        problems.push({
            key: "defaults.rules",
            value: n,
            problem: `rule name '${n}' is also an override's: each platform rule needs a name of its own`,
            fix: `rename the default, e.g. '${n}-default'`,
        });
}
