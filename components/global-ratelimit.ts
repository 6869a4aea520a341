/**
 * GlobalRateLimit: global limits for any Istio gateway, from typed rules (builders/rules.ts).
 * Deploys the envoyproxy/ratelimit service (ConfigMap, Deployment, Service, PodDisruptionBudget),
 * Redis (or uses an existing one) and the gateway's EnvoyFilters (the rate-limit HTTP filter, the
 * virtual-host actions and the route actions), all derived from the same rules.
 */
import * as k8s from "@pulumi/kubernetes";
import { Problem } from "../lib/problems";
import * as pulumi from "@pulumi/pulumi";
import { AccessTarget, authorizationPolicyManifests, networkPolicyManifests } from "./access-policies";
import { PRINCIPAL_PROBLEM, parsePrincipal, suggestedPrincipal } from "../lib/principal";
import { PlannedOptions, dnsProblem, planOrCompute, portProblem, argsError, unknownFieldProblems } from "./arg-checks";
import { stackLabels } from "../lib/common";
import { EnvoyFilter } from "./crds";
import { DEFAULTS } from "./defaults";
import { redisTimeoutFor } from "../builders/failure-bounds";
import {
    EnvoyFilterSpec,
    ErrorStatus,
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    PER_INSTANCE_MIN_ISTIO,
    PER_INSTANCE_STAGE,
    RATELIMIT_FILTER,
    instanceFilterName,
    ratelimitHttpFilter,
    routeDescriptors,
    routePerFilterRateLimits,
    routeRateLimitsFilter,
    vhostPerFilterRateLimits,
    vhostRateLimitsFilter,
} from "../builders/envoy-filters";
import { GatewayTargetArgs, gatewayTargetOf, routePatchesFor } from "./gateway-target";
import { PreLimitPlan, preLimitConfig, preLimitPatches, preLimitPlan } from "../builders/pre-limit";
import { configYaml } from "../builders/ratelimit-config";
import { CounterStore, sideAsCompiled } from "../builders/counter-stores";
import { PerValuePlan, PerValueStoreArgs, perValuePlanOf, splitOf } from "./per-value-store";
import { perValueFilters } from "../builders/per-value-filters";
import { REDIS_EVICTION_POLICY } from "../builders/failure-bounds";
import { RateLimitService } from "./ratelimit-service";
import { REDIS_NAME, Redis } from "./redis";
import { RedisConnection, deploysRedis, redisUrl } from "../builders/redis-connection";

import { RedisOptionsArgs, redisConnectionOf } from "./redis-options";
import { CompiledLimits, PathKeyMode, PerPathLimitsArgs, RateLimitRuleArgs, compileGlobalLimits } from "../builders/rules";
import { GO_DURATION, protoDurationSeconds } from "../lib/formats";
import { RateLimitServiceSettings, ServiceLogLevel, ServiceSettings } from "./service-settings";
import { MonitoringArgs, MonitoringPlan, RateLimitMonitoring, monitoringPlanOf } from "./ratelimit-monitoring";
import { oversizeProblems } from "./object-size";

/** The envoyproxy/ratelimit service. */
export interface RateLimitServiceOptionsArgs {
    /** Name of its Service and Deployment (the gateway's cluster name is derived from it). Defaults to `ratelimit`. */
    name?: string;
    /** Name of its ConfigMap. Defaults to `ratelimit-config`. */
    configName?: string;
    /** gRPC port. Defaults to `8081`. */
    grpcPort?: number;
    /** Image. Defaults to `docker.io/envoyproxy/ratelimit:3fb70258`. */
    image?: string;
    /** Replicas (they share Redis, so limits stay exact). Defaults to `2`. */
    replicas?: number;
    /** Log level. Defaults to `ServiceLogLevel.Warn`. */
    logLevel?: ServiceLogLevel;
    /** `REDIS_POOL_SIZE`: connections per service process. Defaults to `10`. */
    redisPoolSize?: number;
    /** `REDIS_PIPELINE_WINDOW` (Go duration; `0` flushes every write at once). Defaults to `0`. */
    redisPipelineWindow?: string;
    /** `REDIS_PIPELINE_LIMIT`. Defaults to `0`. */
    redisPipelineLimit?: number;
    /** `LOCAL_CACHE_SIZE_IN_BYTES`: cache of over-limit keys per process (0 disables). Defaults to `1048576`. */
    localCacheSizeInBytes?: number;
    /** Serve Prometheus metrics on port 9090 (`USE_PROMETHEUS`); `false` turns stats off. Defaults to `false`. */
    prometheus?: boolean;
    /** Global shadow mode (`SHADOW_MODE`): every limit counted and reported, nothing refused. Defaults to `false`. */
    shadowMode?: boolean;
}

