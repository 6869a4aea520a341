/**
 * Limits that hold against a flood of new keys, on the REAL envoyproxy/ratelimit services and REAL
 * Redis servers run exactly as the stack renders them (each Redis from its rendered command and
 * arguments: maxmemory, eviction policy, the password on stdin). The gateway is the MODEL
 * (gateway-model/explain.ts): it says which service each request's descriptors go to.
 *
 * The attack: a client creates counters at will (a new path, a new `x-api-key` value per request),
 * up to the longest path the gateway counts, as fast as the service answers. Each case:
 * 1. the fixed counters are used FIRST (`/productpage` once, the api limit twice; a fixed rule once);
 * 2. the flood: counters in the service's own key format (checked against a key the service wrote)
 *    written into the store the rendered settings give the per-value counters until it is full,
 *    then 30,000 real decisions for new keys through the service that counts them;
 * 3. while those decisions run, in the same window, the next `/productpage` and api requests (the
 *    fixed rule's) are refused, each answered in under 50 ms.
 * Negative control in the same case: the specification's one store (`counterStore: single`, the
 * service's default jitter of 300 s, `volatile-ttl`) under the same flood forgets the `/productpage`
 * counter, and the second request is allowed again.
 */
import { expect } from "chai";
import * as os from "os";
import type { K8sObject } from "../../lib/k8s-object";
import { explain } from "../../gateway-model/explain";
import { windowStart } from "../../render/explain-format";
import { RlsClient } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { RenderedRatelimit, renderedRatelimits, renderedRedis } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { UNIT_DIVIDER, UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS, pipeCounters, redisInfo } from "./harness/counters";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { ensureWindow, ensureWindowOf, windowOf } from "./harness/window";

/**
 * The limits of the flood cases count per hour: a case (the fixed uses, a flood of millions of
 * counters, the next fixed requests) must stay inside one window of the limits, and on two cores the
 * flood alone can take longer than the rest of a minute. The eviction a flood causes does not depend
 * on the window's length: every counter's TTL is the window plus the service's jitter.
 */
const CASE_UNIT_SECONDS = 3600;
/** What a case needs of its window, at most (the slowest flood measured took about 2 minutes). */
const CASE_NEEDS_SECONDS = 300;
import { World } from "./harness/fixture";
import { runLoadgenWorkload } from "./harness/loadgen";
import { LimitUnit } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";

/** The service's side of a rendered stack: a Redis started as rendered, one service process. */
interface Side {
    name: string;
    redis: RedisServer;
    svc: RateLimitProcess;
    client: RlsClient;
}

/**
 * CPUs of each side on this machine: the per-value side (its service, its Redis and the flood's
 * load generator) on one core, the fixed side on the other, as two pods with CPU budgets of their
 * own would be in a cluster (the service's container limit is one CPU). On one core: no pinning.
 */
const CPUS = os.cpus().length >= 2 ? { fixed: "0", perValue: "1" } : undefined;

async function startSide(objects: K8sObject[], rendered: RenderedRatelimit, cpus?: string): Promise<Side> {
    // The Redis this service's REDIS_URL names, as the stack renders it.
    const url = rendered.env.find((e) => e.name === "REDIS_URL")?.value ?? "";
    const redisName = url.split(".")[0]!;
    const redis = await RedisServer.startRendered(renderedRedis(objects, redisName), { ...(cpus ? { cpus } : {}) });
    const svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, ...(cpus ? { cpus } : {}) });
    const client = svc.client();
    await client.waitForReady();
    return { name: String(rendered.deployment.metadata.name), redis, svc, client };
}

async function stopSide(s: Side | undefined): Promise<void> {
    if (!s) return;
    s.client.close();
    await s.svc.stop();
    await s.redis.stop();
}

