/**
 * The explain step of the gateway MODEL: for one request, every rate-limit call the gateway would
 * make (its own filter's, then every other filter's on the listener), each descriptor and the limit
 * it meets. What `npm run explain` prints and the tiers compare.
 */
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { trustedClientAddress } from "./client-address";
import { descriptorFor, lookupLimit, matchText, normalizePath, rateLimitsOf, selectRoute } from "./evaluate";
import { DEFAULT_CLIENT_ADDRESS, Entry, Explanation, GatewayModel, ModelRequest } from "./model";
import { gatewayModel } from "./read-rendered";

/**
 * Explains one request path against a gateway model: its own filter's descriptors, then those of
 * every other rate-limit filter on the listener (`others`), each call to its own service.
 */
export function explainWith(m: GatewayModel, path: string, request: ModelRequest = {}): Explanation {
    const own = explainOne(m, path, request);
    const rest = (m.others ?? []).map((o) => explainOne(o, path, request));
    if (!rest.length) return own;
    const all = [own, ...rest];
    // Where the descriptors came from: the one filter that sends any, else the first filter's view.
    const sending = all.filter((x) => x.descriptors.length);
    return {
        ...own,
        rateLimitsFrom: sending.length === 1 ? sending[0]!.rateLimitsFrom : own.rateLimitsFrom,
        descriptors: all.flatMap((x) => x.descriptors),
        calls: all.flatMap((x) => x.calls),
        limited: all.some((x) => x.limited),
    };
}

function explainOne(m: GatewayModel, path: string, request: ModelRequest): Explanation {
    const normalizedPath = normalizePath(path);
    const sel = selectRoute(m, normalizedPath);
    const base = { path, normalizedPath, virtualHost: m.virtualHost, domain: m.domain };
    if (!sel) return { ...base, route: undefined, rateLimitsFrom: { level: "none" }, descriptors: [], calls: [], limited: false };
    const { route, match } = sel;
    const { rateLimits, level, envoyFilter } = rateLimitsOf(m, route);
    const joined: Record<string, string> = {};
    const first: Record<string, string> = {};
    for (const [name, v] of Object.entries(request.headers ?? {})) {
        const values = Array.isArray(v) ? v : [v];
        if (!values.length) continue;
        joined[name] = values.join(",");
        first[name] = values[0];
    }
    const pseudo = { ":path": normalizedPath, ":method": request.method ?? "GET" };
    const headers = { ...joined, ...pseudo };
    const client = trustedClientAddress({
        peer: request.clientAddress ?? DEFAULT_CLIENT_ADDRESS,
        xForwardedFor: joined["x-forwarded-for"],
        xffNumTrustedHops: request.xffNumTrustedHops,
    });
    const descriptors = rateLimits
        .map((rl) => descriptorFor(rl, headers, client, { ...first, ...pseudo }))
        .filter((d): d is Entry[] => d !== undefined)
        .map((entries) => ({ ...lookupLimit(m.config, m.domain, entries), ...(m.service ? { service: m.service } : {}) }));
    const filter = m.httpFilterName ?? RATELIMIT_FILTER;
    return {
        ...base,
        route: { name: route.name, index: route.index, match: matchText(match), virtualService: m.source },
        rateLimitsFrom: { level, envoyFilter },
        descriptors,
        calls: descriptors.length ? [{ filter, service: m.service ?? "", domain: m.domain, descriptors }] : [],
        limited: descriptors.some((d) => d.limit && !d.limit.unlimited && !d.limit.shadow),
    };
}

/** Explains one request path against the rendered objects. */
export function explain(objects: K8sObject[], path: string, request: ModelRequest = {}): Explanation {
    return explainWith(gatewayModel(objects), path, request);
}