export interface GlobalRateLimitArgs {
    /** Rate-limit domain, written once for both the gateway filter and the service config. */
    domain: string;
    /** The gateway whose requests are limited. */
    gateway: GatewayTargetArgs;
    /** Typed rules: what to count (path, header, client address, route) and how much. Defaults to none. */
    rules?: RateLimitRuleArgs[];
    /** Per-path counters (every distinct path its own counter). Defaults to none. */
    perPath?: PerPathLimitsArgs;
    /** What a path is counted by. Defaults to `PathKeyMode.UrlPath` (the path without its query string). */
    pathKey?: PathKeyMode;
    /** Descriptor key of each rule's first entry (its value is the rule's name). Defaults to `rule`. */
    ruleKey?: string;
    /** Namespace of the service, its ConfigMap and Redis (must exist). Defaults to `default`. */
    namespace?: string;
    /**
     * When the service cannot answer (down, unreachable, Redis failing, or slower than `timeout`):
     * `true` refuses the request with HTTP 500 (fail closed, the specification's choice); `false`
     * lets it through unlimited (fail open: on a gateway other teams share, a rate-limit outage then
     * never takes their traffic down with it). A boolean; anything else is refused. Defaults to `true`.
     */
    failureModeDeny?: boolean;
    /**
     * The status of a request refused because the service could not answer (`failureModeDeny`;
     * Envoy's `status_on_error`, Envoy 1.29+): `ErrorStatus.ServiceUnavailable` (503) lets clients
     * and load balancers tell an outage from a bug, `ErrorStatus.TooManyRequests` (429) makes it look
     * like a limit. The specification says only "deny". Only with `failureModeDeny: true`. Defaults
     * to none (Envoy's 500).
     */
    statusOnError?: ErrorStatus;
    /**
     * How the filters share the gateway listener. `FilterLayout.PerInstance`: HTTP filters named
     * after this instance's service (`envoy.filters.http.ratelimit/<namespace>/<service.name>`, the
     * pre-limit `envoy.filters.http.local_ratelimit/<namespace>/<service.name>`), descriptors only as
     * `RateLimitPerRoute` under that name, stage 10: any number of instances and programs share one
     * listener, and a request calls only the service of the instance owning its virtual host. Needs
     * Istio 1.25 or later (Envoy 1.33). `FilterLayout.Shared`: the specification's layout (canonical
     * filter names, route and virtual-host `rate_limits`, read by every rate-limit filter on the
     * listener): one instance per listener, for Istio 1.24. Defaults to `FilterLayout.PerInstance`.
     */
    filterLayout?: FilterLayout;
    /** Timeout of the gateway's call to the service (protobuf duration). Defaults to `10s`. */
    timeout?: string;
    /** The rate-limit service. Defaults as documented on each field. */
    service?: RateLimitServiceOptionsArgs;
    /** Redis. Defaults to one deployed by the component. */
    redis?: RedisOptionsArgs;
    /**
     * Where the counters live. `CounterStore.Split`: when the rules make both fixed counters (a named
     * path, a rule without a per-value split) and per-value ones (`perPath.eachPath`,
     * `header.perValue`, `perClientAddress`, `clientCidr.perAddress`), the per-value ones go to a
     * service and a Redis of their own (`<service.name>-per-value`, `redis-per-value`), so no flood
     * of new keys can evict, reset or slow a fixed limit (builders/counter-stores.ts).
     * `CounterStore.Single`: the specification's layout, one service and one Redis for all (a flood
     * of new paths can then evict a live fixed counter). Defaults to `CounterStore.Split`.
     */
    counterStore?: CounterStore;
    /** The per-value side of `CounterStore.Split`. Defaults as documented on each field. */
    perValueStore?: PerValueStoreArgs;
    /**
     * Prefix of the EnvoyFilter names: `<prefix>` (HTTP filter), `<prefix>-svc` (virtual-host
     * actions), `<prefix>-svc-api` (route actions). Defaults to `<namespace>-<service.name>` (unique in
     * the cluster, as the service is) with `FilterLayout.PerInstance`, `filter-ratelimit` (the
     * specification's names) with `FilterLayout.Shared`.
     */
    filterNamePrefix?: string;
    /** Wait for the Deployments to become ready. Defaults to `true`. */
    awaitRollout?: boolean;
    /**
     * Least privilege: when given, an Istio AuthorizationPolicy and a Kubernetes NetworkPolicy let
     * only the gateway call the service's gRPC port, and only the service reach the Redis the
     * component deploys. Defaults to none (any pod may call the service), because the gateway's
     * identity cannot be derived from its selector.
     */
    accessPolicy?: AccessPolicyArgs;
    /**
     * A pre-limit on the gateway: Envoy's local rate-limit filter before the rate-limit filter, on
     * the same listeners and virtual hosts, with one token bucket per pod for every limit a fixed
     * descriptor names (a rule, a named path): 2 × the limit, refilled by the limit per window. It
     * refuses (429, `x-mesh-ratelimit: pre-limit`) only what the service would refuse too while
     * traffic stays within the limits, so a flood no longer reaches the service. Per-value counters
     * (each path, header value or client address) stay with the service alone, and so does
     * everything in the service's shadow mode (`service.shadowMode`: no pre-limit). A boolean;
     * `false` sends every request to the service. Defaults to `true`.
     */
    preLimit?: boolean;
    /**
     * What a platform team looks at: a Grafana dashboard ConfigMap (on by default) and alert rules
     * as a `PrometheusRule` (off by default), generated from the same rules. Defaults as documented
     * on each field.
     */
    monitoring?: MonitoringArgs;
}

