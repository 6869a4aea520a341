/**
 * PlatformRateLimit's arguments resolved once: every problem under its property path, or a read-only
 * value (frozen at every level) with every default filled in and every name derived, from which the
 * plan (platform-ratelimit-plan.ts) builds the objects without checking or defaulting anything.
 * The service, Redis, their checks and the monitoring are GlobalRateLimit's own machinery (its plan
 * of the same service arguments, without rules); the sources are compiled in platform-sources.ts.
 * The platform's own plain fields are declared in platform-ratelimit-fields.ts.
 */
import { CounterStore } from "../../builders/counter-stores";
import { FilterTarget } from "../../builders/envoy-filters";
import { ruleSummaries } from "../../builders/monitoring";
import { RateLimitHeaders } from "../../builders/filter-choices";
import { PLATFORM_DOMAIN, PLATFORM_OBJECT_PREFIX, PlatformSource } from "../../builders/platform-filters";
import { CompiledLimits } from "../../builders/rules";
import { Resolved, givenProblems, resolvedFields, withDefaults } from "../../lib/field-decl";
import { DeepReadonly, frozenCopy } from "../../lib/frozen";
import { isGatewayHost } from "../../lib/formats";
import { Problem } from "../../lib/problems";
import { dnsProblem, portProblem } from "../common/arg-checks";
import { componentFieldProblems } from "../common/arg-checks";
import { PLATFORM_ARG_TYPES } from "./arg-types";
import { gatewayTargetOf } from "../global-ratelimit/gateway-target";
import { GlobalRateLimitArgs } from "../global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../global-ratelimit/plan";
import { PerValueFiguresPlan, platformFiguresOf } from "../global-ratelimit/per-value-figures";
import { overLimitCacheOf } from "../global-ratelimit/per-value-store";
import { PER_VALUE_EVICTION_POLICY } from "../../builders/failure-bounds";
import { PLATFORM_ADMISSION_FIELDS, PLATFORM_ARGS_FIELDS, PLATFORM_CALL_FIELDS, PLATFORM_GATEWAY_FIELDS, PLATFORM_SERVICE_NAMES, PRE_LIMIT } from "./fields";
import { PlatformFilterCallArgs, PlatformRateLimitArgs } from "./args.generated";
import { CheckedSource, platformEvictionPolicy, sourcesOf } from "./platform-sources";
import { MonitoringPlan, monitoringPlanOf } from "../service/ratelimit-monitoring";
import { ServiceSettings } from "../service/settings";

/** How one platform filter calls the service: its own setting, else the component's, else the default. */
export type ResolvedPlatformCall = Resolved<typeof PLATFORM_CALL_FIELDS>;

/** One source with at least one limit: its compiled limits and how its filter goes on the gateway; read-only at every level (frozen). */
export type ResolvedPlatformSource = DeepReadonly<PlatformSourceResolution>;

/** The fields of `ResolvedPlatformSource`. */
export interface PlatformSourceResolution {
    readonly source: PlatformSource;
    readonly ruleNames: readonly string[];
    readonly compiled: CompiledLimits;
    readonly call: ResolvedPlatformCall;
    /** Listener ports of its filter (empty: every listener): the overrides go on every HTTP listener, the defaults on `gateway.listenerPorts`. */
    readonly ports: readonly number[];
    /** Whether a pre-limit goes before its filter: `preLimit`, and not in the service's shadow mode (which refuses nothing). */
    readonly preLimit: boolean;
    /** Its `RateLimit-Policy` on its refusals; undefined with the headers off. */
    readonly policy?: string;
}

/** The gateway the filters go on (`namespace`, as declared: where the EnvoyFilters are created), and the names derived from it. */
export type ResolvedPlatformGateway = Resolved<Pick<typeof PLATFORM_GATEWAY_FIELDS, "namespace">> & {
    readonly target: FilterTarget;
    /** Labels of the gateway's pods. */
    readonly podLabels: Record<string, string>;
    /** Claim key of the gateway (two PlatformRateLimits of one program on one gateway are refused). */
    readonly key: string;
};

