/**
 * The explain step of the gateway MODEL: for one request, every rate-limit call the gateway would
 * make (its own filter's, then every other filter's on the listener), each descriptor and the limit
 * it meets. What `npm run explain` prints and the tiers compare.
 */
import { jwtDynamicMetadata } from "./jwt-metadata-model";
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { trustedClientAddress } from "./client-address";
import { entryCost } from "./request-cost-model";
import { descriptorFor, lookupLimit, matchText, normalizePath, rateLimitsOf, selectRoute } from "./evaluate";
import { DEFAULT_CLIENT_ADDRESS, Entry, Explanation, GatewayModel, ModelRequest, ModelRoute } from "./model";
import { field } from "../builders/rendered-config";
import { HeadersOption, LimitStatus, windowSeconds, xRateLimitHeaders } from "./rate-limit-headers";

/**
 * The response's RateLimit-Policy values on a route: the route's own, then the virtual host's. They
 * belong to the route and virtual host, not to one filter: every filter's model reads the same
 * patches, so `explainWith` keeps its own filter's.
 */
function policyOf(route: ModelRoute, m: GatewayModel): Pick<Explanation, "rateLimitPolicy"> {
    const values = [...(route.policy ?? []), ...(m.vhostPolicy ?? [])];
    return values.length ? { rateLimitPolicy: values } : {};
}

/** A `x_ratelimit_option` as JSON gives it (name or number). */
function headersOptionOf(v: unknown): HeadersOption {
    if (v === "OFF" || v === 1) return "OFF";
    if (v === "DRAFT_VERSION_03" || v === 2) return "DRAFT_VERSION_03";
    return undefined;
}
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
        ...(all.some((x) => x.afterResponse) ? { afterResponse: all.flatMap((x) => x.afterResponse ?? []) } : {}),
    };
}

/** A request's headers as the actions read them: each repeated header's values joined by commas, and its first value. */
function requestHeaders(request: ModelRequest): { joined: Record<string, string>; first: Record<string, string> } {
    const joined: Record<string, string> = {};
    const first: Record<string, string> = {};
    for (const [name, v] of Object.entries(request.headers ?? {})) {
        const values = Array.isArray(v) ? v : [v];
        if (!values.length) continue;
        joined[name] = values.join(",");
        first[name] = values[0];
    }
    return { joined, first };
}

function explainOne(m: GatewayModel, path: string, request: ModelRequest): Explanation {
    const normalizedPath = normalizePath(path, m.pathNormalization);
    const sel = selectRoute(m, normalizedPath);
    const base = { ...(request.method ? { method: request.method } : {}), path, normalizedPath, virtualHost: m.virtualHost, domain: m.domain };
    if (!sel) return { ...base, route: undefined, rateLimitsFrom: { level: "none" }, descriptors: [], calls: [], limited: false };
    const { route, match } = sel;
    const { rateLimits, level, envoyFilter } = rateLimitsOf(m, route);
    const { joined, first } = requestHeaders(request);
    const pseudo = { ":path": normalizedPath, ":method": request.method ?? "GET" };
    const client = trustedClientAddress({
        peer: request.clientAddress ?? DEFAULT_CLIENT_ADDRESS,
        xForwardedFor: joined["x-forwarded-for"],
        xffNumTrustedHops: request.xffNumTrustedHops,
    });
    const all = rateLimits
        .map((rl) => ({
            rl,
            entries: descriptorFor(rl, { ...joined, ...pseudo }, client, { ...first, ...pseudo }, jwtDynamicMetadata(request.jwtPayload)),
            cost: entryCost(rl, first),
        }))
        .filter((d): d is { rl: any; entries: Entry[]; cost: ReturnType<typeof entryCost> } => d.entries !== undefined && d.cost.kind !== "dropped")
        .map(({ rl, entries, cost }) => {
            const option = headersOptionOf(field(rl, "x_ratelimit_option"));
            return {
                ...lookupLimit(m.config, m.domain, entries),
                ...(m.service ? { service: m.service } : {}),
                ...(option ? { headersOption: option } : {}),
                ...(cost.kind === "known" ? { hitsAddend: cost.hitsAddend } : {}),
                ...(cost.kind === "after-response" ? { afterResponse: { format: cost.format } } : {}),
            };
        });
    const descriptors = all.filter((d) => !d.afterResponse);
    const later = all.filter((d) => d.afterResponse);
    const filter = m.httpFilterName ?? RATELIMIT_FILTER;
    // The window's first request: each limit has all but this request left, its whole window to go.
    const statuses: LimitStatus[] = descriptors.map((d) =>
        d.limit && !d.limit.unlimited
            ? {
                  currentLimit: { requests: d.limit.requests, unit: d.limit.unit },
                  limitRemaining: Math.max(0, d.limit.requests - 1),
                  durationUntilResetSeconds: windowSeconds(d.limit.unit),
              }
            : { limitRemaining: 0 },
    );
    const responseHeaders = xRateLimitHeaders(
        statuses,
        descriptors.map((d) => d.headersOption),
        m.rateLimitHeaders === true,
    );
    return {
        ...base,
        route: { name: route.name, index: route.index, match: matchText(match), virtualService: m.source },
        rateLimitsFrom: { level, envoyFilter },
        descriptors,
        calls: descriptors.length ? [{ filter, service: m.service ?? "", domain: m.domain, descriptors, responseHeaders }] : [],
        ...policyOf(route, m),
        limited: descriptors.some((d) => d.limit && !d.limit.unlimited && !d.limit.shadow),
        ...(later.length ? { afterResponse: [{ filter, service: m.service ?? "", domain: m.domain, descriptors: later }] } : {}),
    };
}

/** Explains one request path against the rendered objects. */
export function explain(objects: K8sObject[], path: string, request: ModelRequest = {}): Explanation {
    return explainWith(gatewayModel(objects), path, request);
}