/** Who may call the rate-limit service. */
export interface AccessPolicyArgs {
    /**
     * The gateway's mesh identity, `<trust domain>/ns/<namespace>/sa/<service account>` (no
     * `spiffe://` prefix), e.g. `cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account`.
     * The NetworkPolicy admits the gateway's pods (`gateway.selector`) from that namespace.
     */
    gatewayPrincipal: string;
}

export const DEFAULT_FILTER_PREFIX = "filter-ratelimit";

/** Everything the component creates, computed and validated before any resource is registered. */
export interface GlobalRateLimitPlan {
    /** The arguments planned (the very object given). */
    args: GlobalRateLimitArgs;
    problems: Problem[];
    compiled: CompiledLimits;
    /** Settings of the service and Redis (internal components), defaults filled in. */
    service: ServiceSettings;
    configYaml: string;
    filters: { name: string; namespace: string; spec: EnvoyFilterSpec }[];
    /** The AuthorizationPolicies and NetworkPolicies of `accessPolicy` (none without it). */
    policies: any[];
    grpcAddress: string;
    /**
     * The gateway listeners the rate-limit filter goes on, one key each (`<namespace>|<pods>|<port
     * or *>`): two instances must not share one, or each would send every descriptor of the listener
     * to its own service.
     */
    listenerKeys: string[];
    /** The pre-limit's buckets and the limits it leaves to the service; undefined with `preLimit: false`. */
    preLimit?: PreLimitPlan;
    /** The HTTP filters' names on the gateway (the pre-limit's only when it has buckets). */
    httpFilterNames: { global: string; local?: string };
    /** The dashboard and alert rules (builders/monitoring.ts), from the same compiled limits. */
    monitoring: MonitoringPlan;
    /** The per-value side (its own service and Redis) with `CounterStore.Split` and both kinds of counters; undefined otherwise. */
    perValue?: PerValuePlan;
}

/** The `stat_prefix` of the gateway's pre-limit in the built filters (undefined: no pre-limit), read from what was built. */
export function preLimitStatPrefixOf(filters: { spec: EnvoyFilterSpec }[]): string | undefined {
    for (const f of filters) {
        for (const p of f.spec.configPatches as { patch?: { value?: { name?: string; typed_config?: { stat_prefix?: string } } } }[]) {
            // The shared layout's name, or the per-instance layout's `<name>/<namespace>/<service>`.
            const n = p.patch?.value?.name;
            if ((n === LOCAL_RATELIMIT_FILTER || n?.startsWith(`${LOCAL_RATELIMIT_FILTER}/`)) && typeof p.patch?.value?.typed_config?.stat_prefix === "string")
                return p.patch.value.typed_config.stat_prefix;
        }
    }
    return undefined;
}

/** Which GlobalRateLimit of this program holds each gateway listener (program, stack and key → component name). */
const LISTENERS = new Map<string, string>();

/** The name of another GlobalRateLimit of this program already on one of these listeners, or undefined. Exported for testing. */
export function claimListeners(component: string, keys: string[], scope: string = `${pulumi.getProject()}/${pulumi.getStack()}`): string | undefined {
    const taken = keys.map((k) => LISTENERS.get(`${scope}|${k}`)).find((holder) => holder !== undefined && holder !== component);
    if (taken !== undefined) return taken;
    for (const k of keys) LISTENERS.set(`${scope}|${k}`, component);
    return undefined;
}

/** The objects a GlobalRateLimit writes under names its arguments fix, as claim keys and in words. */
function ownNamedObjects(services: ServiceSettings[]): { keys: string[]; names: string } {
    const named = services.flatMap((service) => {
        const r = service.ratelimit;
        return [
            `Service/Deployment ${r.serviceName}`,
            `ConfigMap ${r.configName}`,
            ...(deploysRedis(service.redis) ? [`Deployment/Service ${r.redisName}`] : []),
        ];
    });
    const ns = services[0]!.ratelimit.namespace;
    return { keys: named.map((n) => `${ns}|${n}`), names: named.join(", ") };
}