/**
 * One request as the gateway (MODEL) handles it: its calls in filter order (the fixed counters'
 * filter first: its EnvoyFilters have the lower priority), each to its side; a refusal stops the
 * chain (later filters never call); a call that fails on a filter with `failure_mode_deny: false`
 * (the per-value one, as rendered) lets the request go on, one with `true` refuses it (500).
 */
async function send(
    objects: K8sObject[],
    sides: Side[],
    path: string,
    headers: Record<string, string> = {},
): Promise<{ code: string; ms: number; calls: string[]; failedOpen: string[] }> {
    const x = explain(objects, path, { headers });
    const t = Date.now();
    const calls: string[] = [];
    const failedOpen: string[] = [];
    for (const c of x.calls) {
        const name = c.service.split("|")[3]?.split(".")[0] ?? "";
        const side = sides.find((s) => s.name === name) ?? sides[0]!;
        calls.push(name);
        try {
            const a = await side.client.shouldRateLimit(
                c.domain,
                c.descriptors.map((d) => d.entries),
                { deadlineMs: 5_000 },
            );
            if (a.overallCode === "OVER_LIMIT") return { code: "OVER_LIMIT", ms: Date.now() - t, calls, failedOpen };
        } catch (e: any) {
            if (failureModeDeny(objects, c.filter)) return { code: "500", ms: Date.now() - t, calls, failedOpen };
            failedOpen.push(`${name}: ${e.code}`);
        }
    }
    return { code: calls.length ? "OK" : "none", ms: Date.now() - t, calls, failedOpen };
}

/** `failure_mode_deny` of the rendered rate-limit HTTP filter named `filter`. */
function failureModeDeny(objects: K8sObject[], filter: string): boolean {
    for (const o of objects.filter((x) => x.kind === "EnvoyFilter"))
        for (const p of o.spec?.configPatches ?? []) if (p.patch?.value?.name === filter) return p.patch.value.typed_config?.failure_mode_deny === true;
    throw new Error(`no rendered rate-limit filter ${filter}`);
}

/** A path of `length` bytes (at least the prefix), distinct per `i`. */
function floodPath(prefix: string, i: number, length: number): string {
    const base = `${prefix}${i}`;
    return length > base.length ? `${base}/${"x".repeat(length - base.length - 1)}` : base;
}

/** What the flood is made of in one case: the per-value request for `i`, as path and headers. */
interface FloodShape {
    /** The request number `i` of the flood (a new counter each). */
    request(i: number): { path: string; headers: Record<string, string> };
}

/**
 * Fills `side`'s Redis with counters for flood requests (the model's bucket, checked against the
 * key the service wrote for request 0, and the service's TTL) until it is full: for a `noeviction`
 * store until writes are refused, for an evicting one until it has evicted at least as many keys as
 * it holds and `gone(key)` (the counter the attacker wants reset) is no longer there.
 */
