/**
 * LocalRateLimit: a token bucket on any workload's sidecar (Envoy's local rate-limit filter), per
 * pod, no service needed; on an ambient mesh (`meshMode: MeshMode.Ambient`) on the waypoint that
 * serves the workload's Service, per waypoint pod. Over the limit: 429, body `local_rate_limited`, headers `x-local-rate-limit: true`
 * and `Retry-After` (the fill interval in whole seconds); every counted response carries the
 * bucket's `X-RateLimit-*` headers unless `rateLimitHeaders` is `RateLimitHeaders.Off`.
 */
import * as pulumi from "@pulumi/pulumi";
import { Problem } from "../../lib/problems";
import { stackLabels } from "../../lib/common";
import { Resolved, fieldProblems, resolvedFields, withDefaults } from "../../lib/field-decl";
import { EnvoyFilter, KubernetesGateway } from "../common/crds";
import { MeshMode } from "../common/mesh-enums";
import {
    EnvoyFilterSpec,
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    LocalBucketBehaviour,
    RateLimitHeaders,
    ResolvedLocalBucket,
    INGRESS_USE_WAYPOINT_LABEL,
    USE_WAYPOINT_LABEL,
    instanceFilterName,
    localBucketFilter,
    waypointGatewaySpec,
} from "../../builders/envoy-filters";
import { argsError, componentFieldProblems } from "../common/arg-checks";
import { LOCAL_ARG_TYPES } from "./arg-types";
import { LocalBucketOptions, LocalRateLimitArgs } from "./args.generated";
import { AMBIENT_LOCAL_BUCKET_WARNING, LOCAL_ARGS_FIELDS, LOCAL_BUCKET_FIELDS } from "./fields";

export { LocalBucketOptions, LocalRateLimitArgs };

/*
 * The rules of the bucket's own fields are their declarations' (local-ratelimit-fields.ts);
 * MeshRateLimit reports them under `local.` with its variant's bucket and its port as the fixes' fallbacks.
 */

/** `bucket`: a whole number of tokens from 1 to 1,000,000,000; `fallback` is what the fix offers for what is no number. */
export function bucketProblems(bucket: unknown, fallback?: number): Problem[] {
    return LOCAL_ARGS_FIELDS.bucket.rule.problems("bucket", bucket, fallback);
}

/** `port`: the workload's port, a whole number from 1 to 65535. */
export function bucketPortProblems(port: unknown, fallback?: number): Problem[] {
    return LOCAL_ARGS_FIELDS.port.rule.problems("port", port, fallback);
}

/** The bucket's options resolved: the refill interval, and what it tells clients and whether it refuses, every default filled in. */
interface ResolvedBucketOptions {
    readonly fillInterval: string;
    readonly behaviour: Readonly<Required<LocalBucketBehaviour>>;
}

/**
 * The bucket's options (`LocalBucketOptions`) checked by their declared rules (problems added to
 * `problems`) and defaulted: a bucket in shadow refuses nothing, so it sends no headers unless asked for.
 */
function resolveBucketOptions(o: LocalBucketOptions, problems: Problem[]): ResolvedBucketOptions {
    // A null interval is taken as not given (its default), as `??` always took it.
    const v = resolvedFields(LOCAL_BUCKET_FIELDS, { ...o, fillInterval: o.fillInterval ?? undefined }, problems);
    const rateLimitHeaders = o.rateLimitHeaders === undefined && v.shadow === true ? RateLimitHeaders.Off : v.rateLimitHeaders;
    return { fillInterval: v.fillInterval, behaviour: Object.freeze({ rateLimitHeaders, shadow: v.shadow === true }) };
}

/** The rules of the bucket's options, each once: LocalRateLimit's, and MeshRateLimit's for its `local`. */
export function localBucketOptionsProblems(o: LocalBucketOptions): Problem[] {
    const problems: Problem[] = [];
    resolveBucketOptions(o, problems);
    return problems;
}

/**
 * LocalRateLimit's arguments resolved once: read-only, every default filled in; the builder takes only
 * `bucket`. Its declared fields (`namespace`, where the EnvoyFilter goes and on ambient the waypoint;
 * `service`, the workload's Service on ambient) are as declared; the rest is derived.
 */
export type ResolvedLocalRateLimit = Resolved<Pick<typeof LOCAL_ARGS_FIELDS, "namespace" | "service">> & {
    /** The EnvoyFilter's name (`filterName`, else the component's name). */
    readonly filterName: string;
    /** The bucket on the workload's sidecar, or on ambient on its waypoint, as builders/local-bucket-filter.ts builds it. */
    readonly bucket: ResolvedLocalBucket;
    /** Ambient: the waypoint Gateway to create, by name; absent when the waypoint is taken as it is (or on the sidecar mode). */
    readonly createWaypoint?: string;
};

