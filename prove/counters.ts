/**
 * A MODEL of envoyproxy/ratelimit's fixed-window counters (its Redis cache, no Redis here): each
 * counter's key is `<domain>_<key>_<value>..._<window start>`, the window start being the request's
 * time in seconds rounded down to a whole number of the limit's unit since the epoch; a hit adds one,
 * and the descriptor is over its limit when the count after the hit exceeds `requests_per_unit`.
 * The answer's `limit_remaining` is what is left after the hit (0 when over) and
 * `duration_until_reset` the seconds to the window's end. Pure state, no I/O; time is given.
 */
import { windowSeconds } from "../gateway-model/rate-limit-headers";
import { fixedWindowStart } from "../gateway-model/fixed-window";

/** One counter's state after a hit. */
export interface CounterHit {
    /** The service's counter key, its window start filled in. */
    key: string;
    count: number;
    over: boolean;
    remaining: number;
    /** Seconds to the window's end (the service's `duration_until_reset`). */
    resetSeconds: number;
    windowStart: number;
}

/**
 * Counters this many seconds past their window's end are dropped (every 100,000 hits). Replay
 * sends a log's requests in time order, so an ended window is never hit again; the margin serves
 * callers whose times go back a little.
 */
const KEEP_AFTER_END_SECONDS = 300;

export class FixedWindowCounters {
    /**
     * The counts per window start, each window's counters keyed by their bucket (the key before its
     * window start is filled in) and holding a bare number: a million clients' counters are a
     * million map entries, not a million objects and key strings more. `end`: the latest end of a
     * limit counted in the window (a bucket has one limit, so one unit).
     */
    private readonly windows = new Map<number, { end: number; counts: Map<string, number> }>();
    private hits = 0;

    /**
     * Adds one hit to the counter `bucket` (its key with `{window}` for the window start) at
     * `nowMs`, for a limit of `requests` per `unit`. `addend`: what the hit takes (a rule's
     * cost, Envoy's `hits_addend`; 0 checks the counter without taking from it).
     */
    hit(bucket: string, unit: string, requests: number, nowMs: number, addend = 1): CounterHit {
        const unitSeconds = windowSeconds(unit);
        if (!unitSeconds) throw new Error(`unit '${unit}' has no fixed window in this model`);
        const now = Math.floor(nowMs / 1000);
        const windowStart = fixedWindowStart(unitSeconds, nowMs);
        const end = windowStart + unitSeconds;
        let w = this.windows.get(windowStart);
        if (!w) this.windows.set(windowStart, (w = { end, counts: new Map() }));
        else if (w.end < end) w.end = end;
        const count = (w.counts.get(bucket) ?? 0) + addend;
        w.counts.set(bucket, count);
        if (++this.hits % 100_000 === 0) this.prune(now);
        const over = count > requests;
        return {
            key: bucket.replace("{window}", String(windowStart)),
            count,
            over,
            remaining: over ? 0 : requests - count,
            resetSeconds: end - now,
            windowStart,
        };
    }

    private prune(now: number): void {
        for (const [start, w] of this.windows) if (w.end + KEEP_AFTER_END_SECONDS < now) this.windows.delete(start);
    }
}
