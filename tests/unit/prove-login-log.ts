/**
 * A generated access log for the replay tests (unit, consumer and rls tiers): several clients
 * sending POSTs and GETs to /login and other paths over a few minutes, in Istio's default text
 * format, and the refusals an independent oracle expects of "POST /login at 5 a minute per client"
 * (fixed windows aligned to the epoch's minutes, counted per client address). The oracle is written
 * from that statement, not from the code under test.
 */

/** A deterministic pseudo-random sequence (a linear congruential generator), so every run writes the same log. */
function lcg(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 2 ** 32;
    };
}

export interface LoginLog {
    text: string;
    lines: { timeMs: number; method: string; path: string; client: string }[];
}

const PATHS = ["/login", "/login", "/login", "/login?next=/cart", "/cart", "/", "/login/help"];

/** `count` lines from `clients` clients starting at `startMs`, about `spanMinutes` long. */
export function loginLog(count: number, opts: { clients?: number; startMs?: number; spanMinutes?: number; seed?: number } = {}): LoginLog {
    const rnd = lcg(opts.seed ?? 46);
    const clients = Array.from({ length: opts.clients ?? 12 }, (_, i) => `203.0.113.${10 + i}`);
    let t = opts.startMs ?? Date.UTC(2026, 10, 27, 9, 0, 30);
    const step = ((opts.spanMinutes ?? 4) * 60_000) / count;
    const lines: LoginLog["lines"] = [];
    for (let i = 0; i < count; i++) {
        t += Math.floor(rnd() * 2 * step);
        // A few busy clients send most of the traffic.
        const client = clients[Math.floor(rnd() ** 2 * clients.length)]!;
        const method = rnd() < 0.6 ? "POST" : "GET";
        lines.push({ timeMs: t, method, path: PATHS[Math.floor(rnd() * PATHS.length)]!, client });
    }
    const text = lines.map((l, i) => istioText(l, i)).join("\n") + "\n";
    return { text, lines };
}

/** One line of Istio's default access log format. */
export function istioText(l: { timeMs: number; method: string; path: string; client: string }, i = 0): string {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    return `[${new Date(l.timeMs).toISOString()}] "${l.method} ${l.path} HTTP/1.1" 200 - via_upstream - "-" 0 12 3 2 "-" "curl/8.5.0" "${id}" "shop.example.com" "10.1.0.7:8080" outbound|8080||web.shop.svc.cluster.local 10.1.0.5:40112 10.1.0.5:8080 ${l.client}:${40000 + (i % 20000)} - -`;
}

/**
 * The oracle: requests POST to /login (the path before any query is exactly /login) counted per
 * client and per minute of the clock; each beyond the fifth of its minute is refused.
 */
export function expectedLoginRefusals(lines: LoginLog["lines"]): { requests: number; refused: number; refusedByClient: Record<string, number> } {
    const counts: Record<string, number> = {};
    const refusedByClient: Record<string, number> = {};
    let requests = 0;
    let refused = 0;
    const ordered = [...lines].sort((a, b) => a.timeMs - b.timeMs);
    for (const l of ordered) {
        if (l.method !== "POST" || l.path.split("?")[0] !== "/login") continue;
        requests++;
        const minute = new Date(l.timeMs).toISOString().slice(0, 16);
        const key = `${l.client} ${minute}`;
        counts[key] = (counts[key] ?? 0) + 1;
        if (counts[key]! > 5) {
            refused++;
            refusedByClient[l.client] = (refusedByClient[l.client] ?? 0) + 1;
        }
    }
    return { requests, refused, refusedByClient };
}
