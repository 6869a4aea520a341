/**
 * The rate-limit service's fixed windows, the one place they are computed: a window of a limit's
 * unit is aligned to the epoch, and the window holding a request starts at the request's time in
 * whole seconds rounded down to a multiple of the unit's seconds (envoyproxy/ratelimit's counter
 * key ends with that start). The counter model, explain's counter keys and the test tiers all read
 * it from here. Pure.
 */
import { LIMIT_UNIT_SECONDS, LimitUnit } from "../builders/rule-args";

/** The start (seconds since the epoch) of the fixed window of `unitSeconds` holding `nowMs` (ms since the epoch). */
export function fixedWindowStart(unitSeconds: number, nowMs: number): number {
    if (!(unitSeconds > 0)) throw new Error(`a fixed window needs a length of at least one second, got ${unitSeconds}`);
    return Math.floor(Math.floor(nowMs / 1000) / unitSeconds) * unitSeconds;
}

/** The start (seconds since the epoch) of the window of a rule's `unit` (lower case, as rules write it) holding `nowMs`. */
export function windowStartOfUnit(unit: string, nowMs: number): number {
    const d = LIMIT_UNIT_SECONDS[unit as LimitUnit];
    if (!d) throw new Error(`unit ${unit} has no fixed window length in this model`);
    return fixedWindowStart(d, nowMs);
}