/** Where the filters reach the platform's service. */
export interface ResolvedPlatformService {
    readonly clusterName: string;
    readonly authority: string;
    readonly grpcAddress: string;
}

/**
 * The admission policy the component installs (builders/admission-policy.ts): where it binds and who
 * the platform is (`platformGroups` as declared; `platformUsers` none when not given).
 */
export type ResolvedPlatformAdmission = Resolved<Pick<typeof PLATFORM_ADMISSION_FIELDS, "platformGroups">> & {
    readonly name: string;
    /** The gateway's namespace and the declared `rootNamespace`, each once. */
    readonly namespaces: readonly string[];
    readonly platformUsers: readonly string[];
};

/** PlatformRateLimit's arguments resolved: read-only at every level (frozen), every default filled in, every name derived once. */
export type ResolvedPlatformRateLimit = DeepReadonly<PlatformRateLimitResolution>;

/** The fields of `ResolvedPlatformRateLimit` as `resolvePlatformRateLimit` assembles them, before its frozen copy. */
export interface PlatformRateLimitResolution {
    readonly gateway: ResolvedPlatformGateway;
    /** The service's and Redis's settings (GlobalRateLimit's, its store's eviction policy the platform's). */
    readonly service: ServiceSettings;
    readonly reach: ResolvedPlatformService;
    /** The sources with at least one limit, overrides first. */
    readonly sources: readonly PlatformSourceResolution[];
    /** The platform's host assignments (namespace → hosts), when given. */
    readonly teamHosts?: Record<string, readonly string[]>;
    /** Whether a host assigned to no one is owned by the routes that bind it to a serving gateway. */
    readonly routeBound: boolean;
    /** The admission policy to install; undefined with `admission.install: false`. */
    readonly admission?: ResolvedPlatformAdmission;
    /** Whether the platform's filters tell clients their limits (X-RateLimit-*, RateLimit-Policy and Retry-After on refusals). */
    readonly headersOn: boolean;
    readonly monitoring: MonitoringPlan;
    /** What each per-value rule gets from the platform's store (printed by the preview). */
    readonly perValueFigures: PerValueFiguresPlan;
}

