/**
 * LocalRateLimit: a token bucket on any workload's sidecar (Envoy's local rate-limit filter), per
 * pod, no service needed. Over the limit: 429, body `local_rate_limited`, headers `x-local-rate-limit: true`
 * and `Retry-After` (the fill interval in whole seconds); every counted response carries the
 * bucket's `X-RateLimit-*` headers unless `rateLimitHeaders` is `RateLimitHeaders.Off`.
 */
import * as pulumi from "@pulumi/pulumi";
import { Problem } from "../lib/problems";
import { stackLabels } from "../lib/common";
import { fieldProblems, resolvedFields, withDefaults } from "../lib/field-decl";
import { EnvoyFilter } from "./crds";
import {
    EnvoyFilterSpec,
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    LocalBucketBehaviour,
    RateLimitHeaders,
    ResolvedLocalBucket,
    instanceFilterName,
    localBucketFilter,
} from "../builders/envoy-filters";
import { argsError } from "./arg-checks";
import { componentFieldProblems } from "./arg-checks";
import { LOCAL_ARG_TYPES } from "./local-ratelimit-arg-types";
import { LocalBucketOptions, LocalRateLimitArgs } from "./local-ratelimit-args.generated";
import { LOCAL_ARGS_FIELDS, LOCAL_BUCKET_FIELDS } from "./local-ratelimit-fields";

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

/** LocalRateLimit's arguments resolved once: read-only, every default filled in; the builder takes only `bucket`. */
export interface ResolvedLocalRateLimit {
    /** The EnvoyFilter's name (`filterName`, else the component's name). */
    readonly filterName: string;
    /** The workload's namespace, where the EnvoyFilter goes. */
    readonly namespace: string;
    /** The bucket on the workload's sidecar, as builders/local-bucket-filter.ts builds it. */
    readonly bucket: ResolvedLocalBucket;
}

/** Every problem of LocalRateLimit's arguments, each under its property path, or the resolved value (pure; exported for the tests). */
export function resolveLocalRateLimit(name: string, args: LocalRateLimitArgs): { problems: Problem[]; value?: ResolvedLocalRateLimit } {
    const a: Partial<LocalRateLimitArgs> = args ?? {};
    const F = LOCAL_ARGS_FIELDS;
    const filterName = a.filterName ?? name;
    const problems: Problem[] = [
        ...componentFieldProblems(LOCAL_ARG_TYPES, "LocalRateLimit", args),
        ...fieldProblems(F.selector, "selector", a.selector),
        ...bucketPortProblems(a.port),
        ...bucketProblems(a.bucket),
    ];
    const options = resolveBucketOptions(a, problems);
    problems.push(
        ...namespaceProblems(a, filterName),
        ...fieldProblems(F.filterLayout, "filterLayout", a.filterLayout ?? undefined),
        ...fieldProblems(F.meshMode, "meshMode", a.meshMode ?? undefined),
    );
    if (problems.length) return { problems };
    const namespace = a.namespace as string;
    const layout = withDefaults(F, a).filterLayout;
    const httpFilterName = layout === FilterLayout.Shared ? LOCAL_RATELIMIT_FILTER : instanceFilterName(LOCAL_RATELIMIT_FILTER, namespace, filterName);
    const bucket: ResolvedLocalBucket = Object.freeze({
        httpFilterName,
        selector: Object.freeze({ ...a.selector! }),
        port: a.port!,
        bucket: a.bucket!,
        fillInterval: options.fillInterval,
        ...(a.routes !== undefined ? { routes: Object.freeze([...a.routes]) } : {}),
        behaviour: options.behaviour,
    });
    return { problems, value: Object.freeze({ filterName, namespace, bucket }) };
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
    if (a.namespace === rootNamespace && a.reachAllNamespaces !== true) {
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
        // Named after the component (its Pulumi name), so instances with the same filterName in different namespaces coexist.
        new EnvoyFilter(
            name,
            { metadata: { name: plan.value!.filterName, namespace: plan.value!.namespace, labels: stackLabels("local-ratelimit") }, spec: plan.spec! },
            { parent: this },
        );
        this.filterName = plan.value!.filterName;
        this.registerOutputs({ filterName: this.filterName });
    }
}
