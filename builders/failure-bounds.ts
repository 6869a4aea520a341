/**
 * Bounds that keep a failure of the rate-limit service's Redis from spreading (pure, no imports):
 *
 * - Redis's memory: clients choose the paths the per-path counters are keyed by, so a flood of
 *   distinct paths would grow Redis without end (its `maxmemory` defaults to 0, no limit, on 64-bit
 *   builds) until the kernel kills it. `maxmemory` below the container's memory limit and the
 *   `volatile-ttl` policy make Redis evict the counters closest to expiry instead: every key the
 *   rate-limit service writes has a TTL (INCRBY + EXPIRE), so only counters are ever evicted.
 * - The service's Redis timeout: in the pinned envoyproxy/ratelimit, `REDIS_TIMEOUT` (10 s by
 *   default) bounds only *opening* a connection to Redis (its dialer's TCP connect); a command on an
 *   open connection to a Redis that hangs has no deadline of its own (measured in the rls tier:
 *   tests/rls/redis-bounds.test.ts; upstream's per-operation timeout, envoyproxy/ratelimit#1188, was
 *   not merged). The service opens its pool at start and panics when one dial fails, so the bound
 *   must outlast a connect whose first SYN is lost (Linux resends it after 1 s): 2 s. Derived from
 *   the gateway's timeout (half of it, 25 ms for a 50 ms filter), it crashed the service at start
 *   under load (tests/rls/service-start.test.ts). The gateway's own `timeout` is what bounds a
 *   request while Redis is gone or hangs (then HTTP 500 when fail-closed, or the request passes
 *   when fail-open), whatever the dial bound.
 */

/** Memory limit of the Redis container the stack deploys. */
export const REDIS_MEMORY_LIMIT = "256Mi";
export const REDIS_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;
/** `maxmemory` may take at most this share of the container limit (Redis needs room for buffers and fragmentation). */
export const REDIS_MAXMEMORY_SHARE = 0.75;
/** Evicts the keys closest to expiry among those with a TTL: every counter has one. */
export const REDIS_EVICTION_POLICY = "volatile-ttl";
/**
 * The per-value store's policy (builders/counter-stores.ts): full, it evicts the least frequently
 * used counter and every write goes on. `noeviction` (the earlier choice) refused INCRBY even on
 * counters that exist, so a flood turned every per-value limit off while the filter failed open.
 * Redis's LFU counts accesses per key: a new key starts at 5 (`LFU_INIT_VAL`), and the service's
 * INCRBY and EXPIRE of each decision are two more. With `lfu-log-factor 0` every access counts
 * (the default 10 makes the second decision count with probability 1/11, so a key used twice looks
 * like a flood key) and with `lfu-decay-time 0` nothing decays (a counter lives one window plus
 * the jitter: what it was used in that window is what matters). A flood key, used once, ties only
 * with counters used once; a counter used k times outlives every key used fewer times.
 */
export const PER_VALUE_EVICTION_POLICY = "allkeys-lfu";
/**
 * The policy of a store: by use (`PER_VALUE_EVICTION_POLICY`) when it holds any per-value counter,
 * whatever the layout (split, single, a platform's); a store of fixed counters only keeps `REDIS_EVICTION_POLICY`.
 */
export function evictionPolicyFor(holdsPerValue: boolean): string {
    return holdsPerValue ? PER_VALUE_EVICTION_POLICY : REDIS_EVICTION_POLICY;
}
/** The LFU settings of the per-value store: every access counted, none forgotten while the key lives. */
export const PER_VALUE_LFU_ARGS: readonly string[] = ["--lfu-log-factor", "0", "--lfu-decay-time", "0"];

/** The service's own default `EXPIRATION_JITTER_MAX_SECONDS`, whatever the window. */
export const UPSTREAM_JITTER_MAX_SECONDS = 300;

/**
 * `EXPIRATION_JITTER_MAX_SECONDS` for a service whose config holds windows of `windows` seconds:
 * a tenth of the shortest, at least 1 and at most the service's own 300. The jitter spreads the
 * expiry of counters written in one burst; a counter's TTL is its window plus up to the jitter, so
 * memory held per counter grows with it (300 s made a 60 s counter live up to 6 times its window).
 */
export function expirationJitterFor(windows: number[]): number {
    const shortest = windows.length ? Math.min(...windows) : 1;
    return Math.min(UPSTREAM_JITTER_MAX_SECONDS, Math.max(1, Math.floor(shortest / 10)));
}

