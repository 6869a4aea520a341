/**
 * Bounds that keep a failure of the rate-limit service's Redis from spreading (pure, no imports):
 *
 * - Redis's memory: clients choose the paths the per-path counters are keyed by, so a flood of
 *   distinct paths would grow Redis without end (its `maxmemory` defaults to 0, no limit, on 64-bit
 *   builds) until the kernel kills it. `maxmemory` below the container's memory limit and the
 *   `volatile-ttl` policy make Redis evict the counters closest to expiry instead: every key the
 *   rate-limit service writes has a TTL (INCRBY + EXPIRE), so only counters are ever evicted.
 * - The service's Redis timeout: in the pinned envoyproxy/ratelimit, `REDIS_TIMEOUT` (10 s by
 *   default, as long as the gateway's default timeout) bounds only *opening* a connection to Redis
 *   (its dialer); a command on an open connection to a Redis that hangs has no deadline of its own
 *   (measured in the rls tier: tests/rls/redis-bounds.test.ts; upstream's per-operation timeout,
 *   envoyproxy/ratelimit#1188, was not merged). Derived from the gateway's timeout, a Redis that is
 *   gone (its address unreachable) costs each reconnect attempt at most half the gateway's timeout
 *   instead of 10 s. A Redis that hangs with its connections open is bounded only by the gateway's
 *   own `timeout` (then HTTP 500 when fail-closed, or the request passes when fail-open).
 */

/** Memory limit of the Redis container the stack deploys. */
export const REDIS_MEMORY_LIMIT = "256Mi";
export const REDIS_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;
/** `maxmemory` may take at most this share of the container limit (Redis needs room for buffers and fragmentation). */
export const REDIS_MAXMEMORY_SHARE = 0.75;
export const DEFAULT_REDIS_MAXMEMORY = "160mb";
/** Evicts the keys closest to expiry among those with a TTL: every counter has one. */
export const REDIS_EVICTION_POLICY = "volatile-ttl";
/**
 * The per-value store's policy (builders/counter-stores.ts): full, it refuses new writes instead of
 * forgetting counters, the service reports the Redis error (`redis_error`) and the per-value
 * filter lets the request pass; memory comes back as counters expire with their window.
 */
export const PER_VALUE_EVICTION_POLICY = "noeviction";

const UNIT_BYTES: Record<string, number> = { "": 1, k: 1000, kb: 1024, m: 1000 * 1000, mb: 1024 * 1024, g: 1000 * 1000 * 1000, gb: 1024 * 1024 * 1024 };

/** Bytes of a Redis memory setting (`<n>`, `<n>k`, `<n>kb`, `<n>m`, `<n>mb`, `<n>g`, `<n>gb`, case-insensitive), or undefined. */
export function redisMemoryBytes(text: unknown): number | undefined {
    if (typeof text !== "string") return undefined;
    const m = /^([1-9][0-9]{0,14})(k|kb|m|mb|g|gb)?$/i.exec(text.trim());
    if (!m) return undefined;
    return Number(m[1]) * UNIT_BYTES[(m[2] ?? "").toLowerCase()]!;
}

/** Why a `maxmemory` value is refused, or undefined when it is accepted. */
export function redisMaxMemoryProblem(text: unknown): string | undefined {
    const bytes = redisMemoryBytes(text);
    const max = Math.floor(REDIS_MEMORY_LIMIT_BYTES * REDIS_MAXMEMORY_SHARE);
    if (bytes === undefined) return "must be a Redis memory size such as 160mb, 100000kb or 1gb (a whole number with an optional k, kb, m, mb, g or gb)";
    if (bytes < 1024 * 1024) return "must be at least 1mb (Redis needs room for the counters of one window)";
    if (bytes > max)
        return `must be at most ${max / (1024 * 1024)}mb: ${REDIS_MAXMEMORY_SHARE * 100} % of the container's memory limit ${REDIS_MEMORY_LIMIT}, so Redis evicts counters before the kernel kills it`;
    return undefined;
}

/**
 * The arguments of the in-cluster `redis-server`, after the password: no persistence (counters
 * live one window), memory bounded, counters evicted closest-to-expiry first.
 */
export function redisServerArgs(maxMemory: string, policy: string = REDIS_EVICTION_POLICY): string[] {
    return ["--save", "", "--appendonly", "no", "--maxmemory", maxMemory, "--maxmemory-policy", policy];
}

/** The service's `REDIS_TIMEOUT` for a gateway timeout: half of it, at most 1 s (a Go duration in whole milliseconds, at least 1ms). */
export function redisTimeoutFor(gatewayTimeoutSeconds: number): string {
    const ms = Math.max(1, Math.floor(Math.min(1, gatewayTimeoutSeconds / 2) * 1000));
    return `${ms}ms`;
}