/** Validates the arguments and computes every object (pure; exported for the tests and the renderer). */
export function planGlobalRateLimit(args: GlobalRateLimitArgs): GlobalRateLimitPlan {
    const a: Partial<GlobalRateLimitArgs> = args ?? {};
    const compiled = compileGlobalLimits({ rules: a.rules, perPath: a.perPath, pathKey: a.pathKey, ruleKey: a.ruleKey });
    const problems: Problem[] = [...unknownFieldProblems("GlobalRateLimit", args), ...compiled.problems];
    scopeProblems(a, problems);
    const gw = gatewayTargetOf(a.gateway, problems);
    const ns = a.namespace ?? DEFAULTS.ratelimitNamespace;
    problems.push(...dnsProblem("namespace", ns, "label"));
    const { timeout, secs } = failureProblems(a, problems);
    const svc = a.service ?? {};
    const { name, configName, grpcPort, replicas, logLevel } = serviceOptionsOf(svc, problems);
    const redis = redisConnectionOf(a.redis ?? {}, problems);
    accessPolicyProblems(a, problems);
    const layout = layoutOf(a, problems);
    const perInstance = layout === FilterLayout.PerInstance;
    const prefix = a.filterNamePrefix ?? (perInstance ? `${ns}-${name}` : DEFAULT_FILTER_PREFIX);
    // A derived prefix is made of checked names: only a given one can be wrong.
    if (a.filterNamePrefix !== undefined) problems.push(...dnsProblem("filterNamePrefix", prefix, "subdomain"));
    const service = serviceSettingsOf(a, { ns, name, configName, grpcPort, replicas, logLevel, redis, secs });
    const split = splitOf(a, compiled, problems);
    const fixed = split ? sideAsCompiled(split.fixed) : compiled;
    const host = `${name}.${ns}.svc.cluster.local`;
    // Computed once: the rate-limit filter's name is where its per-route config goes.
    const globalName = perInstance ? instanceFilterName(RATELIMIT_FILTER, ns, name) : RATELIMIT_FILTER;
    const localName = perInstance ? instanceFilterName(LOCAL_RATELIMIT_FILTER, ns, name) : LOCAL_RATELIMIT_FILTER;
    const domain = a.domain ?? "";
    const { filters, pre } = gatewayFilters(a, fixed, gw, problems, {
        prefix,
        perInstance,
        globalName,
        localName,
        domain,
        timeout,
        clusterName: `outbound|${grpcPort}||${host}`,
        authority: host,
    });
    const perValue = split ? perValuePlanOf(a, service, problems) : undefined;
    if (split && perValue) {
        const pvHost = `${perValue.service.ratelimit.serviceName}.${ns}.svc.cluster.local`;
        const pvDeny = a.perValueStore?.failureModeDeny ?? false;
        filters.push(
            // Routes resolved to the gateway's virtual hosts as the fixed side's are (their problems are reported there).
            ...perValueFilters(
                { ...split.perValue, routePatches: routePatchesFor(split.perValue.routePatches, [], gw, []) },
                {
                    target: gw.target,
                    ports: gw.ports,
                    virtualHosts: gw.all ? [""] : gw.virtualHosts,
                    perInstance,
                    filterName: perValue.httpFilterName,
                    domain,
                    failureModeDeny: pvDeny,
                    ...(a.statusOnError !== undefined ? { statusOnError: a.statusOnError } : {}),
                    timeout,
                    clusterName: `outbound|${grpcPort}||${pvHost}`,
                    authority: pvHost,
                    prefix: `${prefix}-per-value`,
                    namespace: gw.namespace,
                },
            ),
        );
        perValue.configYaml = configYaml(domain, split.perValue.configDescriptors);
        perValue.grpcAddress = `${pvHost}:${grpcPort}`;
    }
    const monitoring = monitoringPlanOf(
        a.monitoring,
        {
            instance: name,
            domain: a.domain ?? "",
            namespace: ns,
            serviceName: name,
            descriptors: split ? [...split.fixed.configDescriptors, ...split.perValue.configDescriptors] : compiled.configDescriptors,
            ...(perValue ? { perValueServiceName: perValue.service.ratelimit.serviceName } : {}),
            gatewayNamespace: gw.namespace,
            gatewayPodLabels: gw.podLabels,
            preLimitStatPrefix: preLimitStatPrefixOf(filters),
            failureModeDeny: (a.failureModeDeny ?? DEFAULTS.failureModeDeny) !== false,
            serviceMetrics: service.ratelimit.prometheus,
        },
        problems,
    );
    const config = configYaml(domain, fixed.configDescriptors);
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
        policies: problems.length ? [] : access.flatMap((t) => [...authorizationPolicyManifests(t), ...networkPolicyManifests(t)]),
        configYaml: config,
        filters,
        grpcAddress: `${host}:${grpcPort}`,
        preLimit: pre,
        monitoring,
        // Only the shared layout reads the listener's route rate_limits: per-instance filters never meet.
        listenerKeys: perInstance ? [] : (gw.all ? ["*"] : gw.ports.map(String)).map((port) => `${gw.namespace}|${JSON.stringify(gw.target)}|${port}`),
        httpFilterNames: { global: globalName, ...(pre?.buckets.length ? { local: localName } : {}) },
        ...(perValue ? { perValue } : {}),
    };
}

/** The limits of a descriptor tree: its entries with a `rate_limit`. */
function countLimits(descriptors: { rate_limit?: unknown; descriptors?: unknown[] }[]): number {
    return descriptors.reduce((n, d) => n + (d.rate_limit ? 1 : 0) + countLimits((d.descriptors ?? []) as typeof descriptors), 0);
}

