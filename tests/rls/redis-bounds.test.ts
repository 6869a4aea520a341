/**
 * The failure bounds of commit ad6cbc7 (builders/failure-bounds.ts) on the REAL service and Redis,
 * run with the rendered settings: Redis's memory under a flood of distinct paths (rendered
 * `redisServerArgs`), the service's answer time while Redis hangs (rendered `REDIS_TIMEOUT`), and
 * `/healthcheck` while Redis is down (rendered `REDIS_HEALTH_CHECK_ACTIVE_CONNECTION`). Every value
 * comes from the rendered objects or the exported functions; each bound has a control with the
 * setting the stack rendered before (figures in docs/proof/rls.md, "Failure bounds").
 */
import { expect } from "chai";
import type { K8sObject } from "../../lib/k8s-object";
import { explain } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { windowStart } from "../../render/explain-format";
import { PER_VALUE_EVICTION_POLICY, redisMemoryBytes, redisServerArgs, REDIS_TIMEOUT } from "../../builders/failure-bounds";
import { protoDurationSeconds } from "../../lib/formats";
import { RlsClient, Decision } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { renderedRatelimit, RenderedRatelimit, renderedRedis } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { UNIT_DIVIDER, UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS, pipeCounters, redisInfo } from "./harness/counters";
import { ensureWindow } from "./harness/window";
import { sleep, waitFor } from "./harness/ports";

/** The in-cluster Redis container's arguments (the password reaches it on stdin), as rendered. */
function renderedRedisArgs(objects: K8sObject[]): string[] {
    return renderedRedis(objects, "redis").args;
}

/**
 * These bounds are those of one store for every counter (counterStore single, the specification's
 * layout): the flood of distinct paths reaches the same Redis as the fixed counters. With the
 * default split, that flood goes to the per-value store (tests/rls/flood.test.ts).
 */
const ONE_STORE = { counterStore: "single" };

function argValue(args: string[], flag: string): string | undefined {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
}

/** The gateway filter's `timeout` for its calls to the service (seconds), as rendered. */
function gatewayTimeoutSeconds(objects: K8sObject[]): number {
    const found: string[] = [];
    const walk = (x: any) => {
        if (!x || typeof x !== "object") return;
        if (x.rate_limit_service && typeof x.timeout === "string") found.push(x.timeout);
        for (const v of Object.values(x)) walk(v);
    };
    objects.filter((o) => o.kind === "EnvoyFilter").forEach(walk);
    const distinct = [...new Set(found)];
    if (distinct.length !== 1) throw new Error(`expected one rate-limit filter timeout, found ${JSON.stringify(distinct)}`);
    const s = protoDurationSeconds(distinct[0]);
    if (s === undefined) throw new Error(`unparsable filter timeout ${distinct[0]}`);
    return s;
}

const MiB = 1024 * 1024;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

interface Bench {
    objects: K8sObject[];
    rendered: RenderedRatelimit;
    redis: RedisServer;
    svc: RateLimitProcess;
    client: RlsClient;
    domain: string;
    stop(): Promise<void>;
}

async function startBench(redisArgs: string[] | undefined, envOverrides: Record<string, string | null> = {}): Promise<Bench> {
    const objects = await renderVariant("A", ONE_STORE);
    const rendered = renderedRatelimit(objects);
    const redis = await RedisServer.start(undefined, redisArgs ? { serverArgs: redisArgs } : {});
    let svc: RateLimitProcess;
    try {
        svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, envOverrides });
    } catch (e) {
        await redis.stop();
        throw e;
    }
    const client = svc.client();
    await client.waitForReady();
    return {
        objects,
        rendered,
        redis,
        svc,
        client,
        domain: gatewayModel(objects).domain,
        async stop() {
            client.close();
            await svc.stop();
            // A stopped (SIGSTOP) Redis ignores SIGTERM until continued.
            if (redis.pid) {
                try {
                    process.kill(redis.pid, "SIGCONT");
                } catch {
                    /* gone */
                }
            }
            await redis.stop();
        },
    };
}