async function fill(
    objects: K8sObject[],
    side: Side,
    shape: FloodShape,
    opts: { evicting: boolean; watchKey?: string },
): Promise<{ written: number; info: Record<string, string> }> {
    const first = shape.request(0);
    const x = explain(objects, first.path, { headers: first.headers });
    const d = x.descriptors.find((e) => e.limit && !e.limit.shadow)!;
    expect(d, "the flood's request has a limited per-value descriptor (model)").to.not.equal(undefined);
    // The service writes request 0's counter itself: its key is the model's bucket, its TTL the window plus the jitter.
    expect((await send(objects, [side], first.path, first.headers)).code).to.equal("OK");
    const unit = d.limit!.unit;
    const win = String(windowStart(unit, Date.now()));
    const key0 = d.bucket!.replace("{window}", win);
    const c = await side.redis.client();
    const pttl = Number(await c.command("PTTL", key0));
    c.close();
    const jitter = Number(side.svc.env.EXPIRATION_JITTER_MAX_SECONDS ?? UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS);
    expect(pttl, `the service wrote ${key0} with TTL ${UNIT_DIVIDER[unit]} s + jitter`).to.be.within(
        (UNIT_DIVIDER[unit]! - 2) * 1000,
        (UNIT_DIVIDER[unit]! + jitter) * 1000,
    );
    // The bucket of request i: request 0's with its varying part replaced (the model's key format).
    const varying0 = Object.values(first.headers)[0] ?? first.path;
    const keyOf = (i: number) => {
        const r = shape.request(i);
        return key0.replace(varying0, Object.values(r.headers)[0] ?? r.path);
    };
    const ttlOf = (i: number) => UNIT_DIVIDER[unit]! + (jitter > 0 ? (i * 7919) % jitter : 0);
    let written = 1;
    const round = 50_000;
    for (;;) {
        const { errors } = await pipeCounters(side.redis, keyOf, written, round, ttlOf, !opts.evicting);
        written += round;
        const info = await redisInfo(side.redis);
        if (!opts.evicting && errors > 0) return { written, info };
        if (opts.evicting && Number(info.evicted_keys) >= Number(/keys=(\d+)/.exec(info.db0 ?? "")?.[1] ?? 0)) {
            const gone =
                opts.watchKey === undefined ||
                Number(
                    await (async () => {
                        const k = await side.redis.client();
                        try {
                            return await k.command("EXISTS", opts.watchKey!);
                        } finally {
                            k.close();
                        }
                    })(),
                ) === 0;
            if (gone) return { written, info };
        }
        if (written > 20_000_000)
            throw new Error(`the store never filled (${JSON.stringify({ used: info.used_memory, evicted: info.evicted_keys, db0: info.db0 })})`);
    }
}

/**
 * `n` real decisions for new flood keys on the per-value side's service, from the project's Go load
 * generator (64 in flight, each request once) on the per-value side's CPU: the descriptors are the
 * model's per-value call for each request. Returns the generator's report (answers, errors, p99).
 */
async function decisions(objects: K8sObject[], side: Side, shape: FloodShape, from: number, n: number): Promise<any> {
    const requests: unknown[] = [];
    let domain = "";
    for (let i = from; i < from + n; i++) {
        const r = shape.request(i);
        const call = explain(objects, r.path, { headers: r.headers }).calls.find((c) => c.service.split("|")[3]?.startsWith(`${side.name}.`));
        if (!call) throw new Error(`request ${i} sends nothing to ${side.name} (model)`);
        domain = call.domain;
        requests.push(call.descriptors.map((d) => d.entries));
    }
    const args = [
        "-target",
        side.svc.grpcAddress,
        "-count",
        String(n),
        "-warmup",
        "0s",
        "-duration",
        "10m",
        "-concurrency",
        "64",
        "-conns",
        "4",
        "-timeout",
        "5s",
    ];
    return runLoadgenWorkload(domain, requests, args, CPUS?.perValue);
}

const DECISIONS = 30_000;
const ANSWER_MS = 50;

interface FixedUse {
    path: string;
    headers?: Record<string, string>;
    /** How many requests the limit allows in the window (used up before the flood). */
    allowed: number;
}

/**
 * One case on the split layout: the fixed uses first, the flood, then each fixed use once more
 * (refused, timed) while the decisions run. Returns what the report prints.
 */