/** The objects the rule list grows, each within the API server's bound (components/object-size.ts). */
function sizeProblems(
    a: Partial<GlobalRateLimitArgs>,
    o: {
        config: string;
        perValue?: PerValuePlan;
        filters: { name: string; spec: EnvoyFilterSpec }[];
        monitoring: MonitoringPlan;
        configName: string;
        limits: number;
    },
): Problem[] {
    const by = `with ${o.limits} limits,`;
    const rules = `(${(a.rules ?? []).length} rules)`;
    const fewer = "give fewer rules, or split them over GlobalRateLimit instances of their own (each its own domain and gateway listener)";
    return oversizeProblems([
        { what: `ConfigMap ${o.configName}`, text: o.config, key: "rules", value: rules, by, fix: fewer },
        ...(o.perValue ? [{ what: "the per-value ConfigMap", text: o.perValue.configYaml, key: "rules", value: rules, by, fix: fewer }] : []),
        ...o.filters.map((f) => ({ what: `EnvoyFilter ${f.name}`, text: JSON.stringify(f.spec), key: "rules", value: rules, by, fix: fewer })),
        ...(o.monitoring.dashboard
            ? [
                  {
                      what: `the dashboard ConfigMap ${o.monitoring.dashboard.name} (a panel row per limit)`,
                      text: o.monitoring.dashboard.json,
                      key: "monitoring.dashboard",
                      value: a.monitoring?.dashboard ?? true,
                      by,
                      fix: `set monitoring.dashboard to false (the service's metrics and the alert rules stay), or ${fewer}`,
                  },
              ]
            : []),
        ...(o.monitoring.rules
            ? [
                  {
                      what: "the PrometheusRule",
                      text: JSON.stringify(o.monitoring.rules.groups),
                      key: "monitoring.alerts",
                      value: a.monitoring?.alerts,
                      by,
                      fix: fewer,
                  },
              ]
            : []),
    ]);
}

/** A component that limits nothing, and a domain the service would refuse. */
function scopeProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): void {
    if (!(a.rules ?? []).length && !a.perPath) {
        problems.push({
            key: "rules",
            value: a.rules,
            problem: "no rule and no perPath: the component would limit nothing",
            fix: "give at least one rule (or perPath)",
        });
    }
    problems.push(...domainProblems(a.domain));
}

/*
 * The rules below are GlobalRateLimit's, each with its one message; the stack's config checks use
 * them too (mesh/settings.ts, which names the config key of each field).
 */

/** `domain`: non-empty, letters, digits, '_', '.', '-' (what the service accepts). */
export function domainProblems(domain: unknown): Problem[] {
    if (typeof domain === "string" && /^[A-Za-z0-9_.-]+$/.test(domain)) return [];
    const fixed =
        String(domain ?? "")
            .trim()
            .replace(/[^A-Za-z0-9_.-]+/g, "-") || "my-gateway";
    return [{ key: "domain", value: domain, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: `use "${fixed}"` }];
}

/** `service.grpcPort`: not one of the service's own HTTP and debug ports. */
export function grpcPortProblems(grpcPort: unknown): Problem[] {
    if (grpcPort !== DEFAULTS.ratelimitHttpPort && grpcPort !== DEFAULTS.ratelimitDebugPort) return [];
    return [
        {
            key: "service.grpcPort",
            value: grpcPort,
            problem: `collides with the service's HTTP (${DEFAULTS.ratelimitHttpPort}) or debug (${DEFAULTS.ratelimitDebugPort}) port`,
            fix: `use ${DEFAULTS.ratelimitGrpcPort}`,
        },
    ];
}

/** `service.redisPipelineWindow` (when given): a Go duration. */
export function pipelineWindowProblems(window: unknown): Problem[] {
    if (window === undefined || GO_DURATION.test(String(window))) return [];
    return [{ key: "service.redisPipelineWindow", value: window, problem: "must be a Go duration such as '0', '150us' or '2ms'", fix: 'use "0"' }];
}

/** `failureModeDeny` a boolean, and `timeout` (defaulted) a protobuf duration of at least 1 ms; `secs` undefined when it is not. */
function failureProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): { timeout: string; secs: number | undefined } {
    if (a.failureModeDeny !== undefined && typeof a.failureModeDeny !== "boolean") {
        problems.push({
            key: "failureModeDeny",
            value: a.failureModeDeny,
            problem: "must be a boolean: true refuses requests (HTTP 500) when the service cannot answer, false lets them through",
            fix: "use true (fail closed) or false (fail open)",
        });
    }
    const timeout = a.timeout ?? DEFAULTS.rateLimitTimeout;
    const secs = typeof timeout === "string" ? protoDurationSeconds(timeout) : undefined;
    if (secs === undefined || secs < 0.001) {
        problems.push({
            key: "timeout",
            value: timeout,
            problem: "must be a protobuf duration of at least 0.001s (seconds with an 's' suffix)",
            fix: 'use e.g. "10s" or "0.5s"',
        });
    }
    return { timeout, secs };
}

