/**
 * GlobalRateLimit: global limits for any Istio gateway, from typed rules (components/rules.ts).
 * Deploys the envoyproxy/ratelimit service (ConfigMap, Deployment, Service, PodDisruptionBudget),
 * Redis (or uses an existing one) and the gateway's EnvoyFilters (the rate-limit HTTP filter, the
 * virtual-host actions and the route actions), all derived from the same rules.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AccessTarget, PRINCIPAL_PROBLEM, authorizationPolicyManifests, networkPolicyManifests, parsePrincipal, suggestedPrincipal } from "./access-policies";
import { stackLabels } from "./common";
import { EnvoyFilter } from "./crds";
import { DEFAULTS } from "./defaults";
import { DEFAULT_REDIS_MAXMEMORY, redisMaxMemoryProblem, redisTimeoutFor } from "./failure-bounds";
import { EnvoyFilterSpec, FilterTarget, GATEWAY_NAME_LABEL, ratelimitHttpFilter, routeRateLimitsFilter, vhostRateLimitsFilter } from "./envoy-filters";
import { configYaml } from "./ratelimit-config";
import { RateLimitService } from "./ratelimit-service";
import { Redis } from "./redis";
import {
    RedisConnection,
    RedisMode,
    SECRET_DATA_KEY_PROBLEM,
    SENTINEL_MASTER_PROBLEM,
    SecretKey,
    cleanSentinelMaster,
    deploysRedis,
    isHostPort,
    isSecretDataKey,
    redisUrl,
} from "./redis-connection";
import { CompiledLimits, PathKeyMode, PerPathLimitsArgs, RateLimitRuleArgs, RoutePatch, RuleProblem, compileGlobalLimits, formatRuleProblems } from "./rules";
import { LABEL_KEY, LABEL_VALUE } from "./dns-names";
import { GO_DURATION, StackSettings, dnsNameProblem, isDnsName, isGatewayHost, protoDurationSeconds, suggestedDnsName } from "./settings";

/** `LOG_LEVEL` of the rate-limit service. */
export enum ServiceLogLevel {
    Debug = "debug",
    Info = "info",
    Warn = "warn",
    Error = "error",
}

/** The gateway the limits apply to: its pods, its namespace, the virtual hosts the rules may act on. */
export interface GatewayTargetArgs {
    /**
     * Labels of the gateway's pods, e.g. `{ istio: "ingressgateway" }` (a gateway deployment such as
     * Istio's default one or the istio/gateway Helm chart's). Give this or `gatewayApiName`.
     */
    selector?: Record<string, string>;
    /**
     * Name of a Kubernetes Gateway API `Gateway` (class `istio`) in `namespace`: the filters then
     * target it (`targetRefs`) and reach exactly its pods, whatever other gateways' labels are. Give
     * this or `selector`. Defaults to none.
     */
    gatewayApiName?: string;
    /**
     * Namespace of the gateway's pods, where the EnvoyFilters are created. In Istio's root namespace
     * (`istio-system` by default) a selector-based filter applies to pods with those labels in
     * **every** namespace: give the gateway pods a label of their own, or use `gatewayApiName`.
     * Required with `gatewayApiName` (the Gateway's namespace). Defaults to `istio-system`.
     */
    namespace?: string;
    /**
     * Istio's names of the gateway's virtual hosts the rules act on, `<host>:<port>` as Istio builds
     * them from your Gateway and VirtualService/HTTPRoute hosts: `shop.example.com:80`, or `*:8080`
     * for host `*`. Only these hosts are limited; the rate-limit filter goes on their ports' listeners
     * only, so other teams' hosts on the same gateway are never limited and never see this service's
     * failures. A route rule's `virtualHost` must be one of them; a route rule without one applies on
     * each. Required unless `allVirtualHosts` is true.
     */
    virtualHosts?: string[];
    /**
     * Act on **every** virtual host of the gateway (Istio's empty name `""`) and put the rate-limit
     * filter on every listener: other teams' hosts on the same gateway are then limited too, and fail
     * with HTTP 500 when the service is down (`failureModeDeny`). Only for a gateway you have to
     * yourself. Defaults to `false`.
     */
    allVirtualHosts?: boolean;
}