/** The rendered Redis bound: `maxmemory` from the rendered args, checked against `redisServerArgs`. */
function renderedBound(objects: K8sObject[]): { args: string[]; maxMemory: string; bytes: number } {
    const args = renderedRedisArgs(objects);
    const maxMemory = argValue(args, "--maxmemory");
    if (!maxMemory) throw new Error(`the rendered redis-server has no --maxmemory: ${JSON.stringify(args)}`);
    const policy = argValue(args, "--maxmemory-policy");
    if (!policy) throw new Error(`the rendered redis-server has no --maxmemory-policy: ${JSON.stringify(args)}`);
    expect(args, "rendered Redis args are redisServerArgs(maxmemory, policy)").to.deep.equal(redisServerArgs(maxMemory, policy));
    const bytes = redisMemoryBytes(maxMemory);
    if (!bytes) throw new Error(`unparsable maxmemory ${maxMemory}`);
    return { args: redisServerArgs(maxMemory, policy), maxMemory, bytes };
}

/** `args` without a flag and its value (the control: the args as rendered before maxmemory). */
function without(args: string[], ...flags: string[]): string[] {
    const out: string[] = [];
    for (let i = 0; i < args.length; i++) {
        if (flags.includes(args[i])) i++;
        else out.push(args[i]);
    }
    return out;
}

/**
 * Allowed excess of `used_memory` over `maxmemory`: Redis evicts before each command, so it can be
 * over by what one command allocates, plus client buffers (counted in used_memory). 1 MiB covers
 * that with room; the measured excess is printed.
 */
const ACCOUNTING_TOLERANCE = MiB;

interface FloodResult {
    prefilled: number;
    prefillMs: number;
    afterPrefill: Record<string, string>;
    decisions: number;
    serviceMs: number;
    answers: Record<string, number>;
    errors: string[];
    maxUsedSampled: number;
    after: Record<string, string>;
}

/**
 * The flood: counters of distinct catch-all paths. First written straight into Redis, with exactly
 * the service's key (checked against a key the service wrote) and TTL, in rounds of `round` until
 * Redis evicts (it is at its bound) or holds `stopAtBytes`; then `decisions` real service decisions
 * for further distinct paths on top, while `used_memory` is sampled.
 */
async function flood(b: Bench, stopAtBytes: number, decisions: number, round = 100_000): Promise<FloodResult> {
    // The service's own key and TTL for one distinct path, and the model's bucket for it.
    await ensureWindow(3);
    const probe = "/static/redis-bounds-probe";
    const x = explain(b.objects, probe);
    expect(
        x.descriptors.map((d) => d.entries),
        "a catch-all path sends one PATH descriptor (model)",
    ).to.deep.equal([[{ key: "PATH", value: probe }]]);
    const unit = x.descriptors[0].limit!.unit;
    const divider = UNIT_DIVIDER[unit];
    const jitterMax = Number(b.svc.env.EXPIRATION_JITTER_MAX_SECONDS ?? UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS);
    // The service's TTL: the window's length plus a jitter drawn per write (spread evenly here).
    const ttlOf = (i: number) => divider + (jitterMax > 0 ? (i * 7919) % jitterMax : 0);
    const probeAt = Date.now();
    expect((await b.client.shouldRateLimit(b.domain, [x.descriptors[0].entries])).overallCode).to.equal("OK");
    const keyFor = (path: string, nowMs: number) => explain(b.objects, path).descriptors[0].bucket!.replace("{window}", String(windowStart(unit, nowMs)));
    const c = await b.redis.client();
    try {
        expect(await c.command("KEYS", "*"), "the service's key for the probe is the model's bucket").to.deep.equal([keyFor(probe, probeAt)]);
        const pttl = Number(await c.command("PTTL", keyFor(probe, probeAt)));
        expect(pttl, `the service's TTL is the ${unit}'s length (${divider} s) plus a jitter below ${jitterMax} s`).to.be.within(
            (divider - 2) * 1000,
            (divider + jitterMax) * 1000,
        );
    } finally {
        c.close();
    }
    // The bucket template (the model's, now checked against the service) for the prefill paths.
    const template = explain(b.objects, "/static/flood-0").descriptors[0].bucket!;

    const t0 = Date.now();
    let prefilled = 0;
    let info = await redisInfo(b.redis);
    while (Number(info.evicted_keys) === 0 && Number(info.used_memory) < stopAtBytes) {
        const win = String(windowStart(unit, Date.now()));
        await pipeCounters(b.redis, (i) => template.replace("/static/flood-0", `/static/flood-${i}`).replace("{window}", win), prefilled, round, ttlOf);
        prefilled += round;
        info = await redisInfo(b.redis);
        if (prefilled > 100_000_000) throw new Error("the prefill never reached the bound");
    }
    const prefillMs = Date.now() - t0;
    const afterPrefill = info;

    // Real service decisions for distinct paths on top, 64 in flight, while used_memory is sampled.
    let maxUsedSampled = Number(info.used_memory);
    let sampling = true;
    const sampler = (async () => {
        const s = await b.redis.client();
        try {
            while (sampling) {
                const m = /used_memory:(\d+)/.exec(String(await s.command("INFO", "memory")));
                maxUsedSampled = Math.max(maxUsedSampled, Number(m![1]));
                await sleep(100);
            }
        } finally {
            s.close();
        }
    })();
    const answers: Record<string, number> = {};
    const errors: string[] = [];
    let next = 0;
    const t1 = Date.now();
    await Promise.all(
        Array.from({ length: 64 }, async () => {
            while (next < decisions) {
                // The descriptor the gateway sends for a catch-all path (the model's, checked above for the probe).
                const d = [[{ key: "PATH", value: `/static/flood-svc-${next++}` }]];
                try {
                    const a = await b.client.shouldRateLimit(b.domain, d);
                    answers[a.overallCode] = (answers[a.overallCode] ?? 0) + 1;
                } catch (e: any) {
                    errors.push(`${e.code} ${e.details}`);
                }
            }
        }),
    );
    const serviceMs = Date.now() - t1;
    sampling = false;
    await sampler;
    return { prefilled, prefillMs, afterPrefill, decisions, serviceMs, answers, errors, maxUsedSampled, after: await redisInfo(b.redis) };
}