/** The service's options, defaults filled in (defaults.ts), each checked. */
function serviceOptionsOf(svc: RateLimitServiceOptionsArgs, problems: Problem[]) {
    const name = svc.name ?? DEFAULTS.ratelimitServiceName;
    const configName = svc.configName ?? DEFAULTS.configName;
    const grpcPort = svc.grpcPort ?? DEFAULTS.ratelimitGrpcPort;
    const replicas = svc.replicas ?? DEFAULTS.ratelimitReplicas;
    const logLevel: ServiceLogLevel = svc.logLevel ?? DEFAULTS.ratelimitLogLevel;
    problems.push(
        ...dnsProblem("service.name", name, "label"),
        ...dnsProblem("service.configName", configName, "subdomain"),
        ...portProblem("service.grpcPort", grpcPort),
    );
    problems.push(...grpcPortProblems(grpcPort));
    if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 100) {
        problems.push({ key: "service.replicas", value: replicas, problem: "must be a whole number from 1 to 100", fix: "use 2" });
    }
    if (!(Object.values(ServiceLogLevel) as string[]).includes(logLevel)) {
        problems.push({
            key: "service.logLevel",
            value: logLevel,
            problem: `must be one of ${Object.values(ServiceLogLevel).join(", ")}`,
            fix: "use ServiceLogLevel.Warn",
        });
    }
    const counts: [string, number | undefined, number, number][] = [
        ["redisPoolSize", svc.redisPoolSize, 1, 10_000],
        ["redisPipelineLimit", svc.redisPipelineLimit, 0, Number.MAX_SAFE_INTEGER],
        ["localCacheSizeInBytes", svc.localCacheSizeInBytes, 0, Number.MAX_SAFE_INTEGER],
    ];
    for (const [f, v, min, max] of counts) {
        if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > max)) {
            problems.push({
                key: `service.${f}`,
                value: v,
                problem: `must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : " up"}`,
                fix: `omit it for ${DEFAULTS[f as "redisPoolSize" | "redisPipelineLimit" | "localCacheSizeInBytes"]}`,
            });
        }
    }
    problems.push(...pipelineWindowProblems(svc.redisPipelineWindow));
    if (svc.image !== undefined && (typeof svc.image !== "string" || !svc.image.trim())) {
        problems.push({
            key: "service.image",
            value: svc.image,
            problem: "must be an image reference",
            fix: `omit it for ${DEFAULTS.ratelimitImage}`,
        });
    }
    return { name, configName, grpcPort, replicas, logLevel };
}

/** `accessPolicy.gatewayPrincipal` an Istio principal. */
function accessPolicyProblems(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): void {
    if (a.accessPolicy !== undefined) {
        const p = typeof a.accessPolicy === "object" && a.accessPolicy !== null ? a.accessPolicy.gatewayPrincipal : undefined;
        if (typeof p !== "string" || !parsePrincipal(p)) {
            problems.push({ key: "accessPolicy.gatewayPrincipal", value: p, problem: PRINCIPAL_PROBLEM, fix: `use "${suggestedPrincipal(p)}"` });
        }
    }
}

/** The filter layout (defaulted, checked) and `statusOnError` (a known status, only when failing closed). */
function layoutOf(a: Partial<GlobalRateLimitArgs>, problems: Problem[]): FilterLayout {
    const layout = a.filterLayout ?? FilterLayout.PerInstance;
    if (!(Object.values(FilterLayout) as unknown[]).includes(layout)) {
        problems.push({
            key: "filterLayout",
            value: layout,
            problem: `must be one of ${Object.values(FilterLayout).join(", ")}`,
            fix: `use FilterLayout.PerInstance (Istio ${PER_INSTANCE_MIN_ISTIO} or later), or FilterLayout.Shared on Istio 1.24`,
        });
    }
    if (a.statusOnError !== undefined && !(Object.values(ErrorStatus) as unknown[]).includes(a.statusOnError)) {
        problems.push({
            key: "statusOnError",
            value: a.statusOnError,
            problem: `must be one of ${Object.values(ErrorStatus).join(", ")}`,
            fix: "use ErrorStatus.ServiceUnavailable, or omit it for Envoy's 500",
        });
    } else if (a.statusOnError !== undefined && a.failureModeDeny === false) {
        problems.push({
            key: "statusOnError",
            value: a.statusOnError,
            problem: "has no effect with failureModeDeny: false (the request passes when the service cannot answer)",
            fix: "omit statusOnError, or set failureModeDeny: true",
        });
    }
    return layout;
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
        secs: number | undefined;
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
            image: svc.image ?? base.image,
            redisPoolSize: svc.redisPoolSize ?? base.redisPoolSize,
            redisPipelineWindow: svc.redisPipelineWindow ?? base.redisPipelineWindow,
            redisPipelineLimit: svc.redisPipelineLimit ?? base.redisPipelineLimit,
            localCacheSizeInBytes: svc.localCacheSizeInBytes ?? base.localCacheSizeInBytes,
            prometheus: svc.prometheus ?? base.prometheus,
            shadowMode: svc.shadowMode ?? base.shadowMode,
            redisImage: a.redis?.image ?? base.redisImage,
            redisMaxMemory: a.redis?.maxMemory ?? base.redisMaxMemory,
            redisName: base.redisName,
            redisEvictionPolicy: base.redisEvictionPolicy,
            // The service gives up on a hung Redis while the gateway still waits for its answer.
            redisTimeout: redisTimeoutFor(secs ?? 10),
        },
    };
}

