/**
 * The gateway MODEL read from the route configuration Istio's own generator produced (the istio
 * tier checks it agrees with the one read from the rendered objects). Pure.
 */
import { readConfig, readGateway } from "./read-rendered";
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { GatewayModel, ModelRoute, RouteMatch, policyValues, vhRateLimitsOf } from "./model";
import { entriesOfStage, field } from "../builders/rendered-config";

/**
 * The same model read from Envoy's route configuration as Istio generates it (protobuf JSON of a
 * `RouteConfiguration`), with the domain and failure mode of the generated rate-limit filter and
 * the rate-limit service's config from the rendered objects.
 */
/** A route's `RateLimit-Policy` values, as the model's route field (none: no field). */
function policyOf(headersToAdd: unknown): Pick<ModelRoute, "policy"> {
    const policy = policyValues(headersToAdd);
    return policy.length ? { policy } : {};
}

export function gatewayModelFromEnvoy(
    routeConfiguration: any,
    virtualHost: string,
    filter: { domain: string; failureModeDeny: boolean; rateLimitHeaders?: boolean; stage?: number; cluster?: string; name?: string },
    objects: K8sObject[],
): GatewayModel {
    const stage = filter.stage ?? 0;
    const rlName = filter.name ?? RATELIMIT_FILTER;
    const vh = (field(routeConfiguration, "virtual_hosts") ?? []).find((v: any) => v.name === virtualHost);
    if (!vh) throw new Error(`route configuration ${routeConfiguration?.name} has no virtual host ${virtualHost}`);
    const vhMode = vhRateLimitsOf(field(vh, "typed_per_filter_config"), rlName) ?? "OVERRIDE";
    const routes: ModelRoute[] = (vh.routes ?? []).map((r: any, index: number) => {
        const m = r.match ?? {};
        const known = ["path", "prefix", "safe_regex", "safeRegex", "path_separated_prefix", "pathSeparatedPrefix", "case_sensitive", "caseSensitive"];
        const extra = Object.keys(m).filter((k) => !known.includes(k));
        if (extra.length) throw new Error(`Envoy route match fields ${extra.join(", ")} are not modelled`);
        if (field(m, "case_sensitive") === false) throw new Error("case-insensitive route matches are not modelled");
        let match: RouteMatch;
        if (m.path !== undefined) match = { kind: "exact", value: m.path };
        else if (m.prefix !== undefined) match = { kind: "prefix", value: m.prefix };
        else if (field(m, "safe_regex")) match = { kind: "regex", value: field(m, "safe_regex").regex };
        else throw new Error(`Envoy route match ${JSON.stringify(m)} is not modelled`);
        return {
            name: r.name,
            index,
            matches: [match],
            rateLimits: entriesOfStage(field(r.route, "rate_limits"), stage),
            ...((field(r.route, "rate_limits") ?? []).length ? { anyRateLimits: true } : {}),
            vhRateLimits: vhRateLimitsOf(field(r, "typed_per_filter_config"), rlName) ?? vhMode,
            ...policyOf(field(r, "response_headers_to_add")),
            envoyFilter: "(generated)",
        };
    });
    const vhRl = entriesOfStage(field(vh, "rate_limits"), stage);
    const vhostPolicy = policyValues(field(vh, "response_headers_to_add"));
    return {
        source: "Istio-generated route configuration",
        gateway: readGateway(objects),
        virtualHost,
        routes,
        domain: filter.domain,
        failureModeDeny: filter.failureModeDeny,
        rateLimitHeaders: filter.rateLimitHeaders === true,
        filterNames: [],
        vhostRateLimits: vhRl.length ? [{ rateLimits: vhRl, envoyFilter: "(generated)" }] : [],
        ...(vhostPolicy.length ? { vhostPolicy } : {}),
        stage,
        httpFilterName: rlName,
        ...(filter.cluster ? { service: filter.cluster } : {}),
        config: readConfig(objects, filter.cluster),
    };
}
