/**
 * The rate-limit headers of the gateway MODEL: what Envoy's rate-limit filter adds to a response
 * from the service's answer when `enable_x_ratelimit_headers` is DRAFT_VERSION_03
 * (draft-polli-ratelimit-headers-03). Modelled on Envoy's rate-limit filter (docs/proof/upstream.md):
 *
 * - The status with the fewest remaining requests among those that carry a limit wins (the first
 *   one on a tie); a status without a limit (no config entry) takes no part.
 * - A descriptor's `x_ratelimit_option` (a rule's `rateLimitHeaders`) overrides the filter's
 *   setting for it. When the winning status's descriptor has the headers off, the response gets
 *   none at all: a hidden limit is never revealed, not even by a looser one standing in for it.
 * - `X-RateLimit-Limit`: the winner's limit, then `, <limit>;w=<window seconds>` (with
 *   `;name="<name>"` when the service names the limit) for every shown status with a limit.
 *   `X-RateLimit-Remaining`: the winner's remaining count. `X-RateLimit-Reset`: its seconds to the
 *   end of its window.
 *
 * Pure.
 */
import { LIMIT_UNIT_SECONDS, LimitUnit } from "../builders/rule-args";

/** One status of the service's answer, as the model needs it. */
export interface LimitStatus {
    /** The limit that applied (the service's `current_limit`): `requests` per `unit`. */
    currentLimit?: { requests: number; unit: string; name?: string };
    limitRemaining: number;
    durationUntilResetSeconds?: number;
}

/** What a descriptor's `x_ratelimit_option` says: on, off, or the filter's setting. */
export type HeadersOption = "DRAFT_VERSION_03" | "OFF" | undefined;

/** The window of a unit in seconds (the service's units, upper or lower case); 0 for one Envoy does not know. */
export function windowSeconds(unit: string): number {
    return LIMIT_UNIT_SECONDS[unit.toLowerCase() as LimitUnit] ?? { week: 604_800, month: 2_592_000, year: 31_536_000 }[unit.toLowerCase()] ?? 0;
}

/** The X-RateLimit headers of a response (names in lower case), or `{}` when Envoy adds none. */
export function xRateLimitHeaders(statuses: LimitStatus[], options: HeadersOption[], filterEnabled: boolean): Record<string, string> {
    const shown = (i: number) => (options[i] === undefined ? filterEnabled : options[i] === "DRAFT_VERSION_03");
    let min: number | undefined;
    statuses.forEach((s, i) => {
        if (s.currentLimit && (min === undefined || s.limitRemaining < statuses[min]!.limitRemaining)) min = i;
    });
    if (min === undefined || !shown(min)) return {};
    const policies = statuses
        .map((s, i) => ({ s, i, w: s.currentLimit ? windowSeconds(s.currentLimit.unit) : 0 }))
        .filter(({ s, i, w }) => s.currentLimit && shown(i) && w > 0)
        .map(({ s, w }) => `, ${s.currentLimit!.requests};w=${w}${s.currentLimit!.name ? `;name="${s.currentLimit!.name}"` : ""}`);
    const winner = statuses[min]!;
    return {
        "x-ratelimit-limit": `${winner.currentLimit!.requests}${policies.join("")}`,
        "x-ratelimit-remaining": String(winner.limitRemaining),
        "x-ratelimit-reset": String(winner.durationUntilResetSeconds ?? 0),
    };
}