/** Every problem of the arguments, each under its property path, or the resolved value (pure). */
export function resolvePlatformRateLimit(args: PlatformRateLimitArgs): { problems: Problem[]; value?: ResolvedPlatformRateLimit } {
    const a: Partial<PlatformRateLimitArgs> = args ?? {};
    const problems: Problem[] = [...componentFieldProblems(PLATFORM_ARG_TYPES, "PlatformRateLimit", args)];
    const base = planGlobalRateLimit(serviceArgsOf(a));
    // Its "no rule" problem is about the rules it was not given (the sources are checked below), and
    // its "platform's domain" problem is about a team taking the domain this component owns.
    problems.push(...base.problems.filter((p) => p.key !== "rules" && p.key !== "domain").flatMap((p) => withPlatformFix(p, a)));
    const gw = gatewayTargetOf({ ...(a.gateway ?? {}), listenerPorts: undefined, allVirtualHosts: true }, []);
    const ports = listenerPortsOf(a.gateway?.listenerPorts, problems);
    const rateLimitHeaders = resolvedFields({ rateLimitHeaders: PLATFORM_ARGS_FIELDS.rateLimitHeaders }, a, problems).rateLimitHeaders;
    // In the service's shadow mode nothing is refused, so nothing is published (as a team's).
    const headersOn = rateLimitHeaders === RateLimitHeaders.Draft03 && a.service?.shadowMode !== true;
    const checked = sourcesOf(a, problems, headersOn);
    // Its one store holds the sources' counters: a per-value one among them makes it evict by use, and
    // sizes the over-limit cache to keep a spent key refused through a flood (builders/over-limit-cache.ts).
    const policy = platformEvictionPolicy(a);
    const descriptors = checked.flatMap((s) => s.compiled.configDescriptors);
    const cache =
        policy === PER_VALUE_EVICTION_POLICY
            ? { localCacheSizeInBytes: overLimitCacheOf({ service: a.service }, base.service.ratelimit.redisMaxMemory, PLATFORM_DOMAIN, descriptors) }
            : {};
    const service: ServiceSettings = { ...base.service, ratelimit: { ...base.service.ratelimit, redisEvictionPolicy: policy, ...cache } };
    const r = service.ratelimit;
    const host = `${r.serviceName}.${r.namespace}.svc.cluster.local`;
    const calls = filterCallsOf(a, problems);
    const teamHosts = teamHostsOf(a.teamHosts, problems);
    const preLimit = preLimitOf(a, problems);
    const routeBound = resolvedFields({ routeBoundOwnership: PLATFORM_ARGS_FIELDS.routeBoundOwnership }, a, problems).routeBoundOwnership;
    const admission = admissionOf(a, gw.namespace, problems);
    // What each per-value rule gets from the platform's store (valid sources only), printed by the preview.
    const figured = problems.length ? [] : checked.map((s) => ({ source: s.source, limits: s.limits }));
    const perValueFigures = platformFiguresOf(figured, r, a.redis, problems);
    const monitoring = platformMonitoringOf(a, { service, gw, sources: checked, calls }, problems);
    if (problems.length) return { problems };
    const sources = checked.map((s): PlatformSourceResolution => ({
        source: s.source,
        ruleNames: s.ruleNames,
        compiled: s.compiled,
        call: calls[s.source],
        // The overrides go on every HTTP listener of the pods, whichever port a team's Gateway adds later.
        ports: s.source === PlatformSource.Overrides ? [] : ports,
        preLimit,
        ...(s.policy !== undefined ? { policy: s.policy } : {}),
    }));
    const gateway = { target: gw.target, podLabels: gw.podLabels, namespace: gw.namespace, key: `platform|${gw.namespace}|${JSON.stringify(gw.target)}` };
    const reach = { clusterName: `outbound|${r.grpcPort}||${host}`, authority: host, grpcAddress: `${host}:${r.grpcPort}` };
    const value: PlatformRateLimitResolution = {
        gateway,
        service,
        reach,
        sources,
        ...(teamHosts ? { teamHosts } : {}),
        routeBound,
        ...(admission ? { admission } : {}),
        headersOn,
        monitoring,
        perValueFigures,
    };
    return { problems, value: frozenCopy(value) };
}

/** The GlobalRateLimit arguments of the platform's service (no rules: its plan gives the service, Redis and their checks). */
function serviceArgsOf(a: Partial<PlatformRateLimitArgs>): GlobalRateLimitArgs {
    return {
        domain: PLATFORM_DOMAIN,
        gateway: { ...(a.gateway ?? {}), listenerPorts: undefined, allVirtualHosts: true },
        rules: [],
        namespace: a.namespace,
        failureModeDeny: withDefaults(PLATFORM_CALL_FIELDS, a).failureModeDeny,
        // The service's Redis timeout is derived from it: the service gives up before the gateway does.
        timeout: withDefaults(PLATFORM_CALL_FIELDS, a).timeout,
        service: { name: PLATFORM_SERVICE_NAMES.name.default, configName: PLATFORM_SERVICE_NAMES.configName.default, ...(a.service ?? {}) },
        redis: a.redis,
        counterStore: CounterStore.Single,
        preLimit: false,
        monitoring: { dashboard: false, alerts: false },
        // Its filters are not used (the platform builds its own): a prefix outside the platform's names.
        filterNamePrefix: "platform-service",
    };
}

/**
 * A problem of the service's arguments as the platform says it: `failureModeDeny` and `timeout` are
 * checked there with GlobalRateLimit's defaults as the fix's fallback, so they are said again by the
 * platform's own rules (the same condition, the platform's defaults in the fix).
 */
