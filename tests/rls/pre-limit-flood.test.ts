/**
 * A flood never reaches the rate-limit service: 10,000 requests a second for 10 s of /productpage
 * and of /api/v1/products/7 (with the query and path variants a client would try) go through the
 * gateway MODEL with its pre-limit buckets (gateway-model/pre-limit-model.ts; simulated time, three
 * modelled gateway pods taking turns), and what the buckets let through goes to the REAL
 * envoyproxy/ratelimit service and Redis with the rendered config. Compared with the same flood sent
 * to the service alone (a fresh service process: its over-limit cache must not carry over).
 *
 * The bound tested: per pod and counter, at most ⌊2L + L·τ/T⌋ requests pass in τ seconds (the
 * bucket starts with 2L tokens and refills L per window T); with 3 pods, 3 times that.
 */
import { expect } from "chai";
import { GatewayModel } from "../../gateway-model/model";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { PreLimitConfigModel, PreLimitPod, preLimitDescriptors, readPreLimit } from "../../gateway-model/pre-limit-model";
import { World } from "./harness/fixture";
import { ensureWindow, minuteOf } from "./harness/window";

const RATE = 10_000;
const SECONDS = 10;
const PODS = 3;
/** Requests of the comparison with the service alone: enough to show it allows exactly L, few enough to stay in one minute on a loaded machine. */
const ALONE_REQUESTS = 1_000;

interface FloodResult {
    requests: number;
    serviceCalls: number;
    ok: number;
    overLimit: number;
    preLimitRefusals: number;
    /** The service's answers to the passes, in order. */
    answers: string[];
}

/** The flood through the modelled pre-limit; every pass goes to the real service, one at a time. */
async function floodThroughPreLimit(w: World, model: GatewayModel, cfg: PreLimitConfigModel, variants: (i: number) => string): Promise<FloodResult> {
    const pods = Array.from({ length: PODS }, () => new PreLimitPod(cfg, 0));
    const r: FloodResult = { requests: 0, serviceCalls: 0, ok: 0, overLimit: 0, preLimitRefusals: 0, answers: [] };
    for (let i = 0; i < RATE * SECONDS; i++) {
        const path = variants(i);
        r.requests++;
        const d = pods[i % PODS].decide(preLimitDescriptors(model, cfg, path), i / RATE);
        if (!d.allowed) {
            r.preLimitRefusals++;
            continue;
        }
        const answer = await w.send(path);
        r.serviceCalls++;
        r.answers.push(answer?.overallCode ?? "none");
        if (answer?.overallCode === "OK") r.ok++;
        else r.overLimit++;
    }
    return r;
}

/** The same number of requests sent to the service alone, 500 at a time. */
async function floodServiceAlone(w: World, n: number, variants: (i: number) => string): Promise<{ ok: number; calls: number }> {
    let ok = 0;
    for (let i = 0; i < n; i += 500) {
        const ds = await Promise.all(Array.from({ length: Math.min(500, n - i) }, (_, k) => w.send(variants(i + k))));
        ok += ds.filter((d) => d?.overallCode === "OK").length;
    }
    return { ok, calls: n };
}

const PAGE = (i: number) => ["/productpage", `/productpage?n=${i}`, "/static/../productpage", `/%2e/productpage?x=${i}`][i % 4];
const API = (i: number) => ["/api/v1/products/7", `/api/v1/products/7?n=${i}`, "/api/v1/products/../products/7", `/api/v1/products/7?`][i % 4];

describe("rls pre-limit flood: gateway MODEL with its local buckets (simulated time) in front of the real service + Redis, variant A", function () {
    this.timeout(600_000);
    let withPre: World;
    let alone: World;
    let model: GatewayModel;
    let cfg: PreLimitConfigModel;
    before(async () => {
        withPre = await World.start("A", 1);
        alone = await World.start("A", 1);
        model = gatewayModel(withPre.objects);
        cfg = readPreLimit(withPre.objects, model)!;
        expect(cfg, "the render has a pre-limit").to.not.equal(undefined);
    });
    after(async () => {
        await withPre?.stop();
        await alone?.stop();
    });

    for (const [name, variants, L] of [
        ["/productpage (1 per minute)", PAGE, 1],
        ["/api/v1/products/7 (api: 2 per minute)", API, 2],
    ] as const) {
        it(`${name}: 100,000 requests in 10 s (model) reach the service at most ${PODS} × ⌊2L + L·10/60⌋ times; exactly L succeed, as with the service alone`, async () => {
            // Each phase counts against the service's per-minute window, so each runs inside one
            // minute of its own (a phase that straddles a boundary would see 2L allowed): the window
            // is checked before the counts, so a slow machine is named as such, not as a wrong count.
            await ensureWindow(45);
            const t0 = Date.now();
            const r = await floodThroughPreLimit(withPre, model, cfg, variants);
            expect(minuteOf(Date.now()), `the flood through the pre-limit took ${Date.now() - t0} ms and crossed a minute boundary`).to.equal(minuteOf(t0));
            const bound = PODS * Math.floor(2 * L + (L * SECONDS) / 60);
            expect(r.requests).to.equal(RATE * SECONDS);
            expect(r.serviceCalls, JSON.stringify(r.answers)).to.be.at.most(bound).and.at.least(L);
            expect(r.ok, JSON.stringify(r.answers)).to.equal(L);
            // The pre-limit refused nothing before the service had used its allowance.
            expect(r.answers.slice(0, L)).to.deep.equal(Array(L).fill("OK"));
            // The service alone, from a fresh process and Redis: 1,000 requests (500 times the allowance).
            await ensureWindow(30);
            const t1 = Date.now();
            const a = await floodServiceAlone(alone, ALONE_REQUESTS, variants);
            expect(minuteOf(Date.now()), `the service alone took ${Date.now() - t1} ms and crossed a minute boundary`).to.equal(minuteOf(t1));
            expect(a.ok, "the service alone").to.equal(L);
            console.log(
                `      ${name}: ${r.requests} requests, ${r.serviceCalls} service calls (bound ${bound}), ${r.ok} OK, ${r.preLimitRefusals} refused by the pre-limit; service alone: ${a.ok} OK of ${a.calls}`,
            );
        });
    }

    it("what it cannot bound: a per-path counter (/login, each query variant one counter) sends every request to the service, which still allows exactly 100", async () => {
        await ensureWindow(20);
        const pod = new PreLimitPod(cfg, 0);
        let calls = 0;
        let ok = 0;
        for (let i = 0; i < 1000; i++) {
            const path = `/login?n=${i}`;
            expect(pod.decide(preLimitDescriptors(model, cfg, path), i / RATE).allowed).to.equal(true);
            calls++;
            if ((await withPre.send(path))?.overallCode === "OK") ok++;
        }
        expect(calls).to.equal(1000);
        expect(ok).to.equal(100);
    });
});
