/**
 * The effective limits, as a table users can read (stack output and `npm run render`).
 */
import { LOCAL_RATE_LIMIT_HEADER } from "../builders/envoy-filters";
import { PRE_LIMIT_HEADER, PRE_LIMIT_HEADER_VALUE, preLimitPlan } from "../builders/pre-limit";
import { compileGlobalLimits } from "../components/global-ratelimit/limits-plan";
import { resolveLimit } from "../components/rules/rule-checks";
import { MeshMode, descriptorLimit } from "../components/common/mesh-enums";
import { CounterStore, hasBothKinds } from "../builders/counter-stores";
import { StackSettings } from "./settings-types";
import { globalLimitsFromSettings } from "./spec-limits";

export interface LimitRow {
    scope: "global" | "local";
    /** What is counted. */
    match: string;
    limit: string;
    /** Where it is enforced and how a refusal looks. */
    enforcedBy: string;
}

export function effectiveLimits(s: StackSettings): LimitRow[] {
    const gw = `ingress gateway (${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}), 429`;
    const buckets =
        s.global.preLimit && !s.ratelimit.shadowMode ? preLimitPlan(compileGlobalLimits(globalLimitsFromSettings(s)).plannedDescriptors).buckets : [];
    const split = s.global.counterStore === CounterStore.Split && hasBothKinds(globalLimitsFromSettings(s));
    const rows: LimitRow[] = s.global.descriptors.map((d) => {
        let match: string;
        const query = s.global.pathKey === "literal" ? "; the query counts as part of the path" : ", with or without a query";
        if (d.value === undefined)
            match =
                s.global.pathKey === "literal"
                    ? `any other :path, query included (each its own counter) [${d.key}]`
                    : `any other path (each path its own counter, query ignored${apiOther(s)}) [${d.key}]`;
        else if (s.global.apiRoute && d.value === s.global.apiRoute.descriptorValue)
            match = `paths matching ${s.global.apiRoute.regex} on route '${s.global.apiRoute.route}'${query}, shared [${d.key}=${d.value}]`;
        else match = `path ${d.value}${query} [${d.key}=${d.value}]`;
        // The gateway's pre-limit bucket for this descriptor, from the same compiled limits GlobalRateLimit gets.
        const b = buckets.find((x) => x.entries.length === 1 && x.entries[0]!.key === d.key && x.entries[0]!.value === d.value);
        const pre = b
            ? `; pre-limit first: ${b.maxTokens} per gateway pod, +${b.tokensPerFill} per ${b.fillInterval} (429, ${PRE_LIMIT_HEADER}: ${PRE_LIMIT_HEADER_VALUE})`
            : "";
        // With the per-path counters in a store of their own, say which service counts each row.
        const perValue = split && d.value === undefined;
        const service = split ? `; service ${s.ratelimit.serviceName}${perValue ? "-per-value (its own Redis)" : ""}` : "";
        const l = resolveLimit(descriptorLimit(d));
        return { scope: "global", match, limit: `${l.requests}/${l.unit}`, enforcedBy: `${gw}; domain '${s.global.domain}'${service}${pre}` };
    });
    // No bucket without `local.enabled`: the table says only what is enforced. Ambient: on the waypoint, per waypoint pod.
    const ambient = s.meshMode === MeshMode.Ambient;
    if (s.local.enabled !== false)
        rows.push({
            scope: "local",
            match: ambient
                ? `HTTP to Service ${s.local.serviceLabel}:${s.local.port} through its waypoint (${s.local.placement})`
                : `inbound HTTP to app=${s.local.serviceLabel}:${s.local.port} (${s.local.placement})`,
            limit: `${s.local.bucket}/${s.local.fillInterval} per ${ambient ? "waypoint pod" : "pod"}`,
            enforcedBy: `${ambient ? "waypoint (EnvoyFilter on a waypoint: unsupported upstream)" : "sidecar"}, 429 with ${LOCAL_RATE_LIMIT_HEADER}: true`,
        });
    return rows;
}

/**
 * What the catch-all says of the api route's paths: with one store they count there too; split,
 * those the api limit counts are left out (it refuses first: builders/counter-stores.ts).
 */
function apiOther(s: StackSettings): string {
    const api = s.global.apiRoute;
    if (!api) return "";
    if (s.global.counterStore === CounterStore.Split && s.global.pathKey !== "literal") return `; '${api.route}' route paths the api limit counts are left out`;
    return `; '${api.route}' route paths count here too`;
}

export function formatLimits(rows: LimitRow[]): string {
    const header = ["scope", "match", "limit", "enforced by"];
    const cells = rows.map((r) => [r.scope, r.match, r.limit, r.enforcedBy]);
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
    const line = (c: string[]) =>
        c
            .map((v, i) => v.padEnd(widths[i]))
            .join("  ")
            .trimEnd();
    return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}