/** A Go duration as the stack renders it (`<n>ms` or `<n>s`), in ms. */
function goDurationMs(text: string | undefined): number | undefined {
    const m = /^([0-9]+)(ms|s)$/.exec(text ?? "");
    return m ? Number(m[1]) * (m[2] === "s" ? 1000 : 1) : undefined;
}

type Timed = { ms: number; result: Decision | Error };

async function timedCall(b: Bench, path: string, deadlineMs: number): Promise<Timed> {
    const t = Date.now();
    try {
        const d = await b.client.shouldRateLimit(b.domain, [[{ key: "PATH", value: path }]], { deadlineMs });
        return { ms: Date.now() - t, result: d };
    } catch (e) {
        return { ms: Date.now() - t, result: e as Error };
    }
}

const describeResult = (r: Decision | Error) =>
    r instanceof Error ? `error ${(r as any).code} ${String((r as any).details).split(/ after |,/)[0]}` : r.overallCode;

async function healthStatus(svc: RateLimitProcess): Promise<string> {
    const h = await svc.healthcheck();
    return h === "refused" ? "refused" : String(h.status);
}

/**
 * Polls /healthcheck every 50 ms for up to `ms` or until `until(status)`; returns the time of the
 * first status other than `from` (undefined if none) and every status seen.
 */
async function watchHealth(svc: RateLimitProcess, ms: number, from: string): Promise<{ changedAfterMs?: number; to?: string; seen: Set<string> }> {
    const t0 = Date.now();
    const seen = new Set<string>();
    while (Date.now() - t0 < ms) {
        const s = await healthStatus(svc);
        seen.add(s);
        if (s !== from) return { changedAfterMs: Date.now() - t0, to: s, seen };
        await sleep(50);
    }
    return { seen };
}

/**
 * radix v4's pool (the client the service uses, redis/driver_impl.go) PINGs one random connection
 * every 5 s / REDIS_POOL_SIZE (PoolConfig.PingInterval default); a ping on a dead connection
 * discards it, so an idle pool loses all its connections about 5 s after Redis dies. It reconnects
 * with a backoff of 125 ms doubling to at most 4 s (MinReconnectInterval/MaxReconnectInterval).
 */
const RADIX_ALL_PINGS_MS = 5_000;
const RADIX_MAX_RECONNECT_MS = 4_000;
const MARGIN_MS = 3_000;

