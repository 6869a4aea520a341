/**
 * LocalRateLimit: a token bucket on any workload's sidecar (Envoy's local rate-limit filter), per
 * pod, no service needed. Over the limit: 429, body `local_rate_limited`, headers `x-local-rate-limit: true`
 * and `Retry-After` (the fill interval in whole seconds); every counted response carries the
 * bucket's `X-RateLimit-*` headers unless `rateLimitHeaders` is `RateLimitHeaders.Off`.
 */
import { DEFAULTS } from "./defaults";
import { GLOBAL_FIELDS } from "./global-ratelimit-fields";
import * as pulumi from "@pulumi/pulumi";
import { Problem } from "../lib/problems";
import { stackLabels } from "../lib/common";
import { EnvoyFilter } from "./crds";
import {
    EnvoyFilterSpec,
    FilterLayout,
    LOCAL_RATELIMIT_FILTER,
    RateLimitHeaders,
    ResolvedLocalBucket,
    instanceFilterName,
    localBucketFilter,
} from "../builders/envoy-filters";
import { dnsProblem, selectorProblems, argsError, rateLimitHeadersProblems, unknownFieldProblems } from "./arg-checks";
import { booleanProblems, oneOfProblems, protoDurationProblems, wholeNumberProblems } from "../lib/field-checks";

/** The bucket's refill, what it tells clients and whether it refuses: LocalRateLimit's arguments and MeshRateLimit's `local`. Each field documented here once. */
export interface LocalBucketOptions {
    /** Refill interval, a protobuf duration of at least `0.05s`. Defaults to `60s`. */
    fillInterval?: string;
    /**
     * What the bucket tells clients. `RateLimitHeaders.Draft03`: every response it counted carries
     * `X-RateLimit-Limit` (the bucket), `X-RateLimit-Remaining` (tokens left) and
     * `X-RateLimit-Reset` (seconds to the next fill). `RateLimitHeaders.Off`: none. A refusal carries
     * `Retry-After` either way. Defaults to `RateLimitHeaders.Draft03`, and to `Off` with `shadow`.
     */
    rateLimitHeaders?: RateLimitHeaders;
    /**
     * Observe only: the bucket counts (Envoy's `local_rate_limit.rate_limited` statistic grows) but
     * refuses nothing (`filter_enforced` 0 %). Defaults to `false`.
     */
    shadow?: boolean;
}

export interface LocalRateLimitArgs extends LocalBucketOptions {
    /** Pod labels of the workload, e.g. `{ app: "orders" }`. */
    selector: Record<string, string>;
    /**
     * The workload's port: the bucket goes on the sidecar's inbound chain of this port only (other
     * inbound ports are not limited), and Istio names its inbound virtual host `inbound|http|<port>`.
     */
    port: number;
    /** Tokens in the bucket, and tokens added per fill (`max_tokens` = `tokens_per_fill`). */
    bucket: number;
    /**
     * Limit only these inbound routes (the bucket is set per route; the filter itself holds only its
     * stat prefix). An empty list: every route of the inbound virtual host, set per route. Defaults
     * to the whole filter on the sidecar's inbound HTTP chain (all routes, one place).
     */
    routes?: string[];
    /**
     * Namespace of the EnvoyFilter: the workload's own, so the bucket reaches only that namespace's
     * pods with `selector`'s labels. Istio's root namespace (`rootNamespace`) is refused unless
     * `reachAllNamespaces` is set: a filter there applies to matching pods in every namespace.
     */
    namespace: string;
    /** Istio's root namespace (the mesh config's `rootNamespace`). Defaults to `istio-system`. */
    rootNamespace?: string;
    /**
     * Allow `namespace` to be Istio's root namespace, where the bucket applies to every pod with
     * `selector`'s labels in the whole mesh, other teams' included. Defaults to `false`.
     */
    reachAllNamespaces?: boolean;
    /** Name of the EnvoyFilter. Defaults to the component's name. */
    filterName?: string;
    /**
     * The HTTP filter's name. `FilterLayout.PerInstance`:
     * `envoy.filters.http.local_ratelimit/<namespace>/<filterName>`, so two LocalRateLimits on the
     * same pods never read each other's per-route bucket (Envoy finds it by the filter's name).
     * `FilterLayout.Shared`: `envoy.filters.http.local_ratelimit` (spec 2.7). Defaults to
     * `FilterLayout.PerInstance`.
     */
    filterLayout?: FilterLayout;
}

/*
 * LocalRateLimit's rules for the bucket's own fields, each with one message and a fix in every
 * style; MeshRateLimit reports them under `local.` with its variant's bucket as the fallback.
 */

/** `bucket`: a whole number of tokens from 1 to 1,000,000,000; `fallback` is what the fix offers for what is no number. */
export function bucketProblems(bucket: unknown, fallback = 10): Problem[] {
    return wholeNumberProblems("bucket", bucket, { min: 1, max: 1_000_000_000, fallback });
}