/** Where and how the gateway's filters go (computed once by the plan). */
interface FilterPlacement {
    prefix: string;
    perInstance: boolean;
    globalName: string;
    localName: string;
    domain: string;
    timeout: string;
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
    const { prefix, perInstance, globalName, localName, domain } = f;
    const svc = a.service ?? {};
    const mode = a.pathKey ?? PathKeyMode.UrlPath;
    const routePatches = routePatchesFor(compiled.routePatches, a.rules ?? [], gw, problems);
    const vhostNames = gw.all ? [""] : gw.virtualHosts;
    const filters: GlobalRateLimitPlan["filters"] = [
        {
            name: prefix,
            namespace: gw.namespace,
            spec: ratelimitHttpFilter({
                target: gw.target,
                ports: gw.ports,
                domain,
                failureModeDeny: (a.failureModeDeny ?? DEFAULTS.failureModeDeny) !== false,
                timeout: f.timeout,
                clusterName: f.clusterName,
                authority: f.authority,
                ...(perInstance ? { filterName: globalName, stage: PER_INSTANCE_STAGE } : {}),
                ...(a.statusOnError !== undefined ? { statusOnError: a.statusOnError } : {}),
            }),
        },
    ];
    if (compiled.vhostRateLimits.length) {
        filters.push({
            name: `${prefix}-svc`,
            namespace: gw.namespace,
            spec: perInstance
                ? vhostPerFilterRateLimits(gw.target, globalName, domain, vhostNames, compiled.vhostRateLimits)
                : vhostRateLimitsFilter(gw.target, vhostNames, compiled.vhostRateLimits),
        });
    }
    if (a.preLimit !== undefined && typeof a.preLimit !== "boolean") {
        problems.push({
            key: "preLimit",
            value: a.preLimit,
            problem: "must be a boolean: true puts a local pre-limit before the rate-limit filter, false sends every request to the service",
            fix: "use true (the default) or false",
        });
    }
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
    return { filters, pre };
}

/** The service settings at the components' defaults (defaults.ts; the stack config prints the same values). */
function serviceDefaults(): RateLimitServiceSettings {
    return {
        namespace: DEFAULTS.ratelimitNamespace,
        serviceName: DEFAULTS.ratelimitServiceName,
        grpcPort: DEFAULTS.ratelimitGrpcPort,
        httpPort: DEFAULTS.ratelimitHttpPort,
        debugPort: DEFAULTS.ratelimitDebugPort,
        configName: DEFAULTS.configName,
        image: DEFAULTS.ratelimitImage,
        replicas: DEFAULTS.ratelimitReplicas,
        logLevel: DEFAULTS.ratelimitLogLevel,
        redisPoolSize: DEFAULTS.redisPoolSize,
        redisPipelineWindow: DEFAULTS.redisPipelineWindow,
        redisPipelineLimit: DEFAULTS.redisPipelineLimit,
        localCacheSizeInBytes: DEFAULTS.localCacheSizeInBytes,
        prometheus: DEFAULTS.ratelimitPrometheus,
        shadowMode: DEFAULTS.shadowMode,
        redisImage: DEFAULTS.redisImage,
        redisMaxMemory: DEFAULTS.redisMaxMemory,
        redisName: REDIS_NAME,
        redisEvictionPolicy: REDIS_EVICTION_POLICY,
        redisTimeout: redisTimeoutFor(protoDurationSeconds(DEFAULTS.rateLimitTimeout)!),
    };
}

export class GlobalRateLimit extends pulumi.ComponentResource {
    /** gRPC address of the rate-limit service (what the gateway filter calls). */
    public readonly grpcAddress: string;
    /** The rate-limit domain. */
    public readonly domain: string;
    /** The service's `config.yaml`, derived from the rules. */
    public readonly configYaml: string;
    /** Names of the EnvoyFilters created. */
    public readonly filterNames: string[];
    /** Name of the rate-limit HTTP filter on the gateway (where its per-route config is keyed). */
    public readonly httpFilterName: string;
    /** What the service's `REDIS_URL` says: the Redis, Sentinels or Cluster seeds it uses. */
    public readonly redisUrl: string;
    /** gRPC address of the per-value counters' service (`counterStore: split` with both kinds of counters); `""` without one. */
    public readonly perValueGrpcAddress: string;
    /** That service's `config.yaml`; `""` without one. */
    public readonly perValueConfigYaml: string;

