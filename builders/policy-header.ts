/**
 * `RateLimit-Policy` (the IETF draft "RateLimit header fields for HTTP"): the quota policies a
 * client is held to, published on responses before it is ever refused, generated from the same
 * rules as the limits. Each policy is one item `"<name>";q=<quota>;w=<window seconds>`: a rule's
 * name, a named path's path, or `each-path` for the per-path catch-all. No `pk` (partition key)
 * is sent: it would carry client data (an address, an API key).
 *
 * Which limits are published: every rule and per-path limit that can refuse, unless it is hidden
 * (a rule's `rateLimitHeaders: false`, or every rule when the filter's headers are off and the rule
 * does not switch them on). Shadow limits never refuse and are not published. Pure.
 */
import { DeepReadonly } from "../lib/frozen";
import { ResolvedLimit } from "./rule-args";
import { GlobalLimitsPlan } from "./rules";
import { HeaderValueOption } from "./envoy-types";

/** The header's name as Envoy writes it (lower case, as HTTP/2 requires). */
export const RATELIMIT_POLICY_HEADER = "ratelimit-policy";

/** One published policy. */
export interface PolicyItem {
    name: string;
    quota: number;
    windowSeconds: number;
}

/** A structured-field string (RFC 8941): printable ASCII, `"` and `\` escaped; other characters percent-encoded. */
function sfString(s: string): string {
    const ascii = [...String(s)].map((c) => (/[\x20-\x7e]/.test(c) ? c : encodeURIComponent(c))).join("");
    return `"${ascii.replace(/[\\"]/g, "\\$&")}"`;
}

/** The header value of the items, or undefined when there are none. */
export function policyHeaderValue(items: PolicyItem[]): string | undefined {
    return items.length ? items.map((p) => `${sfString(p.name)};q=${p.quota};w=${p.windowSeconds}`).join(", ") : undefined;
}

function item(name: string, l: ResolvedLimit): PolicyItem {
    return { name, quota: l.requests, windowSeconds: l.seconds };
}

/**
 * The policies of a virtual host (`route` undefined: its per-path limits and the rules on no
 * route) or of one named route (the rules placed on it). Rules and limits that failed their checks
 * must be left out by the caller.
 */
export function policyItems(
    input: DeepReadonly<Pick<GlobalLimitsPlan, "rules" | "perPath" | "headersOn">>,
    route?: { name: string; virtualHost: string; namedOnly?: boolean },
): PolicyItem[] {
    // Shown in the headers (resolved: the rule's own setting, else the filter's), and able to refuse (a shadow limit never does).
    const rules = input.rules.filter((r) => !r.shadow && r.rateLimitHeaders);
    // A rule naming no virtual host sits on the route of every virtual host, unless its own patch
    // (virtual host "", every host) already carries it there (`namedOnly`): listed once.
    if (route)
        return rules
            .filter((r) => r.route?.name === route.name && (r.route.virtualHost === route.virtualHost || (r.route.virtualHost === "" && !route.namedOnly)))
            .map((r) => item(r.name, r));
    const perPath = input.perPath;
    const pathsShown = input.headersOn;
    return [
        ...(pathsShown ? (perPath?.paths ?? []).filter((p) => !p.shadow).map((p) => item(p.path, p)) : []),
        ...rules.filter((r) => !r.route).map((r) => item(r.name, r)),
        ...(pathsShown && perPath?.eachPath && !perPath.eachPath.shadow ? [item("each-path", perPath.eachPath)] : []),
    ];
}

/** Envoy's `response_headers_to_add` entry publishing the value (added to what a route or host already adds). */
export function policyHeaderOption(value: string): HeaderValueOption {
    return { header: { key: RATELIMIT_POLICY_HEADER, value }, append_action: "APPEND_IF_EXISTS_OR_ADD" };
}