/** Which Redis the service counts in. */
export enum RedisModeName {
    /** A single Redis deployed by the component (password generated, kept in Secret `redis-auth`). */
    InCluster = "in-cluster",
    /** One Redis that already exists (`addresses`: one `host:port`). */
    External = "external",
    /** Redis Sentinel (`addresses`: the Sentinels; `sentinelMaster`: the master's name). */
    Sentinel = "sentinel",
    /** Redis Cluster (`addresses`: seed nodes). */
    Cluster = "cluster",
}

/** A key of a Kubernetes Secret. */
export interface SecretKeyArgs {
    /** The Secret's name. */
    name: string;
    /** The key inside it. Defaults to `password`. */
    key?: string;
}

/** Redis for the counters. */
export interface RedisOptionsArgs {
    /** Deploy one, or use an existing Redis, Sentinel or Cluster. Defaults to `RedisModeName.InCluster`. */
    mode?: RedisModeName;
    /** Image of the Redis the component deploys (in-cluster only). Defaults to `docker.io/library/redis:7.0.15-alpine`. */
    image?: string;
    /**
     * `maxmemory` of the Redis the component deploys (in-cluster only), with eviction policy
     * `volatile-ttl` (only counters, which all expire, are evicted). At most `192mb` (75 % of the
     * container's 256Mi limit). Defaults to `160mb`.
     */
    maxMemory?: string;
    /** `host:port` of the existing Redis, of the Sentinels, or of the Cluster's seed nodes. Defaults to none (in-cluster). */
    addresses?: string[];
    /** Sentinel: the master's name as the Sentinels know it. */
    sentinelMaster?: string;
    /** Secret (in the service's namespace) with the Redis password. Defaults to none (no AUTH) for an existing Redis. */
    passwordSecret?: SecretKeyArgs;
    /** Sentinel: Secret with the Sentinels' own password. Defaults to none. */
    sentinelPasswordSecret?: SecretKeyArgs;
    /** Connect with TLS. Defaults to `false`. */
    tls?: boolean;
    /** Secret whose `ca.crt` verifies the server (TLS). Defaults to the system roots. */
    tlsCaSecret?: string;
}

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
    /** Timeout of the gateway's call to the service (protobuf duration). Defaults to `10s`. */
    timeout?: string;
    /** The rate-limit service. Defaults as documented on each field. */
    service?: RateLimitServiceOptionsArgs;
    /** Redis. Defaults to one deployed by the component. */
    redis?: RedisOptionsArgs;
    /**
     * Prefix of the EnvoyFilter names: `<prefix>` (HTTP filter), `<prefix>-svc` (virtual-host
     * actions), `<prefix>-svc-api` (route actions). Defaults to `filter-ratelimit`.
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

/** Label-selector problems, shared by the components. Exported for testing. */
export function selectorProblems(field: string, selector: unknown): RuleProblem[] {
    if (typeof selector !== "object" || selector === null || Array.isArray(selector) || Object.keys(selector).length === 0) {
        return [{ field, value: selector, problem: "must name at least one pod label", fix: 'give e.g. { istio: "ingressgateway" }' }];
    }
    return Object.entries(selector as Record<string, unknown>)
        .filter(([k, v]) => !LABEL_KEY.test(k) || typeof v !== "string" || !LABEL_VALUE.test(v) || v.length > 63)
        .map(([k, v]) => ({
            field: `${field}.${k}`,
            value: v,
            problem: "is not a valid label key and value",
            fix: "use Kubernetes label syntax (letters, digits, '-', '_', '.')",
        }));
}

/** A DNS name problem, or nothing. Exported for testing. */
export function dnsProblem(field: string, value: unknown, kind: "label" | "subdomain"): RuleProblem[] {
    return isDnsName(value, kind) ? [] : [{ field, value, problem: dnsNameProblem(kind), fix: `use "${suggestedDnsName(value, kind)}"` }];
}