describe("rls redis bounds, variant A: real service + Redis with the rendered failure bounds", function () {
    describe("a flood of distinct paths (Redis with the rendered maxmemory and eviction policy)", function () {
        let b: Bench | undefined;
        afterEach(async () => {
            await b?.stop();
            b = undefined;
        });

        it("Redis stays at its maxmemory and evicts counters; every service answer is OK/OVER_LIMIT; /productpage still refuses its second request", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const bound = renderedBound(objects);
            // One store with the per-path counters: it evicts by use.
            expect(argValue(bound.args, "--maxmemory-policy")).to.equal(PER_VALUE_EVICTION_POLICY);
            b = await startBench(bound.args);
            const cfg = await b.redis.client();
            try {
                expect(await cfg.command("CONFIG", "GET", "maxmemory")).to.deep.equal(["maxmemory", String(bound.bytes)]);
            } finally {
                cfg.close();
            }
            const r = await flood(b, 1.5 * bound.bytes, 30_000);
            const used = Number(r.after.used_memory);
            const peak = Number(r.after.used_memory_peak);
            const evictedBefore = Number(r.afterPrefill.evicted_keys);
            const evicted = Number(r.after.evicted_keys);
            console.log(
                `      maxmemory ${bound.maxMemory} = ${bound.bytes} B; prefill ${r.prefilled} counters in ${r.prefillMs} ms → used_memory ${mib(Number(r.afterPrefill.used_memory))}, evicted ${evictedBefore}; ` +
                    `then ${r.decisions} service decisions in ${r.serviceMs} ms (${Math.round((r.decisions / r.serviceMs) * 1000)}/s): ${JSON.stringify(r.answers)}, ${r.errors.length} errors; ` +
                    `used_memory ${used} (max sampled ${r.maxUsedSampled}, peak ${peak}; peak − maxmemory = ${peak - bound.bytes} B), evicted_keys ${evicted} (${evicted - evictedBefore} during the service's decisions), keys ${r.after.db0 ?? "-"}`,
            );
            expect(r.errors, "service errors during the flood").to.deep.equal([]);
            expect(Object.keys(r.answers).every((k) => k === "OK" || k === "OVER_LIMIT")).to.equal(true);
            expect(Object.values(r.answers).reduce((s, n) => s + n, 0)).to.equal(r.decisions);
            expect(peak, "used_memory_peak ≤ maxmemory + tolerance").to.be.at.most(bound.bytes + ACCOUNTING_TOLERANCE);
            expect(r.maxUsedSampled).to.be.at.most(bound.bytes + ACCOUNTING_TOLERANCE);
            expect(used).to.be.at.most(bound.bytes + ACCOUNTING_TOLERANCE);
            expect(evicted, "evicted_keys").to.be.greaterThan(0);
            expect(evicted - evictedBefore, "keys evicted while the service wrote on top").to.be.greaterThan(0);

            await ensureWindow(5);
            const d = explain(b.objects, "/productpage").descriptors.map((e) => e.entries);
            const first = await b.client.shouldRateLimit(b.domain, d);
            const second = await b.client.shouldRateLimit(b.domain, d);
            expect([first.overallCode, second.overallCode], "/productpage after the flood").to.deep.equal(["OK", "OVER_LIMIT"]);
        });

        it("negative control: the same flood against Redis without maxmemory (the args rendered before) grows past the bound", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const bound = renderedBound(objects);
            const oldArgs = without(bound.args, "--maxmemory", "--maxmemory-policy");
            b = await startBench(oldArgs);
            const r = await flood(b, 1.5 * bound.bytes, 2_000);
            const used = Number(r.after.used_memory);
            console.log(
                `      without maxmemory (${JSON.stringify(oldArgs)}): ${r.prefilled} counters in ${r.prefillMs} ms → used_memory ${mib(used)} = ${(used / bound.bytes).toFixed(2)}× the bound, evicted_keys ${r.after.evicted_keys} (stopped at 1.5×)`,
            );
            expect(r.errors).to.deep.equal([]);
            expect(Number(r.after.evicted_keys)).to.equal(0);
            expect(used).to.be.greaterThan(bound.bytes + ACCOUNTING_TOLERANCE);
        });
    });

    describe("Redis hung (SIGSTOP): what the rendered REDIS_TIMEOUT does", function () {
        let b: Bench | undefined;
        afterEach(async () => {
            await b?.stop();
            b = undefined;
        });

        it("the service does not answer before the gateway's own timeout, whatever REDIS_TIMEOUT says (known gap: it bounds only the dial); never OK; /healthcheck stays 200; after SIGCONT it answers OK at once", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const gatewayMs = gatewayTimeoutSeconds(objects) * 1000;
            b = await startBench(renderedBound(objects).args);
            const redisTimeout = b.svc.env.REDIS_TIMEOUT;
            expect(redisTimeout, "rendered REDIS_TIMEOUT, the dial bound").to.equal(REDIS_TIMEOUT);
            const redisTimeoutMs = goDurationMs(redisTimeout)!;
            const poolSize = Number(b.svc.env.REDIS_POOL_SIZE);
            expect((await timedCall(b, "/static/hung-warm", gatewayMs)).result).to.have.property("overallCode", "OK");
            const pid = b.svc.proc.child.pid;

            process.kill(b.redis.pid!, "SIGSTOP");
            // More concurrent calls than the pool has connections, each with the gateway's deadline.
            const n = 3 * poolSize;
            let watching = true;
            const health = new Set<string>();
            const watcher = (async () => {
                while (watching) {
                    health.add(await healthStatus(b!.svc));
                    await sleep(200);
                }
            })();
            const calls = await Promise.all(Array.from({ length: n }, (_, i) => timedCall(b!, `/static/hung-${i}`, gatewayMs)));
            watching = false;
            await watcher;
            const times = calls.map((c) => c.ms).sort((x, y) => x - y);
            const kinds = new Map<string, number>();
            for (const c of calls) kinds.set(describeResult(c.result), (kinds.get(describeResult(c.result)) ?? 0) + 1);
            console.log(
                `      REDIS_TIMEOUT ${redisTimeout}, pool ${poolSize}, gateway timeout ${gatewayMs} ms; ${n} concurrent calls while Redis was stopped: ` +
                    `${[...kinds].map(([k, m]) => `${m}× [${k}]`).join(", ")}; answer times ${times[0]}–${times[times.length - 1]} ms; /healthcheck meanwhile: ${[...health].join(", ")}`,
            );
            expect(
                calls.filter((c) => !(c.result instanceof Error)),
                "answers (OK or not) while Redis was stopped",
            ).to.deep.equal([]);
            // What the gateway gets: nothing until its own deadline (then fail-closed 500). Were
            // REDIS_TIMEOUT a bound, these would be service errors soon after REDIS_TIMEOUT.
            for (const c of calls) {
                // 4 DEADLINE_EXCEEDED (the client's timer) or 1 CANCELLED (the service's gRPC server
                // resetting the stream at the same propagated deadline), whichever comes first.
                expect((c.result as any).code, "ended by the caller's deadline").to.be.oneOf([4, 1]);
                expect(c.ms).to.be.at.least(gatewayMs - 50);
                expect(c.ms, `not answered within REDIS_TIMEOUT ${redisTimeoutMs} ms + ${MARGIN_MS} ms`).to.be.greaterThan(redisTimeoutMs + MARGIN_MS);
            }
            expect([...health], "/healthcheck while Redis hangs (its connections stay open)").to.deep.equal(["200"]);

            process.kill(b.redis.pid!, "SIGCONT");
            const t0 = Date.now();
            const back = await timedCall(b, "/static/hung-after", gatewayMs);
            const recoveredMs = Date.now() - t0;
            expect(describeResult(back.result)).to.equal("OK");
            expect(b.svc.proc.child.pid).to.equal(pid);
            // The calls the gateway gave up on were still sent: Redis counts them once it runs again.
            let counted = 0;
            await waitFor("the hung calls' counters", async () => (counted = (await b!.redis.keys("*_PATH_/static/hung-[0-9]*")).length) === n, 5_000, 50);
            console.log(
                `      SIGCONT: OK answer ${recoveredMs} ms later, same process; the ${n} calls the gateway had given up on were counted in Redis afterwards (${counted} counters)`,
            );
            expect(recoveredMs).to.be.lessThan(MARGIN_MS);
        });

        it("control: with REDIS_TIMEOUT unset (the upstream default, 10s), the same: no answer before the gateway's timeout", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const gatewayMs = gatewayTimeoutSeconds(objects) * 1000;
            b = await startBench(renderedBound(objects).args, { REDIS_TIMEOUT: null });
            expect(b.svc.env.REDIS_TIMEOUT).to.equal(undefined);
            expect((await timedCall(b, "/static/hung-ctl-warm", gatewayMs)).result).to.have.property("overallCode", "OK");
            process.kill(b.redis.pid!, "SIGSTOP");
            const c = await timedCall(b, "/static/hung-ctl", gatewayMs);
            console.log(`      REDIS_TIMEOUT unset: [${describeResult(c.result)}] after ${c.ms} ms`);
            expect((c.result as any).code).to.be.oneOf([4, 1]);
            expect(c.ms).to.be.at.least(gatewayMs - 50);
        });
    });

    describe("Redis stopped (SIGKILL): /healthcheck with the rendered REDIS_HEALTH_CHECK_ACTIVE_CONNECTION", function () {
        let b: Bench | undefined;
        afterEach(async () => {
            await b?.stop();
            b = undefined;
        });

        it("/healthcheck turns 500 within about 5 s of Redis dying and 200 again within the reconnect backoff once Redis is back; calls made while the pool is empty wait, and only as many as the pool has connections are answered when Redis is back", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const gatewayMs = gatewayTimeoutSeconds(objects) * 1000;
            b = await startBench(renderedBound(objects).args);
            expect(b.svc.env.REDIS_HEALTH_CHECK_ACTIVE_CONNECTION).to.equal("true");
            const poolSize = Number(b.svc.env.REDIS_POOL_SIZE);
            expect(await healthStatus(b.svc)).to.equal("200");
            await b.redis.kill();
            const down = await watchHealth(b.svc, RADIX_ALL_PINGS_MS + MARGIN_MS, "200");
            expect(down.to, "/healthcheck while Redis is down").to.equal("500");
            expect(down.changedAfterMs!).to.be.at.most(RADIX_ALL_PINGS_MS + MARGIN_MS);

            // 500 means the pool has no connection left (driver_impl.go poolTrace). Calls made now
            // wait in the pool (radix v4 never fails them, the service passes no deadline).
            const n = 3 * poolSize;
            let settled = 0;
            const pending = Array.from({ length: n }, (_, i) =>
                timedCall(b!, `/static/empty-pool-${i}`, gatewayMs).then((c) => {
                    settled++;
                    return { ...c, at: Date.now() };
                }),
            );
            await sleep(1_000);
            const settledWhileDown = settled;
            await b.redis.resume();
            const resumedAt = Date.now();
            const up = await watchHealth(b.svc, RADIX_MAX_RECONNECT_MS + MARGIN_MS, "500");
            const calls = await Promise.all(pending);
            const served = calls.filter((c) => describeResult(c.result) === "OK");
            const blocked = calls.filter((c) => c.result instanceof Error);
            const after = (cs: typeof calls) =>
                cs.length ? `${Math.min(...cs.map((c) => c.at - resumedAt))}–${Math.max(...cs.map((c) => c.at - resumedAt))} ms after Redis was back` : "-";
            const probe = b.rendered.readinessProbe;
            console.log(
                `      pool ${poolSize}: /healthcheck 500 ${down.changedAfterMs} ms after Redis was killed (idle service); ${up.to ?? "no change"} ${up.changedAfterMs ?? "-"} ms after it was back ` +
                    `(readiness probe every ${probe.periodSeconds} s, failureThreshold ${probe.failureThreshold}). ${n} calls made with the pool empty: ${settledWhileDown} settled while Redis was down; ` +
                    `${served.length} answered OK ${after(served)}; ${blocked.length} [${[...new Set(blocked.map((c) => describeResult(c.result)))].join(", ")}] at the gateway's deadline (${after(blocked)}) although Redis and /healthcheck were back`,
            );
            expect(up.to, "/healthcheck once Redis is back").to.equal("200");
            expect(up.changedAfterMs!).to.be.at.most(RADIX_MAX_RECONNECT_MS + MARGIN_MS);
            expect(settledWhileDown, "calls answered while the pool was empty").to.equal(0);
            expect(served.length, "calls answered once Redis was back").to.be.greaterThan(0);
            for (const c of blocked) expect((c.result as any).code, "the others end only at the caller's deadline").to.be.oneOf([4, 1]);
            await ensureWindow(5);
            const d = [[{ key: "PATH", value: "/productpage" }]];
            expect([(await b.client.shouldRateLimit(b.domain, d)).overallCode, (await b.client.shouldRateLimit(b.domain, d)).overallCode]).to.deep.equal([
                "OK",
                "OVER_LIMIT",
            ]);
        });

        it("control: without REDIS_HEALTH_CHECK_ACTIVE_CONNECTION (as rendered before), /healthcheck stays 200 while Redis is down", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            b = await startBench(renderedBound(objects).args, { REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: null });
            await b.redis.kill();
            const down = await watchHealth(b.svc, RADIX_ALL_PINGS_MS + MARGIN_MS, "200");
            console.log(`      without the variable: /healthcheck ${[...down.seen].join(", ")} for ${RADIX_ALL_PINGS_MS + MARGIN_MS} ms with Redis down`);
            expect(down.changedAfterMs, "a change of /healthcheck").to.equal(undefined);
            expect([...down.seen]).to.deep.equal(["200"]);
        });
    });
});
