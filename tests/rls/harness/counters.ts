/**
 * Counters written straight into Redis the way envoyproxy/ratelimit writes them, and Redis's INFO,
 * for the flood tests: a flood of new keys is cheaper to write this way than through the service,
 * and the key format and TTL are checked against a key the service itself wrote.
 */
import { spawn } from "child_process";
import { RedisServer } from "./redis";
import { redisCliBin } from "./tools";

/** `utils.UnitToDivider` of the service: its window length, and the base of the TTL it sets on a counter. */
export const UNIT_DIVIDER: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };
/**
 * The service adds `rand(0, EXPIRATION_JITTER_MAX_SECONDS)` to every EXPIRE (redis/fixed_cache_impl.go);
 * the stack does not render the variable, so the upstream default applies (settings/settings.go).
 */
export const UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS = 300;

export async function redisInfo(r: RedisServer): Promise<Record<string, string>> {
    const c = await r.client();
    try {
        const text = String(await c.command("INFO", "all"));
        const out: Record<string, string> = {};
        for (const line of text.split("\r\n")) {
            const i = line.indexOf(":");
            if (i > 0 && !line.startsWith("#")) out[line.slice(0, i)] = line.slice(i + 1);
        }
        return out;
    } finally {
        c.close();
    }
}

function resp(args: string[]): string {
    let s = `*${args.length}\r\n`;
    for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
    return s;
}

/**
 * Writes `count` counters the way the service writes one under-limit decision (INCRBY key 1, then
 * EXPIRE key ttl; limiter/cache_key.go + redis/fixed_cache_impl.go `pipelineAppend`), through
 * `redis-cli --pipe`. `keyOf(i)` and `ttlOf(i)` give the i-th key and its TTL. Returns the number
 * of error replies (a Redis that refuses writes when full answers OOM); throws on any error unless
 * `allowErrors`.
 */
export async function pipeCounters(
    r: RedisServer,
    keyOf: (i: number) => string,
    from: number,
    count: number,
    ttlOf: (i: number) => number,
    allowErrors = false,
): Promise<{ errors: number }> {
    const cli = redisCliBin();
    if (!cli) throw new Error("redis-cli is not installed (run scripts/tools/build-ratelimit.sh)");
    // The password through REDISCLI_AUTH, never in redis-cli's arguments.
    const p = spawn(cli, ["-h", "127.0.0.1", "-p", String(r.port), "--pipe"], {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, REDISCLI_AUTH: r.password },
    });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => p.on("exit", resolve));
    const chunk = 5_000;
    for (let i = from; i < from + count; i += chunk) {
        let s = "";
        for (let k = i; k < Math.min(i + chunk, from + count); k++) {
            const key = keyOf(k);
            s += resp(["INCRBY", key, "1"]) + resp(["EXPIRE", key, String(ttlOf(k))]);
        }
        if (!p.stdin.write(s)) await new Promise((resolve) => p.stdin.once("drain", resolve));
    }
    p.stdin.end();
    const code = await exited;
    const summary = /errors: (\d+), replies: (\d+)/.exec(out);
    if (!summary || Number(summary[2]) !== 2 * count || (!allowErrors && (code !== 0 || summary[1] !== "0")))
        throw new Error(`redis-cli --pipe failed (exit ${code}): ${out.slice(-500)}`);
    return { errors: Number(summary[1]) };
}