export function portProblem(field: string, value: unknown): RuleProblem[] {
    return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= 65535
        ? []
        : [{ field, value, problem: "must be a port number from 1 to 65535", fix: "use e.g. 8081" }];
}

/** Everything the component creates, computed and validated before any resource is registered. */
export interface GlobalRateLimitPlan {
    problems: RuleProblem[];
    compiled: CompiledLimits;
    /** Settings of the service and Redis (internal components), defaults filled in. */
    service: Pick<StackSettings, "ratelimit" | "redis" | "awaitRollout">;
    configYaml: string;
    filters: { name: string; namespace: string; spec: EnvoyFilterSpec }[];
    /** The AuthorizationPolicies and NetworkPolicies of `accessPolicy` (none without it). */
    policies: any[];
    grpcAddress: string;
}

/** Validates the arguments and computes every object (pure; exported for the tests and the renderer). */
export function planGlobalRateLimit(args: GlobalRateLimitArgs): GlobalRateLimitPlan {
    const a: Partial<GlobalRateLimitArgs> = args ?? {};
    const compiled = compileGlobalLimits({ rules: a.rules, perPath: a.perPath, pathKey: a.pathKey, ruleKey: a.ruleKey });
    const problems: RuleProblem[] = [...compiled.problems];
    if (!(a.rules ?? []).length && !a.perPath) {
        problems.push({
            field: "rules",
            value: a.rules,
            problem: "no rule and no perPath: the component would limit nothing",
            fix: "give at least one rule (or perPath)",
        });
    }
    if (typeof a.domain !== "string" || !/^[A-Za-z0-9_.-]+$/.test(a.domain)) {
        problems.push({
            field: "domain",
            value: a.domain,
            problem: "must be non-empty and use only letters, digits, '_', '.', '-'",
            fix: `use "${
                String(a.domain ?? "")
                    .trim()
                    .replace(/[^A-Za-z0-9_.-]+/g, "-") || "my-gateway"
            }"`,
        });
    }
    const gw = gatewayTargetOf(a.gateway, problems);
    const ns = a.namespace ?? "default";
    problems.push(...dnsProblem("namespace", ns, "label"));
    if (a.failureModeDeny !== undefined && typeof a.failureModeDeny !== "boolean") {
        problems.push({
            field: "failureModeDeny",
            value: a.failureModeDeny,
            problem: "must be a boolean: true refuses requests (HTTP 500) when the service cannot answer, false lets them through",
            fix: "use true (fail closed) or false (fail open)",
        });
    }
    const timeout = a.timeout ?? DEFAULTS.rateLimitTimeout;
    const secs = typeof timeout === "string" ? protoDurationSeconds(timeout) : undefined;
    if (secs === undefined || secs < 0.001) {
        problems.push({
            field: "timeout",
            value: timeout,
            problem: "must be a protobuf duration of at least 0.001s (seconds with an 's' suffix)",
            fix: 'use e.g. "10s" or "0.5s"',
        });
    }
    const svc = a.service ?? {};
    const name = svc.name ?? DEFAULTS.ratelimitServiceName;
    const configName = svc.configName ?? DEFAULTS.configName;
    const grpcPort = svc.grpcPort ?? DEFAULTS.ratelimitGrpcPort;
    const replicas = svc.replicas ?? DEFAULTS.ratelimitReplicas;
    const logLevel = svc.logLevel ?? (DEFAULTS.ratelimitLogLevel as ServiceLogLevel);
    problems.push(
        ...dnsProblem("service.name", name, "label"),
        ...dnsProblem("service.configName", configName, "subdomain"),
        ...portProblem("service.grpcPort", grpcPort),
    );
    if (grpcPort === 8080 || grpcPort === 6070) {
        problems.push({ field: "service.grpcPort", value: grpcPort, problem: "collides with the service's HTTP (8080) or debug (6070) port", fix: "use 8081" });
    }
    if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 100) {
        problems.push({ field: "service.replicas", value: replicas, problem: "must be a whole number from 1 to 100", fix: "use 2" });
    }
    if (!(Object.values(ServiceLogLevel) as string[]).includes(logLevel)) {
        problems.push({
            field: "service.logLevel",
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
                field: `service.${f}`,
                value: v,
                problem: `must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : " up"}`,
                fix: `omit it for ${DEFAULTS[f as "redisPoolSize" | "redisPipelineLimit" | "localCacheSizeInBytes"]}`,
            });
        }
    }
    if (svc.redisPipelineWindow !== undefined && !GO_DURATION.test(String(svc.redisPipelineWindow))) {
        problems.push({
            field: "service.redisPipelineWindow",
            value: svc.redisPipelineWindow,
            problem: "must be a Go duration such as '0', '150us' or '2ms'",
            fix: 'use "0"',
        });
    }
    if (svc.image !== undefined && (typeof svc.image !== "string" || !svc.image.trim())) {
        problems.push({
            field: "service.image",
            value: svc.image,
            problem: "must be an image reference",
            fix: `omit it for ${DEFAULTS.ratelimitImage}`,
        });
    }
    const redis = redisConnectionOf(a.redis ?? {}, problems);
    if (a.accessPolicy !== undefined) {
        const p = typeof a.accessPolicy === "object" && a.accessPolicy !== null ? a.accessPolicy.gatewayPrincipal : undefined;
        if (typeof p !== "string" || !parsePrincipal(p)) {
            problems.push({ field: "accessPolicy.gatewayPrincipal", value: p, problem: PRINCIPAL_PROBLEM, fix: `use "${suggestedPrincipal(p)}"` });
        }
    }
    const prefix = a.filterNamePrefix ?? DEFAULT_FILTER_PREFIX;
    problems.push(...dnsProblem("filterNamePrefix", prefix, "subdomain"));

    // Every other service setting keeps the stack's documented default.
    const base = serviceDefaults();
    const service: GlobalRateLimitPlan["service"] = {
        awaitRollout: a.awaitRollout ?? true,
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
            // The service gives up on a hung Redis while the gateway still waits for its answer.
            redisTimeout: redisTimeoutFor(secs ?? 10),
        },
    };
    const host = `${name}.${ns}.svc.cluster.local`;
    const mode = a.pathKey ?? PathKeyMode.UrlPath;
    const routePatches = routePatchesFor(compiled.routePatches, a.rules ?? [], gw, problems);
    const filters: GlobalRateLimitPlan["filters"] = [
        {
            name: prefix,
            namespace: gw.namespace,
            spec: ratelimitHttpFilter({
                target: gw.target,
                ports: gw.ports,
                domain: a.domain ?? "",
                failureModeDeny: a.failureModeDeny === false ? false : true,
                timeout,
                clusterName: `outbound|${grpcPort}||${host}`,
                authority: host,
            }),
        },
    ];
    if (compiled.vhostRateLimits.length) {
        filters.push({
            name: `${prefix}-svc`,
            namespace: gw.namespace,
            spec: vhostRateLimitsFilter(gw.target, gw.all ? [""] : gw.virtualHosts, compiled.vhostRateLimits),
        });
    }
    const routes = routeRateLimitsFilter(gw.target, routePatches, mode);
    if (routes) filters.push({ name: `${prefix}-svc-api`, namespace: gw.namespace, spec: routes });
    const access: AccessTarget | undefined = a.accessPolicy
        ? { ...service, gatewayPrincipal: a.accessPolicy.gatewayPrincipal, gatewaySelector: gw.podLabels }
        : undefined;
    return {
        problems,
        compiled,
        service,
        policies: access && !problems.length ? [...authorizationPolicyManifests(access), ...networkPolicyManifests(access)] : [],
        configYaml: configYaml(a.domain ?? "", compiled.configDescriptors),
        filters,
        grpcAddress: `${host}:${grpcPort}`,
    };
}