async function splitCase(objects: K8sObject[], fixed: FixedUse[], shape: FloodShape): Promise<string> {
    const rendered = renderedRatelimits(objects);
    expect(
        rendered.map((r) => r.deployment.metadata.name),
        "two services rendered (counterStore split)",
    ).to.have.length(2);
    const sides: Side[] = [];
    try {
        sides.push(await startSide(objects, rendered[0]!, CPUS?.fixed));
        sides.push(await startSide(objects, rendered[1]!, CPUS?.perValue));
        const [fixedSide, perValue] = sides as [Side, Side];
        // The per-value store is a Redis of its own, which refuses rather than forgets when full.
        expect(fixedSide.redis.serverArgs).to.include("volatile-ttl");
        expect(perValue.redis.serverArgs).to.include("noeviction");
        expect(perValue.redis.address).to.not.equal(fixedSide.redis.address);
        await ensureWindowOf(CASE_UNIT_SECONDS, CASE_NEEDS_SECONDS);
        const t0 = Date.now();
        for (const u of fixed)
            for (let k = 0; k < u.allowed; k++) expect((await send(objects, sides, u.path, u.headers)).code, `${u.path} use ${k + 1}`).to.equal("OK");
        // A full per-value store makes the per-value filter's calls fail: as rendered, they fail open.
        const pvCall = explain(objects, shape.request(0).path, { headers: shape.request(0).headers }).calls.find((c) => c.service.includes(perValue.name));
        expect(failureModeDeny(objects, pvCall!.filter), "the per-value filter fails open").to.equal(false);
        const filled = await fill(objects, perValue, shape, { evicting: false });
        // The decisions saturate the per-value service; meanwhile the fixed limits' next requests.
        const running = decisions(objects, perValue, shape, filled.written, DECISIONS);
        await new Promise((r) => setTimeout(r, 2_000));
        const after: { path: string; code?: string; ms: number; calls: string[] }[] = [];
        for (const u of fixed) {
            const a = await send(objects, sides, u.path, u.headers);
            after.push({ path: u.path, code: a.code, ms: a.ms, calls: a.calls });
        }
        const flood = await running;
        expect(windowOf(Date.now(), CASE_UNIT_SECONDS), "the case stayed in one window").to.equal(windowOf(t0, CASE_UNIT_SECONDS));
        for (const a of after) {
            expect(a.code, `${a.path} after the flood`).to.equal("OVER_LIMIT");
            expect(a.ms, `${a.path} answer time under the flood`).to.be.below(ANSWER_MS);
            expect(a.calls, `${a.path}: one call, to the fixed counters' service (its refusal stops the chain)`).to.deep.equal([fixedSide.name]);
        }
        expect(flood.totalRequests, "decisions the per-value service answered during the flood").to.equal(DECISIONS);
        const fixedInfo = await redisInfo(fixedSide.redis);
        expect(Number(fixedInfo.evicted_keys), "the fixed counters' Redis evicted nothing").to.equal(0);
        return (
            `per-value store full after ${filled.written} counters (used_memory ${filled.info.used_memory}, maxmemory ${filled.info.maxmemory}); ` +
            `${DECISIONS} decisions on the per-value service: ${flood.ok} OK, ${flood.overLimit} over limit, ${flood.errors} errors (${String(flood.firstError ?? "").slice(0, 80)}), ${Math.round(flood.decisionsPerSecond)}/s, p99 ${flood.p99ms} ms; ` +
            after.map((a) => `${a.path} → ${a.code} in ${a.ms} ms`).join(", ") +
            `; fixed Redis: ${fixedInfo.db0 ?? "empty"}, evicted ${fixedInfo.evicted_keys}`
        );
    } finally {
        for (const s of sides) await stopSide(s);
    }
}

