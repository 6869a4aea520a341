/**
 * Which pods an EnvoyFilter reaches (a workload selector or a Gateway API `Gateway`) and its order
 * among the proxy's EnvoyFilters.
 */
import { EnvoyFilterSpec } from "./envoy-types";

/**
 * The `priority` of the stack's EnvoyFilters. Istio applies the patches of a proxy in order of
 * priority (lower first), then root namespace first, then creation time. Every `INSERT_BEFORE` of
 * the router puts its filter directly before the router, so a patch applied later sits closer to
 * it. At 10, after the default 0 of other teams' filters (an `ext_authz` inserted before the router,
 * for instance), the rate-limit filter runs after them, just before the router: a request refused by
 * authorization never spends rate-limit quota, and the order no longer depends on creation time.
 * (Istio's own CUSTOM AuthorizationPolicy filter is generated into the chain itself and always runs
 * before any filter inserted before the router.)
 */
export const FILTER_PRIORITY = 10;

/** Which gateway pods a filter reaches: pods with these labels, or the pods of a Gateway API `Gateway`. */
export type FilterTarget = { selector: Record<string, string> } | { gatewayApiName: string };

export const GATEWAY_API_GROUP = "gateway.networking.k8s.io";
/** The label Istio puts on the pods of a Gateway API `Gateway` it deploys (value: the Gateway's name). */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

/** The spec fields that pick the filter's pods. */
export function targetOf(t: FilterTarget): Pick<EnvoyFilterSpec, "workloadSelector" | "targetRefs"> {
    return "gatewayApiName" in t
        ? { targetRefs: [{ group: GATEWAY_API_GROUP, kind: "Gateway", name: t.gatewayApiName }] }
        : { workloadSelector: { labels: t.selector } };
}