    /** `opts.plan`: the `planGlobalRateLimit` of these same `args`, when the caller has it already. */
    constructor(name: string, args: GlobalRateLimitArgs, opts?: PlannedOptions<GlobalRateLimitPlan>) {
        // Validate before anything is registered: a bad rule creates nothing.
        const { plan, opts: options } = planOrCompute(`GlobalRateLimit ${name}`, args, opts, planGlobalRateLimit);
        if (plan.problems.length) throw argsError(`GlobalRateLimit ${name}`, plan.problems);
        // One rate-limit filter per gateway listener: a second instance there would read the first's
        // descriptors too (Envoy's filter sends every rate_limits entry of the route to its service).
        const holder = claimListeners(name, plan.listenerKeys);
        if (holder !== undefined) {
            throw argsError(`GlobalRateLimit ${name}`, [
                {
                    key: "gateway",
                    value: args.gateway,
                    problem: `the same gateway pods and listener port as GlobalRateLimit ${holder}, both with filterLayout "shared": two rate-limit filters on one listener would each send every descriptor of its routes to their own service`,
                    fix: `use filterLayout: FilterLayout.PerInstance (the default; Istio ${PER_INSTANCE_MIN_ISTIO} or later) on both, or put both sets of rules into GlobalRateLimit ${holder}, or target another gateway or port`,
                },
            ]);
        }
        // Objects under fixed or argument-given names in its namespace: two instances of one program
        // there would write the same objects (the first's would be overwritten, and destroyed with the second).
        const objects = ownNamedObjects([plan.service, ...(plan.perValue ? [plan.perValue.service] : [])]);
        const sharer = claimListeners(name, objects.keys, `${pulumi.getProject()}/${pulumi.getStack()}|objects`);
        if (sharer !== undefined) {
            throw argsError(`GlobalRateLimit ${name}`, [
                {
                    key: "namespace",
                    value: plan.service.ratelimit.namespace,
                    problem: `GlobalRateLimit ${sharer} of this program already writes ${objects.names} in namespace ${plan.service.ratelimit.namespace}: two instances there would overwrite each other's service, config and Redis`,
                    fix: `give this instance a namespace of its own (namespace), or service.name and service.configName of its own with an existing Redis (redis.address); or put both sets of rules into GlobalRateLimit ${sharer}`,
                },
            ]);
        }
        super("mesh-ratelimit:index:GlobalRateLimit", name, {}, options);

        // The access policies first: no pod of the service or Redis runs a moment without them.
        const policies: pulumi.Resource[] = plan.policies.map((m) =>
            m.kind === "NetworkPolicy"
                ? new k8s.networking.v1.NetworkPolicy(`${name}-${m.metadata.name}`, m, { parent: this })
                : new k8s.apiextensions.CustomResource(`${name}-${m.metadata.name}`, m, { parent: this }),
        );
        // Children are named after the component, so any number of instances coexist in one program.
        const side = (suffix: string, settings: ServiceSettings, configText: string) => {
            const redis = deploysRedis(settings.redis) ? new Redis(`${name}${suffix}-redis`, { settings }, { parent: this, dependsOn: policies }) : undefined;
            // The service crash-loops while Redis is unreachable, so Redis comes first.
            const service = new RateLimitService(
                `${name}${suffix}-ratelimit`,
                { settings, redisAddress: redis?.address ?? "", configYaml: configText },
                { parent: this, dependsOn: [...policies, ...(redis ? [redis] : [])] },
            );
            return { service, address: redis?.address ?? "" };
        };
        const { service, address: inClusterAddress } = side("", plan.service, plan.configYaml);
        const services: pulumi.Resource[] = [service];
        if (plan.perValue) services.push(side("-per-value", plan.perValue.service, plan.perValue.configYaml).service);
        // With failure_mode_deny the gateway refuses everything until the service answers: filters last.
        const labels = stackLabels("global-ratelimit");
        for (const f of plan.filters) {
            new EnvoyFilter(
                `${name}-${f.name}`,
                { metadata: { name: f.name, namespace: f.namespace, labels }, spec: f.spec },
                { parent: this, dependsOn: services },
            );
        }
        if (plan.monitoring.dashboard || plan.monitoring.rules) {
            new RateLimitMonitoring(`${name}-monitoring`, { plan: plan.monitoring }, { parent: this, dependsOn: [service] });
        }
        this.grpcAddress = plan.grpcAddress;
        this.domain = args.domain;
        this.configYaml = plan.configYaml;
        this.filterNames = plan.filters.map((f) => f.name);
        this.httpFilterName = plan.httpFilterNames.global;
        this.redisUrl = redisUrl(plan.service.redis, inClusterAddress);
        this.perValueGrpcAddress = plan.perValue?.grpcAddress ?? "";
        this.perValueConfigYaml = plan.perValue?.configYaml ?? "";
        this.registerOutputs({
            perValueGrpcAddress: this.perValueGrpcAddress,
            perValueConfigYaml: this.perValueConfigYaml,
            grpcAddress: this.grpcAddress,
            domain: this.domain,
            configYaml: this.configYaml,
            filterNames: this.filterNames,
            httpFilterName: this.httpFilterName,
            redisUrl: this.redisUrl,
        });
    }
}