/** The negative control: one store (counterStore single); the flood resets the first fixed use's counter. */
async function singleStoreCase(objects: K8sObject[], fixed: FixedUse, shape: FloodShape): Promise<string> {
    const [rendered, extra] = renderedRatelimits(objects);
    expect(extra, "one service rendered (counterStore single)").to.equal(undefined);
    const side = await startSide(objects, rendered!);
    try {
        expect(side.redis.serverArgs).to.include("volatile-ttl");
        await ensureWindowOf(CASE_UNIT_SECONDS, CASE_NEEDS_SECONDS);
        const t0 = Date.now();
        for (let k = 0; k < fixed.allowed; k++) expect((await send(objects, [side], fixed.path, fixed.headers)).code).to.equal("OK");
        const x = explain(objects, fixed.path, { headers: fixed.headers ?? {} });
        const key = x.descriptors.find((d) => d.limit)!.bucket!.replace("{window}", String(windowStart(x.descriptors.find((d) => d.limit)!.limit!.unit, t0)));
        const filled = await fill(objects, side, shape, { evicting: true, watchKey: key });
        const again = await send(objects, [side], fixed.path, fixed.headers);
        expect(windowOf(Date.now(), CASE_UNIT_SECONDS), "the control stayed in one window").to.equal(windowOf(t0, CASE_UNIT_SECONDS));
        expect(again.code, `one store: the flood evicted ${key} and reset the limit`).to.equal("OK");
        return `one store: ${key} evicted after ${filled.written} counters (evicted_keys ${filled.info.evicted_keys}, ${filled.info.db0}); the next ${fixed.path} → ${again.code}`;
    } finally {
        await stopSide(side);
    }
}

describe("rls flood: fixed counters used BEFORE a flood of new keys still refuse (real services and Redis as rendered, gateway MODEL)", function () {
    this.timeout(900_000);

    for (const [label, length] of [
        ["short paths", 0],
        ["1,000-byte paths", 1000],
    ] as const) {
        it(`variant A, ${label}: /productpage and api used first; the per-path flood fills the per-value store and saturates its service; the next /productpage and api requests are refused in under ${ANSWER_MS} ms; negative control: one store forgets /productpage`, async () => {
            const shape: FloodShape = { request: (i) => ({ path: floodPath("/static/f", i, length), headers: {} }) };
            const split = await splitCase(
                await renderVariant("A", { unit: "hour" }),
                [
                    { path: "/productpage", allowed: 1 },
                    { path: "/api/v1/products/7", allowed: 2 },
                ],
                shape,
            );
            console.log(`      ${label}, split: ${split}`);
            const single = await singleStoreCase(
                await renderVariant("A", { counterStore: "single", unit: "hour" }),
                { path: "/productpage", allowed: 1 },
                shape,
            );
            console.log(`      ${label}, control: ${single}`);
        });
    }

    it("paths over 1,024 bytes share one counter per client on the real service: 102 distinct 2,000-byte paths from one client, 100 allowed, one Redis key (gateway MODEL)", async () => {
        const w = await World.start("A");
        try {
            await ensureWindow(15);
            const codes: string[] = [];
            for (let i = 0; i < 102; i++) codes.push((await w.send(floodPath("/static/long-", i, 2000)))?.overallCode ?? "none");
            expect(codes.filter((c) => c === "OK")).to.have.length(100);
            expect(codes.slice(100)).to.deep.equal(["OVER_LIMIT", "OVER_LIMIT"]);
            const keys = await w.perValue!.redis.keys();
            expect(keys, "one counter for every long path of the client").to.have.length(1);
            expect(keys[0]).to.contain("long_path_over-1024-bytes_masked_remote_address_192.0.2.1/32");
        } finally {
            await w.stop();
        }
    });

    it("a package program: a per-value header rule (rotating x-api-key) next to a fixed rule: /checkout used first still refuses; negative control: one store forgets it", async () => {
        const rules = [
            { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 1, unit: LimitUnit.Hour },
            { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 100, unit: LimitUnit.Hour },
        ];
        const shape: FloodShape = { request: (i) => ({ path: "/search", headers: { "x-api-key": `key-${i}-${"k".repeat(64)}` } }) };
        const split = await splitCase([...USER_OBJECTS, ...(await renderComponent(rules))], [{ path: "/checkout", allowed: 1 }], shape);
        console.log(`      x-api-key, split: ${split}`);
        const single = await singleStoreCase(
            [...USER_OBJECTS, ...(await renderComponent(rules, { counterStore: CounterStore.Single }))],
            { path: "/checkout", allowed: 1 },
            shape,
        );
        console.log(`      x-api-key, control: ${single}`);
    });
});
