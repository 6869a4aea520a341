/**
 * The MODEL of the local token buckets a program puts on workloads' sidecars (a LocalRateLimit
 * without `routes`: the whole filter on the inbound port), read from the rendered EnvoyFilters, and
 * which of them a request meets on its way to an upstream named as an access log names it. Pure.
 */
import { LOCAL_RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { isSubset } from "./model";
import { RenderedPatch, namespacedName, field, patchesOf, workloadLabelsOf } from "../builders/rendered-config";
import { tokenBucketOf } from "./pre-limit-model";

/** A LocalRateLimit's bucket on a workload's sidecar (the whole filter on the inbound port). */
export interface LocalBucket {
    envoyFilter: string;
    namespace: string;
    selector: Record<string, string>;
    port: number;
    maxTokens: number;
    tokensPerFill: number;
    fillSeconds: number;
    /** The headers a refusal carries (`x-local-rate-limit`, `retry-after`). */
    refusalHeaders: Record<string, string>;
    /** filter_enforced is 100 %: it refuses (else it only counts). */
    enforced: boolean;
}

/** One patch's local bucket, when the patch inserts the local rate-limit filter on a sidecar's inbound port. */
function bucketOfPatch(p: RenderedPatch): LocalBucket | undefined {
    const f = p.envoyFilter;
    if (p.applyTo !== "HTTP_FILTER" || p.context !== "SIDECAR_INBOUND") return undefined;
    if (typeof p.name !== "string" || !p.name.startsWith(LOCAL_RATELIMIT_FILTER)) return undefined;
    const tc = p.typedConfig ?? {};
    const cfg = tc.value ?? tc;
    const tb = field(cfg, "token_bucket");
    if (!tb) return undefined;
    const headers = Object.fromEntries(
        (field(cfg, "response_headers_to_add") ?? []).map((h: any) => [String(h.header?.key).toLowerCase(), String(h.header?.value)]),
    );
    return {
        envoyFilter: namespacedName(f),
        namespace: f.metadata.namespace ?? "default",
        selector: workloadLabelsOf(f),
        port: Number(p.port),
        ...tokenBucketOf(tb),
        refusalHeaders: headers,
        enforced: field(cfg, "filter_enforced")?.default_value?.numerator === 100,
    };
}

/** The whole-filter local buckets on sidecars' inbound ports (LocalRateLimit without `routes`). */
export function localBuckets(objects: K8sObject[]): LocalBucket[] {
    const out: LocalBucket[] = [];
    for (const p of objects.filter((o) => o.kind === "EnvoyFilter").flatMap(patchesOf)) {
        const b = bucketOfPatch(p);
        if (b) out.push(b);
    }
    return out;
}

/**
 * The buckets a request meets on its way to `upstream` (`<service>.<namespace>:<port>`, or Istio's
 * cluster name `outbound|<port>||<service>.<namespace>.svc.cluster.local`): the bucket's namespace
 * and port, and the program's Service of that name selecting the bucket's pods (a program without
 * that Service: the bucket's `app` label is the service's name).
 */
export function bucketsOn(objects: K8sObject[], buckets: LocalBucket[], upstream: string | undefined): LocalBucket[] {
    const u = parseUpstream(upstream);
    if (!u) return [];
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === u.service && (o.metadata.namespace ?? "default") === u.namespace);
    return buckets.filter(
        (b) => b.namespace === u.namespace && b.port === u.port && (svc ? isSubset(b.selector, svc.spec?.selector ?? {}) : b.selector.app === u.service),
    );
}

/** `<service>.<namespace>:<port>` or `outbound|<port>||<service>.<namespace>.svc...`. */
export function parseUpstream(s: string | undefined): { service: string; namespace: string; port: number } | undefined {
    if (!s) return undefined;
    const istio = /^outbound\|(\d+)\|[^|]*\|([^.]+)\.([^.]+)(\..*)?$/.exec(s);
    if (istio) return { service: istio[2]!, namespace: istio[3]!, port: Number(istio[1]) };
    const plainForm = /^([^.:]+)\.([^.:]+)(?:\.[^:]*)?:(\d+)$/.exec(s);
    return plainForm ? { service: plainForm[1]!, namespace: plainForm[2]!, port: Number(plainForm[3]) } : undefined;
}
