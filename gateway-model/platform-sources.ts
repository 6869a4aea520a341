/**
 * MODEL: which source a rate-limit call on a shared listener speaks for (gateway-model/listener.ts):
 * a platform team's override or default (builders/platform-filters.ts, by the filter's name), or a
 * team's own limits. A refusal is attributed to the first refusing call in chain order. Pure.
 */
import { PlatformSource, platformSourceOfFilter } from "../builders/platform-filters";
import { FilterCall } from "./listener";

/** Who a call (and a refusal by its service) speaks for. */
export type LimitSource = "platform override" | "platform default" | "team";

/** The source of one call, by its filter's name. */
export function sourceOfCall(c: FilterCall): LimitSource {
    const s = platformSourceOfFilter(c.filter.name);
    if (s === PlatformSource.Overrides) return "platform override";
    if (s === PlatformSource.Defaults) return "platform default";
    return "team";
}

/** The sources whose services a request calls, in chain order (each once). */
export function sourcesCalled(calls: FilterCall[]): LimitSource[] {
    const out: LimitSource[] = [];
    for (const c of calls) if (c.descriptors.length && !out.includes(sourceOfCall(c))) out.push(sourceOfCall(c));
    return out;
}

/**
 * Who refuses a request, given which services answer over the limit (cluster names): the first
 * call in chain order (Envoy stops the request at the first 429) whose service refuses; undefined
 * when none does.
 */
export function refusedBy(calls: FilterCall[], overLimit: ReadonlySet<string>): LimitSource | undefined {
    const c = calls.find((x) => x.descriptors.length && overLimit.has(x.filter.cluster));
    return c ? sourceOfCall(c) : undefined;
}
