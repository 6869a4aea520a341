/**
 * MODEL output: how the gateway model's explanation of a request is printed (npm run explain), the
 * counter's current window and which descriptor's limit binds first. Pure.
 */
import type { DescriptorExplanation, Explanation } from "../gateway-model/model";
import { LIMIT_UNIT_SECONDS, LimitUnit } from "../builders/rule-args";
import { windowStartOfUnit } from "../gateway-model/fixed-window";

/** Start of the fixed, epoch-aligned window containing `nowMs` (seconds since the epoch). */
export const windowStart = windowStartOfUnit;

/** The descriptor whose limit is reached first (the smallest allowance per second), if any. */
export function bindingDescriptor(x: Explanation): DescriptorExplanation | undefined {
    const rate = (d: DescriptorExplanation) => d.limit!.requests / (LIMIT_UNIT_SECONDS[d.limit!.unit as LimitUnit] ?? 1);
    return x.descriptors.filter((d) => d.limit && !d.limit.unlimited && !d.limit.shadow).sort((a, b) => rate(a) - rate(b))[0];
}

/** `<service>.<namespace>` of an Istio outbound cluster name (`outbound|<port>||<host>`), or the name as it is. */
function serviceOfCluster(cluster: string): string {
    const host = cluster.split("|")[3];
    return host ? host.split(".").slice(0, 2).join(".") : cluster;
}

/** Human-readable lines for the CLI. */
export function formatExplanation(x: Explanation, nowMs: number = Date.now()): string {
    const out: string[] = [`${x.method ?? "GET"} ${x.path}`];
    if (x.normalizedPath !== x.path) out.push(`  normalized path: ${x.normalizedPath}`);
    out.push(`  virtual host: ${x.virtualHost}`);
    if (!x.route) {
        out.push("  route: none matches (Envoy answers 404; the rate-limit service is not asked)");
        return out.join("\n");
    }
    out.push(`  route: ${x.route.name ?? "(unnamed)"} (${x.route.virtualService} [${x.route.index}], ${x.route.match})`);
    out.push(
        `  rate_limits: ${x.rateLimitsFrom.level === "none" ? "none" : `from the ${x.rateLimitsFrom.level} (EnvoyFilter ${x.rateLimitsFrom.envoyFilter})`}` +
            (x.rateLimitsFrom.level === "route" ? "; they replace the virtual host's" : ""),
    );
    out.push(`  domain: ${x.domain}`);
    if (!x.descriptors.length) out.push("  descriptors: none (nothing is sent: never limited globally)");
    // The calls the gateway makes: one per rate-limit filter with descriptors, each to its own service.
    if (x.calls.some((c) => c.service))
        out.push(`  calls: ${x.calls.length} (${x.calls.map((c) => `${serviceOfCluster(c.service)}: ${c.descriptors.length} descriptor(s)`).join("; ")})`);
    const binding = bindingDescriptor(x);
    x.descriptors.forEach((d, i) => {
        out.push(`  descriptor ${i + 1}: ${d.entries.map((e) => `${e.key}=${e.value}`).join(", ")}`);
        if (!d.limit) {
            out.push("    limit: none in the config (the service answers OK: never limited)");
        } else if (d.limit.unlimited) {
            out.push(`    limit: unlimited (config entry ${d.limit.entry})`);
        } else {
            out.push(
                `    limit: ${d.limit.requests} per ${d.limit.unit} (config entry ${d.limit.entry})${d.limit.shadow ? " [shadow: counted and reported, never refused]" : ""}${x.descriptors.length > 1 && d === binding ? " <- binds first" : ""}`,
            );
            const w = windowStart(d.limit.unit, nowMs);
            out.push(`    bucket: ${d.bucket!.replace("{window}", String(w))} (window starting ${new Date(w * 1000).toISOString()}, fixed and epoch-aligned)`);
        }
        out.push(...costLines(d));
    });
    out.push(...afterResponseLines(x));
    if (x.descriptors.length > 1) out.push("  every descriptor is counted; the request is refused (429) when any one is over its limit");
    out.push(...headerLines(x));
    for (const v of x.rateLimitPolicy ?? []) out.push(`  RateLimit-Policy: ${v}`);
    return out.join("\n");
}

/** How the headers are written on the wire (HTTP names are case-insensitive; this is Envoy's spelling). */
const HEADER_NAMES: Record<string, string> = {
    "x-ratelimit-limit": "X-RateLimit-Limit",
    "x-ratelimit-remaining": "X-RateLimit-Remaining",
    "x-ratelimit-reset": "X-RateLimit-Reset",
};

/** The rate-limit headers the response carries, per filter (a window's first request). */
function headerLines(x: Explanation): string[] {
    const sets = x.calls.filter((c) => Object.keys(c.responseHeaders).length);
    if (!x.calls.length) return [];
    if (!sets.length) return ["  response headers: no X-RateLimit headers (off, or the tightest limit is hidden by its rule's rateLimitHeaders: false)"];
    return [
        "  response headers (the window's first request; Remaining falls with each request, Reset counts down to the window's end):",
        ...sets.flatMap((c) => [
            ...(sets.length > 1 ? [`    from ${c.filter}:`] : []),
            ...Object.entries(c.responseHeaders).map(([k, v]) => `    ${HEADER_NAMES[k] ?? k}: ${v}`),
        ]),
    ];
}

/** A descriptor's cost (a rule's `cost`): what it takes from the counter. */
function costLines(d: DescriptorExplanation): string[] {
    if (d.hitsAddend === undefined) return [];
    return [d.hitsAddend === 0 ? "    cost: 0 (checked, not counted: the cost is counted after the response)" : `    cost: ${d.hitsAddend} (hits_addend)`];
}

/** The descriptors sent when the response is done: their cost is not known before. */
function afterResponseLines(x: Explanation): string[] {
    return (x.afterResponse ?? []).flatMap((c) =>
        c.descriptors.map(
            (d) =>
                `  after the response: ${d.entries.map((e) => `${e.key}=${e.value}`).join(", ")}, counted after the response: not known before (${d.afterResponse!.format})`,
        ),
    );
}