/** Every problem of LocalRateLimit's arguments, each under its property path, or the resolved value (pure; exported for the tests). */
export function resolveLocalRateLimit(name: string, args: LocalRateLimitArgs): { problems: Problem[]; value?: ResolvedLocalRateLimit } {
    const a: Partial<LocalRateLimitArgs> = args ?? {};
    const F = LOCAL_ARGS_FIELDS;
    const filterName = a.filterName ?? name;
    const ambient = a.meshMode === MeshMode.Ambient;
    const problems: Problem[] = [
        ...componentFieldProblems(LOCAL_ARG_TYPES, "LocalRateLimit", args),
        ...(ambient ? [] : F.selector.rule.problems("selector", a.selector, undefined)),
        ...bucketPortProblems(a.port),
        ...bucketProblems(a.bucket),
    ];
    const options = resolveBucketOptions(a, problems);
    problems.push(
        ...namespaceProblems(a, filterName),
        ...fieldProblems(F.filterLayout, "filterLayout", a.filterLayout ?? undefined),
        ...fieldProblems(F.meshMode, "meshMode", a.meshMode ?? undefined),
        ...(ambient ? ambientProblems(a) : sidecarOnlyProblems(a)),
    );
    if (problems.length) return { problems };
    const namespace = a.namespace as string;
    const { filterLayout: layout, waypoint, clusterDomain, createWaypoint } = withDefaults(F, a);
    const httpFilterName = layout === FilterLayout.Shared ? LOCAL_RATELIMIT_FILTER : instanceFilterName(LOCAL_RATELIMIT_FILTER, namespace, filterName);
    const place = ambient
        ? { waypoint: Object.freeze({ name: waypoint, host: `${a.service}.${namespace}.svc.${clusterDomain}` }) }
        : { selector: Object.freeze({ ...a.selector! }) };
    const bucket: ResolvedLocalBucket = Object.freeze({
        httpFilterName,
        ...place,
        port: a.port!,
        bucket: a.bucket!,
        fillInterval: options.fillInterval,
        ...(a.routes !== undefined ? { routes: Object.freeze([...a.routes]) } : {}),
        behaviour: options.behaviour,
    });
    const created = ambient && createWaypoint ? { createWaypoint: waypoint } : {};
    return { problems, value: Object.freeze({ filterName, namespace, bucket, ...created, ...(ambient ? { service: a.service } : {}) }) };
}

/** On ambient: the Service is required, and the sidecar's fields (pods by label, reach over namespaces) are refused, each with what to give instead. */
function ambientProblems(a: Partial<LocalRateLimitArgs>): Problem[] {
    const F = LOCAL_ARGS_FIELDS;
    const problems: Problem[] = [
        ...fieldProblems(F.waypoint, "waypoint", a.waypoint ?? undefined),
        ...fieldProblems(F.createWaypoint, "createWaypoint", a.createWaypoint ?? undefined),
        ...fieldProblems(F.clusterDomain, "clusterDomain", a.clusterDomain ?? undefined),
    ];
    if (a.service === undefined || a.service === null) {
        problems.push({
            key: "service",
            value: a.service,
            problem: "is required with meshMode ambient: the waypoint serves a Service, and the bucket goes on that Service's chain only",
            fix: 'give the workload\'s Service in namespace, e.g. service: "orders" (and label it istio.io/use-waypoint: <waypoint>)',
        });
    } else problems.push(...fieldProblems(F.service, "service", a.service));
    if (a.selector !== undefined)
        problems.push({
            key: "selector",
            value: a.selector,
            problem: "is set with meshMode ambient: a waypoint serves a Service, not pods by label, so a selector would place nothing",
            fix: "remove selector and name the workload's Service in service",
        });
    if (a.reachAllNamespaces === true)
        problems.push({
            key: "reachAllNamespaces",
            value: true,
            problem: "is true with meshMode ambient: the filter reaches only the waypoint it names, never other namespaces' pods",
            fix: "remove reachAllNamespaces",
        });
    return problems;
}

/** With the sidecar mode, the ambient fields are refused: they would place nothing. */
function sidecarOnlyProblems(a: Partial<LocalRateLimitArgs>): Problem[] {
    return (["service", "waypoint", "createWaypoint", "clusterDomain"] as const)
        .filter((k) => a[k] !== undefined)
        .map((k) => ({
            key: k,
            value: a[k],
            problem: "is set without meshMode ambient: it places the bucket on a waypoint, and the sidecar mode uses selector",
            fix: `remove ${k}, or set meshMode: MeshMode.Ambient`,
        }));
}