/**
 * Bytes one counter takes in Redis, as `used_memory` counts it at `maxmemory` (measured on
 * redis-server 7.0.15 with jemalloc 5.3, counters written by INCRBY + EXPIRE until the store evicts,
 * at 8mb, 32mb and 160mb: 142 B to 151 B for a 40-byte key, 225 B to 231 B for 120 bytes, 1,378 B to
 * 1,407 B for 1,061 bytes; docs/proof/benchmarks.md): the key's and its expiry's dictionary entries,
 * the value, both tables' buckets (about 100 B) and the key's allocation, which jemalloc's size
 * classes round up by at most a quarter (1.25 B per key byte). Within 10 % above every measured size.
 */
export const COUNTER_FIXED_BYTES = 100;
export const COUNTER_BYTES_PER_KEY_BYTE = 1.25;
export function counterBytes(keyBytes: number): number {
    return Math.ceil(COUNTER_FIXED_BYTES + COUNTER_BYTES_PER_KEY_BYTE * keyBytes);
}
/** What a store holds besides its counters: an empty redis-server's `used_memory` (0.87 MiB measured) and its clients' buffers. */
export const REDIS_BASE_BYTES = 1024 * 1024;
/**
 * Redis's use counter (LFU) of a key stops at 255: a key written by a decision's INCRBY starts at 5
 * and, with `lfu-log-factor 0`, every access after it adds one (the EXPIRE, then each later decision's
 * INCRBY and EXPIRE). Measured (OBJECT FREQ): 6 after one decision, 204 after 100, 255 from 126 on. A
 * counter used this many times is as hot as the store can tell, so a flood whose values are each used
 * as often ties with it: "k times" stops here.
 */
export const LFU_CEILING_USES = 126;

/** What the per-value store must hold: `rate` new counters a second, each living `window + jitter` seconds. */
export interface StoreSizing {
    newValuesPerSecond: number;
    windowSeconds: number;
    jitterSeconds: number;
    keyBytes: number;
}

/** `maxmemory` (in whole mb) that holds every live counter of `s`: base + rate × (window + jitter) × counter bytes. */
export function maxMemoryFor(s: StoreSizing): { bytes: number; maxMemory: string } {
    const bytes = REDIS_BASE_BYTES + s.newValuesPerSecond * (s.windowSeconds + s.jitterSeconds) * counterBytes(s.keyBytes);
    const mb = Math.max(1, Math.ceil(bytes / (1024 * 1024)));
    return { bytes, maxMemory: `${mb}mb` };
}

/** How many counters of `keyBytes` a `maxmemory` of `bytes` holds. */
export function countersHeld(bytes: number, keyBytes: number): number {
    return Math.max(0, Math.floor((bytes - REDIS_BASE_BYTES) / counterBytes(keyBytes)));
}

const UNIT_BYTES: Record<string, number> = { "": 1, k: 1000, kb: 1024, m: 1000 * 1000, mb: 1024 * 1024, g: 1000 * 1000 * 1000, gb: 1024 * 1024 * 1024 };

/** Bytes of a Redis memory setting (`<n>`, `<n>k`, `<n>kb`, `<n>m`, `<n>mb`, `<n>g`, `<n>gb`, case-insensitive), or undefined. */
export function redisMemoryBytes(text: unknown): number | undefined {
    if (typeof text !== "string") return undefined;
    const m = /^([1-9][0-9]{0,14})(k|kb|m|mb|g|gb)?$/i.exec(text.trim());
    if (!m) return undefined;
    return Number(m[1]) * UNIT_BYTES[(m[2] ?? "").toLowerCase()]!;
}

/**
 * The arguments of the in-cluster `redis-server`, after the password: no persistence (counters
 * live one window), memory bounded, counters evicted closest-to-expiry first (the fixed store) or
 * least frequently used first (the per-value store, with its LFU settings).
 */
export function redisServerArgs(maxMemory: string, policy: string): string[] {
    const lfu = policy === PER_VALUE_EVICTION_POLICY ? PER_VALUE_LFU_ARGS : [];
    return ["--save", "", "--appendonly", "no", "--maxmemory", maxMemory, "--maxmemory-policy", policy, ...lfu];
}

/** Linux's first SYN retransmission (`TCP_TIMEOUT_INIT`): a connect whose first SYN is lost completes after it at the earliest. */
export const SYN_RETRANSMIT_MS = 1000;
/**
 * The service's `REDIS_TIMEOUT` (a Go duration): its dial bound, the same for every gateway
 * timeout. Twice the first SYN retransmission: a dial that loses one SYN still connects, so the
 * service's start (every pool connection dialed, a failed dial a panic) survives a loaded node.
 */
export const REDIS_TIMEOUT = `${2 * SYN_RETRANSMIT_MS}ms`;
