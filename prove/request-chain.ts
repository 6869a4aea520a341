/**
 * The rate-limit calls a gateway makes for one request shape, in chain order: the platform's
 * overrides (first in the chain), the team filters (lower stage first), the platform's defaults
 * (last); with the notes on them and what the model approximates of them (prove/approximations.ts).
 * Pure.
 */
import { explainWith } from "../gateway-model/explain";
import { AppliedLimit, DescriptorExplanation, Entry, GatewayModel, ModelRequest } from "../gateway-model/model";
import { platformCalls, platformRuleOf } from "../gateway-model/platform-calls";
import { LimitSource } from "../gateway-model/platform-sources";
import { platformSourceOfFilter } from "../builders/platform-filters";
import { K8sObject } from "../lib/k8s-object";
import { Approximation } from "./approximations";
import type { ProveRequest } from "./prove-request";

/** The rule a descriptor counts for. */
export function ruleOf(entries: Entry[], limit?: AppliedLimit): string {
    if (entries[0]?.key === "rule") return entries[0].value;
    const platform = platformRuleOf(entries);
    if (platform !== undefined) return platform;
    return limit?.entry ?? entries.map((e) => `${e.key}=${e.value}`).join(", ");
}

/** One rate-limit filter's call: its descriptors, and whose limits they are (a team's, the platform's). */
export interface PlannedFilter {
    rateLimitHeaders: boolean;
    descriptors: DescriptorExplanation[];
    source?: LimitSource;
    /** The headers of its refusals (a platform filter's `RateLimit-Policy`). */
    refusalHeaders?: Record<string, string>;
}

/**
 * The team filters' calls (lower stage first) between the platform's overrides (first in the chain)
 * and defaults (last), with a note on whether the platform's defaults are on here.
 */
export function chainOf(
    objects: K8sObject[],
    m: GatewayModel,
    route: string,
    r: ProveRequest,
    request: ModelRequest,
): { filters: PlannedFilter[]; notes: string[]; approximations: Approximation[] } {
    const laterNotes: string[] = [];
    const approximations: Approximation[] = [];
    const team: PlannedFilter[] = [{ ...m, others: undefined }, ...(m.others ?? [])]
        .filter((f) => f.httpFilterName === undefined || platformSourceOfFilter(f.httpFilterName) === undefined)
        .sort((a, b) => (a.stage ?? 0) - (b.stage ?? 0))
        .map((f) => ({ f, x: explainWith(f, r.path, request) }))
        .map(({ f, x }) => {
            for (const later of x.afterResponse ?? [])
                for (const d of later.descriptors) {
                    const rule = ruleOf(d.entries, d.limit);
                    laterNotes.push(
                        `rule ${rule} counts a cost from the response (${d.afterResponse?.format}) when the response is done: not counted here (the model has no response); until then the request is checked against that budget without taking from it`,
                    );
                    approximations.push({
                        rule,
                        what: "its cost is read from the response, which the model does not have: the request took nothing from the counter",
                    });
                }
            return { rateLimitHeaders: f.rateLimitHeaders === true, descriptors: x.descriptors };
        });
    const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]));
    const platform = platformCalls(
        objects,
        { port: m.gateway.port, labels: m.gateway.selector, virtualHost: m.virtualHost, route },
        { path: r.path, headers, ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}) },
    );
    const notes = platform.map((p) =>
        p.disabled
            ? `the ${p.source} limits are off on ${m.virtualHost}: a team's own limits replace them here`
            : `the ${p.source} limits apply on ${m.virtualHost}`,
    );
    const filters: PlannedFilter[] = [
        ...platform.filter((p) => p.source === "platform override"),
        // A team's source is named only beside a platform's limits.
        ...team.map((f) => (platform.length ? { ...f, source: "team" as const } : f)),
        ...platform.filter((p) => p.source === "platform default"),
    ].filter((f) => f.descriptors.length);
    return { filters, notes: [...notes, ...laterNotes], approximations };
}