/** The gateway target, checked: which pods, where, which virtual hosts and listener ports. */
interface ResolvedGateway {
    target: FilterTarget;
    /** Labels of the gateway's pods (the NetworkPolicy admits them). */
    podLabels: Record<string, string>;
    namespace: string;
    virtualHosts: string[];
    all: boolean;
    /** Listener ports of the rate-limit filter (empty: every listener). */
    ports: number[];
}

/** `<host>:<port>` with host `*`, `*.<domain>` or a DNS name, port 1..65535. Exported for testing. */
export function isVirtualHostName(v: unknown): v is string {
    if (typeof v !== "string") return false;
    const m = /^(.+):(\d{1,5})$/.exec(v);
    return !!m && isGatewayHost(m[1]!) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

function gatewayTargetOf(g: GatewayTargetArgs | undefined, problems: RuleProblem[]): ResolvedGateway {
    const none: ResolvedGateway = { target: { selector: {} }, podLabels: {}, namespace: "istio-system", virtualHosts: [], all: false, ports: [] };
    if (typeof g !== "object" || g === null) {
        problems.push({
            field: "gateway",
            value: g,
            problem: "is required",
            fix: 'give { selector: { istio: "ingressgateway" }, virtualHosts: ["shop.example.com:80"] }',
        });
        return none;
    }
    let target: FilterTarget = { selector: {} };
    let podLabels: Record<string, string> = {};
    if (g.gatewayApiName !== undefined && g.selector !== undefined) {
        problems.push({
            field: "gateway.gatewayApiName",
            value: g.gatewayApiName,
            problem: "and gateway.selector are both given; the filters target one or the other",
            fix: "remove gateway.selector (a Gateway API Gateway is targeted by name) or gateway.gatewayApiName",
        });
    } else if (g.gatewayApiName !== undefined) {
        problems.push(...dnsProblem("gateway.gatewayApiName", g.gatewayApiName, "subdomain"));
        if (g.namespace === undefined)
            problems.push({
                field: "gateway.namespace",
                value: undefined,
                problem: "is required with gateway.gatewayApiName: the filters must live in the Gateway's namespace",
                fix: 'give the Gateway\'s namespace, e.g. "shop"',
            });
        target = { gatewayApiName: String(g.gatewayApiName) };
        // Istio labels the pods of a Gateway API Gateway with its name.
        podLabels = { [GATEWAY_NAME_LABEL]: String(g.gatewayApiName) };
    } else {
        problems.push(...selectorProblems("gateway.selector", g.selector));
        target = { selector: (g.selector ?? {}) as Record<string, string> };
        podLabels = target.selector;
    }
    if (g.namespace !== undefined) problems.push(...dnsProblem("gateway.namespace", g.namespace, "label"));
    if (g.allVirtualHosts !== undefined && typeof g.allVirtualHosts !== "boolean") {
        problems.push({
            field: "gateway.allVirtualHosts",
            value: g.allVirtualHosts,
            problem: "must be a boolean",
            fix: "use false (only gateway.virtualHosts) or true (every host of the gateway)",
        });
    }
    const all = g.allVirtualHosts === true;
    let virtualHosts: string[] = [];
    if (g.virtualHosts != null && !Array.isArray(g.virtualHosts)) {
        problems.push({
            field: "gateway.virtualHosts",
            value: g.virtualHosts,
            problem: "must be a list of Istio's virtual host names <host>:<port>",
            fix: 'give e.g. ["shop.example.com:80"]',
        });
    } else {
        virtualHosts = g.virtualHosts ?? [];
        virtualHosts.forEach((v, i) => {
            if (!isVirtualHostName(v)) {
                problems.push({
                    field: `gateway.virtualHosts[${i}]`,
                    value: v,
                    problem: "must be Istio's virtual host name <host>:<port> (host '*', '*.<domain>' or a DNS name; the port of the Gateway server)",
                    fix: `use e.g. "${typeof v === "string" && isGatewayHost(v) ? `${v}:80` : "shop.example.com:80"}" (Istio silently ignores a patch that names no virtual host)`,
                });
            } else if (virtualHosts.indexOf(v) !== i) {
                problems.push({ field: `gateway.virtualHosts[${i}]`, value: v, problem: "appears twice", fix: "remove one of the two entries" });
            }
        });
        if (!virtualHosts.length && !all) {
            problems.push({
                field: "gateway.virtualHosts",
                value: g.virtualHosts,
                problem: "must name the gateway's virtual hosts to limit: without them the limits would reach every host on the gateway, other teams' included",
                fix: 'give e.g. ["shop.example.com:80"] (Istio\'s <host>:<port> for each host of your Gateway server), or set gateway.allVirtualHosts: true for a gateway you have to yourself',
            });
        }
    }
    const valid = virtualHosts.filter(isVirtualHostName);
    const ports = all ? [] : [...new Set(valid.map((v) => Number(v.slice(v.lastIndexOf(":") + 1))))];
    return { target, podLabels, namespace: g.namespace ?? "istio-system", virtualHosts: valid, all, ports };
}

/**
 * Route patches on named virtual hosts: a route rule's `virtualHost` must be one the gateway args
 * list; a route rule without one goes on each of them (on `""`, every virtual host, only when
 * `allVirtualHosts` is set and no list is given).
 */
function routePatchesFor(patches: RoutePatch[], rules: RateLimitRuleArgs[], gw: ResolvedGateway, problems: RuleProblem[]): RoutePatch[] {
    (Array.isArray(rules) ? rules : []).forEach((r, i) => {
        const vh = r?.route?.virtualHost;
        if (vh === undefined || !gw.virtualHosts.length) return;
        if (!gw.virtualHosts.includes(vh)) {
            problems.push({
                field: `rules[${i}].route.virtualHost`,
                value: vh,
                problem: `is not one of gateway.virtualHosts (${gw.virtualHosts.join(", ")}): Istio would silently ignore the patch, or it would act on a host these arguments do not vouch for`,
                fix: `use one of ${gw.virtualHosts.map((v) => JSON.stringify(v)).join(", ")}, or add it to gateway.virtualHosts`,
            });
        }
    });
    const out: RoutePatch[] = [];
    for (const p of patches) {
        if (p.virtualHost !== "") out.push(p);
        else if (gw.virtualHosts.length) for (const v of gw.virtualHosts) out.push({ ...p, virtualHost: v });
        else out.push(p);
    }
    return out;
}

/** The typed Redis choice → the connection the service environment is built from (components/redis-connection.ts). */
function redisConnectionOf(r: RedisOptionsArgs, problems: RuleProblem[]): RedisConnection {
    const mode = r.mode ?? RedisModeName.InCluster;
    const knownMode = (Object.values(RedisModeName) as string[]).includes(mode);
    if (!knownMode) {
        problems.push({
            field: "redis.mode",
            value: mode,
            problem: `must be one of ${Object.values(RedisModeName).join(", ")}`,
            fix: "use RedisModeName.InCluster",
        });
    }
    const addresses: string[] = Array.isArray(r.addresses) ? r.addresses : [];
    const key = (k: SecretKeyArgs | undefined, field: string): SecretKey | undefined => {
        if (!k) return undefined;
        problems.push(...dnsProblem(`${field}.name`, k.name, "subdomain"));
        const secretKey = k.key ?? "password";
        if (!isSecretDataKey(secretKey)) {
            problems.push({ field: `${field}.key`, value: k.key, problem: SECRET_DATA_KEY_PROBLEM, fix: 'use e.g. "password"' });
        }
        return { name: k.name, key: secretKey };
    };
    if (!knownMode) {
        // The other Redis checks depend on the mode; they would only add noise to the mode's problem.
    } else if (mode === RedisModeName.InCluster) {
        if (r.maxMemory !== undefined) {
            const p = redisMaxMemoryProblem(r.maxMemory);
            if (p) problems.push({ field: "redis.maxMemory", value: r.maxMemory, problem: p, fix: `use "${DEFAULT_REDIS_MAXMEMORY}"` });
        }
        for (const f of ["addresses", "sentinelMaster", "passwordSecret", "sentinelPasswordSecret", "tls", "tlsCaSecret"] as const) {
            // `tls: false` is the default spelled out (the stack config accepts redisTls=false too).
            if (r[f] !== undefined && !(f === "tls" && r.tls === false))
                problems.push({
                    field: `redis.${f}`,
                    value: r[f],
                    problem: "applies only to an existing Redis (mode external, sentinel or cluster)",
                    fix: `remove redis.${f}, or set redis.mode`,
                });
        }
    } else {
        if (r.image !== undefined)
            problems.push({
                field: "redis.image",
                value: r.image,
                problem: "has no effect: no Redis is deployed for an existing one",
                fix: "remove redis.image",
            });
        if (r.maxMemory !== undefined)
            problems.push({
                field: "redis.maxMemory",
                value: r.maxMemory,
                problem: "has no effect: no Redis is deployed for an existing one (set maxmemory on that Redis)",
                fix: "remove redis.maxMemory",
            });
        const want = mode === RedisModeName.External ? "exactly one" : "at least one";
        if (r.addresses !== undefined && !Array.isArray(r.addresses)) {
            problems.push({
                field: "redis.addresses",
                value: r.addresses,
                problem: "must be a list of host:port",
                fix: 'give e.g. ["redis.cache.svc.cluster.local:6379"]',
            });
        } else if (mode === RedisModeName.External ? addresses.length !== 1 : addresses.length < 1) {
            problems.push({
                field: "redis.addresses",
                value: addresses,
                problem: `needs ${want} host:port for mode ${mode}`,
                fix: 'give e.g. ["redis.cache.svc.cluster.local:6379"]',
            });
        }
        addresses.forEach((x, i) => {
            if (typeof x !== "string" || !isHostPort(x))
                problems.push({ field: `redis.addresses[${i}]`, value: x, problem: "must be host:port", fix: 'use e.g. "redis.cache.svc.cluster.local:6379"' });
        });
        if (mode === RedisModeName.Sentinel && !r.sentinelMaster) {
            problems.push({
                field: "redis.sentinelMaster",
                value: r.sentinelMaster,
                problem: "is required for mode sentinel",
                fix: 'give the master\'s name, e.g. "mymaster"',
            });
        } else if (mode === RedisModeName.Sentinel && cleanSentinelMaster(String(r.sentinelMaster)) !== String(r.sentinelMaster)) {
            problems.push({
                field: "redis.sentinelMaster",
                value: r.sentinelMaster,
                problem: SENTINEL_MASTER_PROBLEM,
                fix: `use "${cleanSentinelMaster(String(r.sentinelMaster))}"`,
            });
        }
        if (mode !== RedisModeName.Sentinel && (r.sentinelMaster !== undefined || r.sentinelPasswordSecret !== undefined)) {
            const f = r.sentinelMaster !== undefined ? "sentinelMaster" : "sentinelPasswordSecret";
            problems.push({
                field: `redis.${f}`,
                value: r[f],
                problem: "applies only to mode sentinel",
                fix: "remove redis.sentinelMaster and redis.sentinelPasswordSecret",
            });
        }
        if (r.tlsCaSecret !== undefined && !r.tls)
            problems.push({
                field: "redis.tlsCaSecret",
                value: r.tlsCaSecret,
                problem: "needs tls: true",
                fix: "set redis.tls to true, or remove redis.tlsCaSecret",
            });
        if (r.tlsCaSecret !== undefined) problems.push(...dnsProblem("redis.tlsCaSecret", r.tlsCaSecret, "subdomain"));
    }
    return {
        mode: mode as RedisMode,
        addresses,
        ...(r.sentinelMaster !== undefined ? { sentinelMaster: r.sentinelMaster } : {}),
        ...(r.passwordSecret ? { password: key(r.passwordSecret, "redis.passwordSecret") } : {}),
        ...(r.sentinelPasswordSecret ? { sentinelPassword: key(r.sentinelPasswordSecret, "redis.sentinelPasswordSecret") } : {}),
        tls: r.tls ?? false,
        ...(r.tlsCaSecret !== undefined ? { tlsCaSecret: r.tlsCaSecret } : {}),
    };
}

/** The typed Redis choice of a connection read from stack config (the inverse of the above). */
export function redisOptionsOf(c: RedisConnection, image: string, maxMemory: string): RedisOptionsArgs {
    if (c.mode === "in-cluster") return { image, maxMemory };
    return {
        mode: c.mode as RedisModeName,
        addresses: c.addresses,
        ...(c.sentinelMaster !== undefined ? { sentinelMaster: c.sentinelMaster } : {}),
        ...(c.password ? { passwordSecret: c.password } : {}),
        ...(c.sentinelPassword ? { sentinelPasswordSecret: c.sentinelPassword } : {}),
        ...(c.tls ? { tls: true } : {}),
        ...(c.tlsCaSecret !== undefined ? { tlsCaSecret: c.tlsCaSecret } : {}),
    };
}

/** The service settings at the components' defaults (defaults.ts; the stack config prints the same values). */
function serviceDefaults(): StackSettings["ratelimit"] {
    return {
        namespace: DEFAULTS.ratelimitNamespace,
        serviceName: DEFAULTS.ratelimitServiceName,
        grpcPort: DEFAULTS.ratelimitGrpcPort,
        httpPort: 8080,
        debugPort: 6070,
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
        redisTimeout: redisTimeoutFor(protoDurationSeconds(DEFAULTS.rateLimitTimeout)!),
    };
}

/** Invalid component arguments. A `RunError` so the Pulumi CLI prints the message without a stack trace. */
export class ComponentArgsError extends pulumi.RunError {
    constructor(
        component: string,
        public readonly problems: RuleProblem[],
    ) {
        super(formatRuleProblems(component, problems));
        this.name = "ComponentArgsError";
    }
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
    /** What the service's `REDIS_URL` says: the Redis, Sentinels or Cluster seeds it uses. */
    public readonly redisUrl: string;

    constructor(name: string, args: GlobalRateLimitArgs, opts?: pulumi.ComponentResourceOptions) {
        // Validate before anything is registered: a bad rule creates nothing.
        const plan = planGlobalRateLimit(args);
        if (plan.problems.length) throw new ComponentArgsError(`GlobalRateLimit ${name}`, plan.problems);
        super("mesh-ratelimit:index:GlobalRateLimit", name, {}, opts);

        let redis: Redis | undefined;
        if (deploysRedis(plan.service.redis)) redis = new Redis("redis", { settings: plan.service }, { parent: this });
        const inClusterAddress = redis?.address ?? "";
        // The service crash-loops while Redis is unreachable, so Redis comes first.
        const service = new RateLimitService(
            "ratelimit",
            { settings: plan.service, redisAddress: inClusterAddress, configYaml: plan.configYaml },
            { parent: this, dependsOn: redis ? [redis] : [] },
        );
        for (const m of plan.policies) {
            const opts = { parent: this, dependsOn: [service] };
            if (m.kind === "NetworkPolicy") new k8s.networking.v1.NetworkPolicy(m.metadata.name, m, opts);
            else new k8s.apiextensions.CustomResource(m.metadata.name, m, opts);
        }
        // With failure_mode_deny the gateway refuses everything until the service answers: filters last.
        const labels = stackLabels("global-ratelimit");
        for (const f of plan.filters) {
            new EnvoyFilter(f.name, { metadata: { name: f.name, namespace: f.namespace, labels }, spec: f.spec }, { parent: this, dependsOn: [service] });
        }
        this.grpcAddress = plan.grpcAddress;
        this.domain = args.domain;
        this.configYaml = plan.configYaml;
        this.filterNames = plan.filters.map((f) => f.name);
        this.redisUrl = redisUrl(plan.service.redis, inClusterAddress);
        this.registerOutputs({
            grpcAddress: this.grpcAddress,
            domain: this.domain,
            configYaml: this.configYaml,
            filterNames: this.filterNames,
            redisUrl: this.redisUrl,
        });
    }
}
