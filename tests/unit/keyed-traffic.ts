/**
 * Deterministic keyed traffic and its oracle, shared by the replay tests of a per-key rule
 * (prove-log-format.test.ts, gateway-access-log.test.ts): the rule counts requests under /api per
 * key per clock minute, those without a key on one counter per client, and refuses beyond 10.
 */
import { fixedWindowStart } from "../../gateway-model/fixed-window";

export interface KeyedRequest {
    timeMs: number;
    method: string;
    path: string;
    key?: string;
    client: string;
}

/** How a traffic is drawn: its seed, start, spacing, paths, how many keys and how they are written. */
export interface TrafficShape {
    seed: number;
    startMs: number;
    maxGapMs: number;
    paths: string[];
    keys: number;
    getShare: number;
    keyOf: (k: number) => string;
    clientOf: (k: number) => string;
}

/** `n` requests of `shape`: a few busy keys (the key index drawn cubed), one in ten without a key. */
export function keyedRequests(n: number, shape: TrafficShape): KeyedRequest[] {
    let s = shape.seed;
    const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const out: KeyedRequest[] = [];
    let t = shape.startMs;
    for (let i = 0; i < n; i++) {
        t += Math.floor(rnd() * shape.maxGapMs);
        const k = Math.floor(rnd() ** 3 * shape.keys);
        out.push({
            timeMs: t,
            method: rnd() < shape.getShare ? "GET" : "POST",
            path: shape.paths[Math.floor(rnd() * shape.paths.length)]!,
            ...(rnd() < 0.9 ? { key: shape.keyOf(k) } : {}),
            client: shape.clientOf(k),
        });
    }
    return out;
}

/**
 * The oracle, from the rule's statement: requests under /api (the path /api, or /api followed by '/'
 * or '?': a path prefix is a whole segment; /apix is not under it) counted per key per minute of the
 * clock, the requests without a key on one counter per client at the same limit; beyond 10, refused.
 */
export function perKeyOracle(rs: KeyedRequest[]): { requests: number; refused: number } {
    const counts = new Map<string, number>();
    let requests = 0;
    let refused = 0;
    for (const r of [...rs].sort((a, b) => a.timeMs - b.timeMs)) {
        if (!(r.path === "/api" || r.path.startsWith("/api/") || r.path.startsWith("/api?"))) continue;
        requests++;
        const k = `${r.key === undefined ? `client ${r.client}` : `key ${r.key}`}@${fixedWindowStart(60, r.timeMs)}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
        if (counts.get(k)! > 10) refused++;
    }
    return { requests, refused };
}