/** The checks of where the filter goes (`routes`, `namespace`, its names, its reach), in the order they are reported. */
function namespaceProblems(a: Partial<LocalRateLimitArgs>, filterName: string): Problem[] {
    const F = LOCAL_ARGS_FIELDS;
    const rootNamespace = withDefaults(F, a).rootNamespace;
    const problems: Problem[] = [
        ...fieldProblems(F.routes, "routes", a.routes),
        ...fieldProblems(F.namespace, "namespace", a.namespace),
        ...fieldProblems(F.rootNamespace, "rootNamespace", a.rootNamespace ?? undefined),
        // The component's name, when no filterName is given, is held to the same rule.
        ...fieldProblems(F.filterName, "filterName", filterName),
        ...fieldProblems(F.reachAllNamespaces, "reachAllNamespaces", a.reachAllNamespaces),
    ];
    // On ambient the filter names one waypoint (targetRefs): the root namespace widens nothing.
    if (a.namespace === rootNamespace && a.reachAllNamespaces !== true && a.meshMode !== MeshMode.Ambient) {
        problems.push({
            key: "namespace",
            value: a.namespace,
            problem: `is Istio's root namespace: the bucket would apply to every pod labelled ${JSON.stringify(a.selector ?? {})} in every namespace, other teams' included`,
            fix: "give the workload's own namespace, or set reachAllNamespaces: true if that reach is intended",
        });
    }
    return problems;
}

/** Resolves the arguments and, when they hold no problem, builds the filter from the resolved value (pure; exported for the tests). */
export function planLocalRateLimit(name: string, args: LocalRateLimitArgs): { problems: Problem[]; value?: ResolvedLocalRateLimit; spec?: EnvoyFilterSpec } {
    const { problems, value } = resolveLocalRateLimit(name, args);
    return value ? { problems, value, spec: localBucketFilter(value.bucket) } : { problems };
}

export class LocalRateLimit extends pulumi.ComponentResource {
    /** Name of the EnvoyFilter created. */
    public readonly filterName: string;

    constructor(name: string, args: LocalRateLimitArgs, opts?: pulumi.ComponentResourceOptions) {
        const plan = planLocalRateLimit(name, args);
        if (plan.problems.length) throw argsError(`LocalRateLimit ${name}`, plan.problems);
        super("mesh-ratelimit:index:LocalRateLimit", name, {}, opts);
        const v = plan.value!;
        const labels = stackLabels("local-ratelimit");
        if (v.bucket.waypoint) warnOnce(ambientWarning(v), this);
        // The waypoint first, so the filter that names it is created after it and removed before it.
        const waypoint = v.createWaypoint
            ? new KubernetesGateway(
                  `${name}-waypoint`,
                  { metadata: { name: v.createWaypoint, namespace: v.namespace, labels }, spec: waypointGatewaySpec() },
                  { parent: this },
              )
            : undefined;
        // Named after the component (its Pulumi name), so instances with the same filterName in different namespaces coexist.
        new EnvoyFilter(
            name,
            { metadata: { name: v.filterName, namespace: v.namespace, labels }, spec: plan.spec! },
            { parent: this, ...(waypoint ? { dependsOn: [waypoint] } : {}) },
        );
        this.filterName = v.filterName;
        this.registerOutputs({ filterName: this.filterName });
    }
}

/** The warnings said in this process: the program constructs its components twice (once to list the objects, once to register them). */
const warned = new Set<string>();

function warnOnce(message: string, resource: pulumi.Resource): void {
    if (warned.has(message)) return;
    warned.add(message);
    pulumi.log.warn(message, resource);
}

/** What preview says of a bucket on a waypoint: the upstream state, and the Service label the waypoint needs. */
export function ambientWarning(v: ResolvedLocalRateLimit): string {
    const w = v.bucket.waypoint!;
    const taken = v.createWaypoint ? "" : ` The waypoint ${v.namespace}/${w.name} is taken as it is: it must exist.`;
    return (
        `LocalRateLimit ${v.filterName}: ${AMBIENT_LOCAL_BUCKET_WARNING}${taken} Service ${v.namespace}/${v.service} must carry ` +
        `${USE_WAYPOINT_LABEL}: ${w.name} (and ${INGRESS_USE_WAYPOINT_LABEL}: "true" for the ingress's requests to be counted), or nothing is counted.`
    );
}
