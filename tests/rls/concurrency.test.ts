/**
 * Exactness under concurrency: several REAL rate-limit service processes (the rendered settings,
 * as replicas would run) share one Redis; 1,000 concurrent requests spread over them must let
 * through exactly the configured number.
 */
import { expect } from "chai";
import { World } from "./harness/fixture";
import { ensureWindow, minuteOf } from "./harness/window";
import { Decision } from "./harness/client";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

const PROCESSES = 3;
const REQUESTS = 1000;

async function burst(w: World, path: string, n = REQUESTS): Promise<{ ok: number; over: number; errors: number; ms: number }> {
    await ensureWindow(20);
    const t0 = Date.now();
    const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => w.send(path, i)));
    const ms = Date.now() - t0;
    expect(minuteOf(Date.now()), "the burst crossed a minute boundary").to.equal(minuteOf(t0));
    const codes = results.map((r) => (r.status === "fulfilled" ? (r.value as Decision).overallCode : "ERROR"));
    return {
        ok: codes.filter((c) => c === "OK").length,
        over: codes.filter((c) => c === "OVER_LIMIT").length,
        errors: codes.filter((c) => c === "ERROR").length,
        ms,
    };
}

for (const variant of ["A", "B"] as const) {
    describe(`rls concurrency, variant ${variant}: ${PROCESSES} real service processes, one Redis, ${REQUESTS} concurrent requests (paths via the gateway model)`, function () {
        let w: World;
        before(async () => {
            w = await World.start(variant, PROCESSES, ONE_STORE);
        });
        after(async () => {
            await w?.stop();
        });
        beforeEach(() => w.redis.flushAll());

        it(`limited path: exactly 1 of ${REQUESTS} is OK`, async () => {
            const r = await burst(w, "/productpage");
            expect(r).to.deep.include({ ok: 1, over: REQUESTS - 1, errors: 0 });
            console.log(`      ${REQUESTS} requests over ${PROCESSES} processes in ${r.ms} ms`);
        });

        if (variant === "A") {
            it(`api route: exactly 2 of ${REQUESTS} are OK, spread over different n`, async () => {
                await ensureWindow(20);
                const t0 = Date.now();
                const results = await Promise.allSettled(Array.from({ length: REQUESTS }, (_, i) => w.send(`/api/v1/products/${(i % 9) + 1}`, i)));
                expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
                const codes = results.map((r) => (r.status === "fulfilled" ? (r.value as Decision).overallCode : "ERROR"));
                expect(codes.filter((c) => c === "OK")).to.have.length(2);
                expect(codes.filter((c) => c === "ERROR")).to.have.length(0);
            });
        }

        it(`catch-all path: exactly 100 of ${REQUESTS} are OK`, async () => {
            const r = await burst(w, "/static/style.css");
            expect(r).to.deep.include({ ok: 100, over: REQUESTS - 100, errors: 0 });
        });

        it("every process answered part of the burst (the requests really were spread)", async () => {
            await ensureWindow(10);
            const perProcess = await Promise.all(w.clients.map((c) => c.shouldRateLimit(w.explain("/login").domain, [[{ key: "PATH", value: "/login" }]])));
            expect(perProcess.map((d) => d.overallCode)).to.deep.equal(Array(PROCESSES).fill("OK"));
            // The three processes counted into one shared bucket.
            expect((await w.redis.keys()).filter((k) => k.includes("_PATH_/login_"))).to.have.length(1);
            const c = await w.redis.client();
            try {
                const key = (await w.redis.keys()).find((k) => k.includes("_PATH_/login_"))!;
                expect(Number(await c.command("GET", key))).to.equal(PROCESSES);
            } finally {
                c.close();
            }
        });
    });
}
