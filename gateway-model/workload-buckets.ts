/**
 * The MODEL of the local token buckets a program puts on workloads' sidecars, or on an ambient mesh
 * on the waypoint that serves a workload's Service (a LocalRateLimit without `routes`: the whole
 * filter on the inbound chain), read from the rendered EnvoyFilters, and which of them a request
 * meets on its way to an upstream named as an access log names it. Pure.
 */
import { INGRESS_USE_WAYPOINT_LABEL, LOCAL_RATELIMIT_FILTER, USE_WAYPOINT_LABEL, WAYPOINT_LISTENER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { isSubset } from "./model";
import { RenderedPatch, namespacedName, field, patchesOf, workloadLabelsOf } from "../builders/rendered-config";
import { tokenBucketOf } from "./pre-limit-model";

/** A LocalRateLimit's bucket on a workload's sidecar, or on its waypoint (the whole filter on the inbound chain). */
export interface LocalBucket {
    envoyFilter: string;
    namespace: string;
    /** The sidecar's pods (`{}` on a waypoint). */
    selector: Record<string, string>;
    /** On a waypoint: its Gateway's name (`targetRefs`) and the Service whose chain holds the bucket; one bucket per waypoint pod. */
    waypoint?: { name: string; service: string };
    port: number;
    maxTokens: number;
    tokensPerFill: number;
    fillSeconds: number;
    /** The headers a refusal carries (`x-local-rate-limit`, `retry-after`). */
    refusalHeaders: Record<string, string>;
    /** filter_enforced is 100 %: it refuses (else it only counts). */
    enforced: boolean;
}

/** One patch's local bucket, when the patch inserts the local rate-limit filter on a sidecar's inbound port (or a waypoint's service chain). */
function bucketOfPatch(p: RenderedPatch): LocalBucket | undefined {
    const f = p.envoyFilter;
    if (p.applyTo !== "HTTP_FILTER" || p.context !== "SIDECAR_INBOUND") return undefined;
    // Aimed by targetRefs but at no service's chain of a waypoint: not a bucket this model places.
    const waypoint = waypointOf(p);
    if (f.spec?.targetRefs && !waypoint) return undefined;
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
        ...(waypoint ? { waypoint: { name: waypoint.name, service: waypoint.service } } : {}),
        port: waypoint ? waypoint.port : Number(p.port),
        ...tokenBucketOf(tb),
        refusalHeaders: headers,
        enforced: field(cfg, "filter_enforced")?.default_value?.numerator === 100,
    };
}

/**
 * A waypoint bucket's place: a patch on the waypoint's `main_internal` listener, its chain named
 * `inbound-vip|<port>|http|<service>.<namespace>.svc...`, in a filter aimed at a Gateway by `targetRefs`.
 * A patch on any other chain of a waypoint (or on none by name) is no bucket of one service: not read.
 */
function waypointOf(p: RenderedPatch): { name: string; service: string; port: number } | undefined {
    const f = p.envoyFilter;
    const ref = (f.spec?.targetRefs ?? []).find((r: any) => r?.kind === "Gateway");
    if (!ref || f.spec?.workloadSelector) return undefined;
    const chain = /^inbound-vip\|(\d+)\|http\|([^.]+)\.([^.]+)\.svc\./.exec(String(p.filterChainName ?? ""));
    if (p.listenerName !== WAYPOINT_LISTENER || !chain || chain[3] !== (f.metadata.namespace ?? "default")) return undefined;
    return { name: String(ref.name), service: chain[2]!, port: Number(chain[1]) };
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
 * that Service: the bucket's `app` label is the service's name). A waypoint's bucket: the Service
 * its chain names, which the waypoint serves (`istio.io/use-waypoint` naming it; a program without
 * that Service: taken as labelled, as LocalRateLimit's preview warning asks); the requests modelled come
 * from the ingress, so the Service must also send the ingress's requests to its waypoint.
 */
export function bucketsOn(objects: K8sObject[], buckets: LocalBucket[], upstream: string | undefined): LocalBucket[] {
    const u = parseUpstream(upstream);
    if (!u) return [];
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === u.service && (o.metadata.namespace ?? "default") === u.namespace);
    const reaches = (b: LocalBucket): boolean => {
        if (b.waypoint) return b.waypoint.service === u.service && (!svc || servedFromIngress(svc, b.waypoint.name));
        return svc ? isSubset(b.selector, svc.spec?.selector ?? {}) : b.selector.app === u.service;
    };
    return buckets.filter((b) => b.namespace === u.namespace && b.port === u.port && reaches(b));
}

/**
 * Whether the waypoint sees the ingress's requests to the Service: it serves the Service
 * (`istio.io/use-waypoint: <name>`) and the ingress sends to it (`istio.io/ingress-use-waypoint: "true"`;
 * without it Istio's ingress gateways go straight to the pods, past the waypoint).
 */
function servedFromIngress(svc: K8sObject, waypoint: string): boolean {
    const labels = svc.metadata.labels ?? {};
    return labels[USE_WAYPOINT_LABEL] === waypoint && labels[INGRESS_USE_WAYPOINT_LABEL] === "true";
}

/** `<service>.<namespace>:<port>` or `outbound|<port>||<service>.<namespace>.svc...`. */
export function parseUpstream(s: string | undefined): { service: string; namespace: string; port: number } | undefined {
    if (!s) return undefined;
    const istio = /^outbound\|(\d+)\|[^|]*\|([^.]+)\.([^.]+)(\..*)?$/.exec(s);
    if (istio) return { service: istio[2]!, namespace: istio[3]!, port: Number(istio[1]) };
    const plainForm = /^([^.:]+)\.([^.:]+)(?:\.[^:]*)?:(\d+)$/.exec(s);
    return plainForm ? { service: plainForm[1]!, namespace: plainForm[2]!, port: Number(plainForm[3]) } : undefined;
}
