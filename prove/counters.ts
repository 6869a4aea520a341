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
    private readonly counts = new Map<string, { count: number; end: number }>();
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
        const key = bucket.replace("{window}", String(windowStart));
        const c = this.counts.get(key) ?? { count: 0, end: windowStart + unitSeconds };
        c.count += addend;
        this.counts.set(key, c);
        if (++this.hits % 100_000 === 0) this.prune(now);
        const over = c.count > requests;
        return { key, count: c.count, over, remaining: over ? 0 : requests - c.count, resetSeconds: c.end - now, windowStart };
    }

    /** The count of a counter key (window start filled in); 0 when it has none. */
    count(key: string): number {
        return this.counts.get(key)?.count ?? 0;
    }

    private prune(now: number): void {
        for (const [k, v] of this.counts) if (v.end + KEEP_AFTER_END_SECONDS < now) this.counts.delete(k);
    }
}
