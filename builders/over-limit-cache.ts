/**
 * The rate-limit service's over-limit cache (`LOCAL_CACHE_SIZE_IN_BYTES`), sized for a store that
 * holds per-value counters. Pure: no imports, no I/O.
 *
 * In the pinned envoyproxy/ratelimit a key that goes over its limit is put in a freecache of that
 * size for its unit's length; while it is there the service refuses it without touching Redis. So
 * a spent counter's use count in Redis stops at its limit + 1, as low as a flood value used that
 * often (Redis evicts by use: builders/failure-bounds.ts), and only the cache keeps it refused once
 * Redis has evicted it. The cache forgets it when a flood's own over-limit keys fill its slice:
 * freecache splits its bytes into 256 segments by the key's hash, each a ring that drops its oldest
 * entry first, an entry taking 24 B of header, the key and 1 B of (empty) value.
 *
 * Sized here so that every segment holds `OVER_LIMIT_CACHE_FLOOD_FACTOR` times its share of the
 * counters the store holds (plus 4 standard deviations of a random key's spread over the
 * segments): a flood that could not push a spent key out of the cache must create more over-limit
 * keys than that, each costing its rule's limit + 1 requests.
 */

/** freecache's segments, and its header per entry plus the 1-byte capacity of an empty value. */
export const FREECACHE_SEGMENTS = 256;
export const FREECACHE_ENTRY_OVERHEAD_BYTES = 25;
/** freecache's own minimum size; 1 MiB is the service's setting for a store of fixed counters only. */
export const FREECACHE_MIN_BYTES = 512 * 1024;
export const OVER_LIMIT_CACHE_DEFAULT_BYTES = 1024 * 1024;
/**
 * How many over-limit keys per counter the store holds the cache keeps: a flood needs this many
 * times the store's counters, all over their own limit, to make the service forget a spent key.
 */
export const OVER_LIMIT_CACHE_FLOOD_FACTOR = 4;
/** The bound of the cache in the service's container (its memory limit is 256 MiB): 64 MiB. */
export const OVER_LIMIT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** Entries of keys of `keyBytes` one segment of a cache of `bytes` holds. */
export function entriesPerSegment(bytes: number, keyBytes: number): number {
    return Math.floor(Math.floor(Math.max(bytes, FREECACHE_MIN_BYTES) / FREECACHE_SEGMENTS) / (FREECACHE_ENTRY_OVERHEAD_BYTES + keyBytes));
}

/** Entries per segment that `keys` random keys fill at most (their mean share plus 4 standard deviations). */
function spread(keys: number): number {
    const mean = keys / FREECACHE_SEGMENTS;
    return Math.ceil(mean + 4 * Math.sqrt(mean));
}

/**
 * `LOCAL_CACHE_SIZE_IN_BYTES` for a store holding `countersHeld` counters of keys up to `keyBytes`:
 * every segment holds `OVER_LIMIT_CACHE_FLOOD_FACTOR` × its share of them (random spread included),
 * in whole MiB, at least the 1 MiB of a fixed store and at most `OVER_LIMIT_CACHE_MAX_BYTES`.
 */
export function overLimitCacheBytes(countersHeld: number, keyBytes: number): number {
    const perSegment = spread(OVER_LIMIT_CACHE_FLOOD_FACTOR * countersHeld) * (FREECACHE_ENTRY_OVERHEAD_BYTES + keyBytes);
    const mib = Math.ceil((perSegment * FREECACHE_SEGMENTS) / (1024 * 1024));
    return Math.min(OVER_LIMIT_CACHE_MAX_BYTES, Math.max(OVER_LIMIT_CACHE_DEFAULT_BYTES, mib * 1024 * 1024));
}

/**
 * Over-limit keys of `keyBytes` a random (untargeted) flood may create while a cache of `bytes`
 * still keeps a key it refused before: the largest count whose spread fits every segment.
 */
export function overLimitKeysKept(bytes: number, keyBytes: number): number {
    const per = entriesPerSegment(bytes, keyBytes);
    // mean + 4√mean <= per - 1 (the kept key's own entry), solved for the mean.
    const room = Math.max(0, per - 1);
    const root = -2 + Math.sqrt(4 + room);
    return Math.max(0, Math.floor(root * root * FREECACHE_SEGMENTS));
}

/**
 * Requests a random flood must send to make the service forget a spent counter of a rule allowing
 * `limit` per window, in a store of `countersHeld` counters and a cache of `cacheBytes`, when the
 * cheapest rule of that service allows `cheapestLimit`: both Redis must evict it (as many values
 * as the store holds, each used `limit` + 1 times, as often as it was) and the cache must drop it
 * (more over-limit keys than it keeps, each `cheapestLimit` + 1 requests).
 */
export function spentCounterAttackRequests(a: { limit: number; cheapestLimit: number; countersHeld: number; cacheBytes: number; keyBytes: number }): number {
    const redis = (a.limit + 1) * a.countersHeld;
    const cache = (a.cheapestLimit + 1) * (overLimitKeysKept(a.cacheBytes, a.keyBytes) + 1);
    return Math.max(redis, cache);
}