function withPlatformFix(p: Problem, a: Partial<PlatformRateLimitArgs>): Problem[] {
    const { failureModeDeny: fmd, timeout: t } = PLATFORM_CALL_FIELDS;
    if (p.key === "failureModeDeny") return givenProblems(fmd, p.key, a.failureModeDeny);
    if (p.key === "timeout") return givenProblems(t, p.key, a.timeout);
    return [p];
}

/** What the platform's monitoring watches: its service, the gateway calling it, the sources and their calls. */
interface PlatformWatched {
    service: ServiceSettings;
    gw: { namespace: string; podLabels: Record<string, string> };
    sources: CheckedSource[];
    calls: Record<PlatformSource, ResolvedPlatformCall>;
}

/** The platform's dashboard and alerts (instance `platform`, domain the platform's), checked under `monitoring.`. */
function platformMonitoringOf(a: Partial<PlatformRateLimitArgs>, w: PlatformWatched, problems: Problem[]): MonitoringPlan {
    const { service, gw, sources, calls } = w;
    const r = service.ratelimit;
    return monitoringPlanOf(
        a.monitoring,
        {
            instance: "platform",
            domain: PLATFORM_DOMAIN,
            namespace: r.namespace,
            serviceName: r.serviceName,
            descriptors: sources.flatMap((s) => s.compiled.plannedDescriptors),
            gatewayNamespace: gw.namespace,
            gatewayPodLabels: gw.podLabels,
            failureModeDeny: sources.some((s) => calls[s.source].failureModeDeny),
            serviceMetrics: r.prometheus,
            ruleSummaries: ruleSummaries(sources.flatMap((s) => s.checkedRules)),
        },
        problems,
    );
}

/** The admission policy's settings (`admission`), checked; undefined when the component does not install it. */
function admissionOf(a: Partial<PlatformRateLimitArgs>, gatewayNamespace: string, problems: Problem[]): ResolvedPlatformAdmission | undefined {
    const { platformUsers: usersDecl, ...defaulted } = PLATFORM_ADMISSION_FIELDS;
    const given = a.admission ?? {};
    const f = resolvedFields(defaulted, given, problems, "admission.");
    const users = givenProblems(usersDecl, "admission.platformUsers", given.platformUsers);
    problems.push(...users);
    if (!f.install) return undefined;
    return {
        name: `${PLATFORM_OBJECT_PREFIX}.${gatewayNamespace}`,
        namespaces: [...new Set([gatewayNamespace, f.rootNamespace])],
        platformUsers: users.length ? [] : [...(given.platformUsers ?? [])],
        platformGroups: [...f.platformGroups],
    };
}

/** `preLimit`, checked, unless the service's shadow mode turns it off (a service that refuses nothing has no pre-limit). */
function preLimitOf(a: Partial<PlatformRateLimitArgs>, problems: Problem[]): boolean {
    problems.push(...givenProblems(PRE_LIMIT, "preLimit", a.preLimit));
    return withDefaults({ preLimit: PRE_LIMIT }, a).preLimit !== false && a.service?.shadowMode !== true;
}

/** `gateway.listenerPorts`: the defaults filter's ports, each once (empty: every listener). */
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

/** Each filter's failure mode and timeout: its own (`filters.<source>`), else the component's, else the defaults. */
function filterCallsOf(a: Partial<PlatformRateLimitArgs>, problems: Problem[]): Record<PlatformSource, ResolvedPlatformCall> {
    const { failureModeDeny: fmd, timeout: t } = PLATFORM_CALL_FIELDS;
    const { failureModeDeny, timeout } = withDefaults(PLATFORM_CALL_FIELDS, a);
    const shared = { failureModeDeny, timeout };
    const call = (source: PlatformSource): ResolvedPlatformCall => {
        const own: PlatformFilterCallArgs = a.filters?.[source] ?? {};
        if (own.failureModeDeny !== undefined)
            problems.push(...fmd.rule.problems(`filters.${source}.failureModeDeny`, own.failureModeDeny, shared.failureModeDeny));
        if (own.timeout !== undefined) problems.push(...givenProblems(t, `filters.${source}.timeout`, own.timeout));
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
