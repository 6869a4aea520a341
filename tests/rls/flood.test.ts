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
 *    written into the store the rendered settings give the per-value counters (sized by
 *    `newValuesPerSecond: 1`, a few MB, so it fills in seconds) until it has evicted as many
 *    counters as it holds, then 30,000 real decisions for new keys through the service that
 *    counts them, none of which may fail (the store evicts, it never refuses);
 * 3. while those decisions run, in the same window, the next `/productpage` and api requests (the
 *    fixed rule's) are refused by a decision of the fixed counters' service, each within the fixed
 *    filter's rendered `timeout` (the deadline the gateway gives the call: an answer later than that
 *    would be the filter's failure mode, not a decision), no call failed. How fast they are answered
 *    is a benchmark figure (docs/proof/benchmarks.md), not an assertion. Control of that check: the
 *    same request with a deadline already passed is not a decision (the harness enforces the deadline).
 * Negative control in the same case: the specification's one store (`counterStore: single`, the
 * jitter of 300 s for its hour windows, evicting by use: `/productpage` was used as rarely as the flood's values) under the same flood forgets the `/productpage`
 * counter, and the second request is allowed again.
 */
import { expect } from "chai";
import type { K8sObject } from "../../lib/k8s-object";
import { explain } from "../../gateway-model/explain";
import { windowStart } from "../../render/explain-format";
import { renderedRatelimits } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { redisInfo } from "./harness/counters";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { ensureWindow, ensureWindowOf, windowOf } from "./harness/window";
import { CPUS, FloodShape, Side, decisions, failureModeDeny, filterTimeoutMs, fill, floodPath, send, startSide, stopSide } from "./harness/flood";

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
import { LimitUnit } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";

const DECISIONS = 30_000;

interface FixedUse {
    path: string;
    headers?: Record<string, string>;
    /** How many requests the limit allows in the window (used up before the flood). */
    allowed: number;
}

/**
 * One case on the split layout: the fixed uses first, the flood, then each fixed use once more
 * (refused within the fixed filter's rendered timeout) while the decisions run. Returns what the report prints.
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
        // The per-value store is a Redis of its own, which evicts its least used counters when full.
        expect(fixedSide.redis.serverArgs).to.include("volatile-ttl");
        expect(perValue.redis.serverArgs).to.include("allkeys-lfu");
        expect(perValue.redis.address).to.not.equal(fixedSide.redis.address);
        await ensureWindowOf(CASE_UNIT_SECONDS, CASE_NEEDS_SECONDS);
        const t0 = Date.now();
        for (const u of fixed)
            for (let k = 0; k < u.allowed; k++) expect((await send(objects, sides, u.path, u.headers)).code, `${u.path} use ${k + 1}`).to.equal("OK");
        // As rendered, the per-value filter fails open: a full store must therefore never make its calls fail.
        const pvCall = explain(objects, shape.request(0).path, { headers: shape.request(0).headers }).calls.find((c) => c.service.includes(perValue.name));
        expect(pvCall, `the flood's request ${shape.request(0).path} calls the per-value service ${perValue.name} (model)`).to.not.equal(undefined);
        expect(failureModeDeny(objects, pvCall!.filter), "the per-value filter fails open").to.equal(false);
        const filled = await fill(objects, perValue, shape, { evicting: true });
        // The decisions saturate the per-value service; meanwhile the fixed limits' next requests.
        const running = decisions(objects, perValue, shape, filled.written, DECISIONS);
        await new Promise((r) => setTimeout(r, 2_000));
        const after: { path: string; code?: string; ms: number; calls: string[]; failed: string[]; timeoutMs: number; pastDeadline: string }[] = [];
        for (const u of fixed) {
            // The deadline the gateway gives the call: the fixed filter's rendered timeout.
            const timeoutMs = filterTimeoutMs(objects, explain(objects, u.path, { headers: u.headers ?? {} }).calls[0]!.filter);
            const a = await send(objects, sides, u.path, u.headers, timeoutMs);
            const pastDeadline = (await send(objects, sides, u.path, u.headers, 0)).code;
            after.push({ path: u.path, code: a.code, ms: a.ms, calls: a.calls, failed: a.failedOpen, timeoutMs, pastDeadline });
        }
        const flood = await running;
        expect(windowOf(Date.now(), CASE_UNIT_SECONDS), "the case stayed in one window").to.equal(windowOf(t0, CASE_UNIT_SECONDS));
        for (const a of after) {
            expect(a.code, `${a.path} after the flood: refused by a decision within the rendered timeout (${a.timeoutMs} ms)`).to.equal("OVER_LIMIT");
            expect(a.failed, `${a.path}: no call failed or timed out`).to.deep.equal([]);
            expect(a.pastDeadline, `control: ${a.path} with a deadline already passed is no decision`).to.not.equal("OVER_LIMIT");
            expect(a.calls, `${a.path}: one call, to the fixed counters' service (its refusal stops the chain)`).to.deep.equal([fixedSide.name]);
        }
        expect(flood.totalRequests, "decisions the per-value service answered during the flood").to.equal(DECISIONS);
        expect(flood.errors, `decisions that failed on the full per-value store (${String(flood.firstError ?? "")})`).to.equal(0);
        const fixedInfo = await redisInfo(fixedSide.redis);
        expect(Number(fixedInfo.evicted_keys), "the fixed counters' Redis evicted nothing").to.equal(0);
        return (
            `per-value store full after ${filled.written} counters (used_memory ${filled.info.used_memory}, maxmemory ${filled.info.maxmemory}); ` +
            `${DECISIONS} decisions on the per-value service: ${flood.ok} OK, ${flood.overLimit} over limit, ${flood.errors} errors (${String(flood.firstError ?? "").slice(0, 80)}), ${Math.round(flood.decisionsPerSecond)}/s, p99 ${flood.p99ms} ms; ` +
            after.map((a) => `${a.path} → ${a.code} in ${a.ms} ms (timeout ${a.timeoutMs} ms; deadline passed → ${a.pastDeadline})`).join(", ") +
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
        // One store that holds per-value counters evicts by use: a fixed counter used as rarely as the flood's values still goes.
        expect(side.redis.serverArgs).to.include("allkeys-lfu");
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
        it(`variant A, ${label}: /productpage and api used first; the per-path flood fills the per-value store and saturates its service; the next /productpage and api requests are refused by a decision within the fixed filter's rendered timeout; negative control: one store forgets /productpage`, async () => {
            const shape: FloodShape = { request: (i) => ({ path: floodPath("/static/f", i, length), headers: {} }) };
            const split = await splitCase(
                await renderVariant("A", { unit: "hour", perValueNewValuesPerSecond: "1" }),
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
            { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 100, unit: LimitUnit.Hour, acceptEvictionRisk: true },
        ];
        const shape: FloodShape = { request: (i) => ({ path: "/search", headers: { "x-api-key": `key-${i}-${"k".repeat(64)}` } }) };
        const split = await splitCase(
            [...USER_OBJECTS, ...(await renderComponent(rules, { perValueStore: { newValuesPerSecond: 1 } }))],
            [{ path: "/checkout", allowed: 1 }],
            shape,
        );
        console.log(`      x-api-key, split: ${split}`);
        const single = await singleStoreCase(
            [...USER_OBJECTS, ...(await renderComponent(rules, { counterStore: CounterStore.Single }))],
            { path: "/checkout", allowed: 1 },
            shape,
        );
        console.log(`      x-api-key, control: ${single}`);
    });
});