/** `fillInterval`: a protobuf duration of at least 0.05 s (Envoy refuses shorter ones). */
export function fillIntervalProblems(fillInterval: unknown): Problem[] {
    return protoDurationProblems("fillInterval", fillInterval, 0.05, DEFAULTS.localFillInterval);
}

/** `port`: the workload's port, a whole number from 1 to 65535. */
export function bucketPortProblems(port: unknown, fallback = 8080): Problem[] {
    return wholeNumberProblems("port", port, { min: 1, max: 65535, fallback });
}

/** `rateLimitHeaders`: one of the `RateLimitHeaders`. */
export function localHeadersProblems(rateLimitHeaders: unknown): Problem[] {
    return rateLimitHeadersProblems(rateLimitHeaders);
}

/** `shadow`: a boolean. */
export function shadowProblems(shadow: unknown): Problem[] {
    return shadow === undefined ? [] : booleanProblems("shadow", shadow, false);
}

/** The rules of the bucket's options (`LocalBucketOptions`), each once: LocalRateLimit's, and MeshRateLimit's for its `local`. */
export function localBucketOptionsProblems(o: LocalBucketOptions): Problem[] {
    return [...fillIntervalProblems(o.fillInterval ?? DEFAULTS.localFillInterval), ...localHeadersProblems(o.rateLimitHeaders), ...shadowProblems(o.shadow)];
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
    const filterName = a.filterName ?? name;
    const layout = a.filterLayout ?? FilterLayout.PerInstance;
    const problems = [
        ...localRateLimitProblems(a, args, filterName),
        ...oneOfProblems("filterLayout", layout, Object.values(FilterLayout), FilterLayout.PerInstance),
    ];
    if (problems.length) return { problems };
    const namespace = a.namespace as string;
    const httpFilterName = layout === FilterLayout.Shared ? LOCAL_RATELIMIT_FILTER : instanceFilterName(LOCAL_RATELIMIT_FILTER, namespace, filterName);
    const bucket: ResolvedLocalBucket = Object.freeze({
        httpFilterName,
        selector: Object.freeze({ ...a.selector! }),
        port: a.port!,
        bucket: a.bucket!,
        fillInterval: a.fillInterval ?? DEFAULTS.localFillInterval,
        ...(a.routes !== undefined ? { routes: Object.freeze([...a.routes]) } : {}),
        // A bucket in shadow refuses nothing: no headers unless asked for.
        behaviour: Object.freeze({
            rateLimitHeaders: a.rateLimitHeaders ?? (a.shadow === true ? RateLimitHeaders.Off : GLOBAL_FIELDS.rateLimitHeaders.default),
            shadow: a.shadow === true,
        }),
    });
    return { problems, value: Object.freeze({ filterName, namespace, bucket }) };
}

/** The checks of LocalRateLimit's own fields (the layout aside), in the order they are reported. */
function localRateLimitProblems(a: Partial<LocalRateLimitArgs>, args: LocalRateLimitArgs, filterName: string): Problem[] {
    const problems: Problem[] = [
        ...unknownFieldProblems("LocalRateLimit", args),
        ...selectorProblems("selector", a.selector),
        ...bucketPortProblems(a.port),
        ...bucketProblems(a.bucket),
        ...localBucketOptionsProblems(a),
        ...routesProblems(a.routes),
    ];
    const namespace = a.namespace as string;
    const rootNamespace = a.rootNamespace ?? DEFAULTS.meshNamespace;
    if (a.namespace === undefined) {
        problems.push({
            key: "namespace",
            value: undefined,
            problem: "is required: the workload's namespace (the filter then reaches only that namespace's pods)",
            fix: 'give the workload\'s namespace, e.g. "shop"',
        });
    } else problems.push(...dnsProblem("namespace", namespace, "label"));
    problems.push(...dnsProblem("rootNamespace", rootNamespace, "label"), ...dnsProblem("filterName", filterName, "subdomain"));
    if (a.reachAllNamespaces !== undefined) problems.push(...booleanProblems("reachAllNamespaces", a.reachAllNamespaces, false));
    if (namespace === rootNamespace && a.reachAllNamespaces !== true) {
        problems.push({
            key: "namespace",
            value: namespace,
            problem: `is Istio's root namespace: the bucket would apply to every pod labelled ${JSON.stringify(a.selector ?? {})} in every namespace, other teams' included`,
            fix: "give the workload's own namespace, or set reachAllNamespaces: true if that reach is intended",
        });
    }
    return problems;
}

/** `routes`: a list of route names. */
function routesProblems(routes: unknown): Problem[] {
    if (routes === undefined) return [];
    if (!Array.isArray(routes)) return [{ key: "routes", value: routes, problem: "must be a list of route names", fix: "give [] for every route, or names" }];
    return routes.flatMap((r, i) =>
        typeof r !== "string" || r === "" ? [{ key: `routes[${i}]`, value: r, problem: "must be a route name", fix: "remove it, or name the route" }] : [],
    );
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
