/**
 * Limits that hold: request sequences a client would use to get around the global limits (query
 * strings, path variants, unmatched API paths, encodings, long queries), turned into rate-limit
 * requests by the gateway MODEL (gateway-model/explain.ts) and decided by the REAL envoyproxy/ratelimit
 * service and Redis with the rendered config. Where a request yields several descriptors, the real
 * service decides.
 *
 * Run for both variants, and for two combinations of API profile and local placement (the unit
 * tier shows the gateway objects are identical across all four combinations).
 */
import { expect } from "chai";
import { World } from "./harness/fixture";
import { ensureWindow, minuteOf } from "./harness/window";

const COMBOS = [
    { apiProfile: "current", localPlacement: "all-routes" },
    { apiProfile: "seed", localPlacement: "single-route" },
] as const;

/** Sends the paths one after another; returns the overall codes ("none" when nothing is sent). */
async function codes(w: World, paths: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const p of paths) out.push((await w.send(p))?.overallCode ?? "none");
    return out;
}

for (const variant of ["A", "B"] as const) {
    for (const combo of COMBOS) {
        describe(`rls limits hold, variant ${variant}, ${combo.apiProfile} profile, ${combo.localPlacement}: real service + Redis; paths via the gateway model`, function () {
            let w: World;
            before(async () => {
                w = await World.start(variant, 1, { ...combo });
            });
            after(async () => {
                await w?.stop();
            });
            beforeEach(async () => {
                await w.redis.flushAll();
                await w.perValue?.redis.flushAll();
            });

            // One test touches /productpage per service process: its over-limit answer is then cached
            // in the process (LOCAL_CACHE_SIZE_IN_BYTES) until the window ends, whatever Redis holds.
            it("/productpage: 200 concurrent requests with distinct queries give exactly 1 OK; then queries, fragments, dot segments, a 10 kB query: all refused", async () => {
                await ensureWindow(15);
                const t0 = Date.now();
                const ds = await Promise.all(Array.from({ length: 200 }, (_, i) => w.send(`/productpage?cachebust=${i}`)));
                expect(ds.filter((d) => d!.overallCode === "OK")).to.have.length(1);
                const tries = [
                    "/productpage",
                    "/productpage?y=2&z",
                    "/productpage?",
                    "/productpage#top",
                    "/static/../productpage",
                    "/./productpage?n=3",
                    "/%2e/productpage",
                    `/productpage?pad=${"a".repeat(10_000)}`,
                ];
                const got = await codes(w, tries);
                expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
                expect(got).to.deep.equal(Array(tries.length).fill("OVER_LIMIT"));
                expect((await w.redis.keys()).filter((k) => k.includes("productpage"))).to.have.length(1);
            });

            it("catch-all per path without its query: /login?r=1..150 share one 100-per-minute counter", async () => {
                await ensureWindow(15);
                const ds = await Promise.all(Array.from({ length: 150 }, (_, i) => w.send(`/login?r=${i}`)));
                expect(ds.filter((d) => d!.overallCode === "OK")).to.have.length(100);
                // Per-path counters live in the per-value counters' own Redis (counterStore split).
                expect((await w.perValue!.redis.keys()).filter((k) => k.includes("/login"))).to.have.length(1);
            });

            it("150 requests to /api/v1/products/100 (no api match): 100 OK, then refused", async () => {
                await ensureWindow(15);
                const ds = await Promise.all(Array.from({ length: 150 }, (_, i) => w.send(`/api/v1/products/100${i % 2 ? `?i=${i}` : ""}`)));
                expect(ds.filter((d) => d!.overallCode === "OK")).to.have.length(100);
            });

            it("no request that reaches a route is answered without a counter: every variant of a path is limited", async () => {
                await ensureWindow(10);
                const variants = [
                    "/static/x.css?v=1",
                    "/logout?next=/",
                    "/api/v1/products/7/reviews?q",
                    "/api/v1/products?n=7",
                    "/api/v1/products/%37",
                    "/api/v1/products//7",
                ];
                for (const p of variants) {
                    const x = w.explain(p);
                    if (!x.route) continue;
                    const d = await w.send(p);
                    expect(d, p).to.not.equal(undefined);
                    // Every descriptor but the catch-all's long-path marker of a short path (no config node by design).
                    const marker = (i: number) => x.descriptors[i]!.entries.some((e) => e.key === "long_path" && e.value === "within-1024-bytes");
                    expect(
                        d!.statuses.every((s, i) => s.currentLimit !== undefined || marker(i)),
                        `${p}: every descriptor has a limit in the real service`,
                    ).to.equal(true);
                }
            });

            if (variant === "A") {
                it("spec 8 check 2 with bypass attempts: n from every decade, with queries: exactly 2 OK in the window", async () => {
                    await ensureWindow(10);
                    const t0 = Date.now();
                    const tries = [
                        "/api/v1/products/10?a=b",
                        "/api/v1/products/99",
                        "/api/v1/products/20?",
                        "/api/v1/products/7?x=%2F",
                        "/api/v1/products/./30",
                        "/api/v1/products/40#f",
                    ];
                    for (let n = 1; n <= 99; n++) tries.push(`/api/v1/products/${n}?n=${n}`);
                    const got = await codes(w, tries);
                    expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
                    expect(got).to.deep.equal(["OK", "OK", ...Array(tries.length - 2).fill("OVER_LIMIT")]);
                    expect((await w.redis.keys()).filter((k) => k.includes("_PATH_api_"))).to.have.length(1);
                });

                it("the api limit binds on every api path, and no per-path counter is spent on them (the api limit refuses first)", async () => {
                    await ensureWindow(10);
                    await codes(w, ["/api/v1/products/1", "/api/v1/products/2"]);
                    const d = await w.send("/api/v1/products/3");
                    expect(d!.overallCode).to.equal("OVER_LIMIT");
                    expect(d!.statuses.map((s) => [s.code, s.currentLimit?.requestsPerUnit])).to.deep.equal([["OVER_LIMIT", 2]]);
                    expect((await w.perValue!.redis.keys()).filter((k) => k.includes("/api/"))).to.deep.equal([]);
                });
            }
        });
    }
}

describe("rls limits hold, negative control: pathKey=literal (the specification's tables) on the real service", function () {
    let w: World;
    before(async () => {
        w = await World.start("A", 1, { pathKey: "literal" });
    });
    after(async () => {
        await w?.stop();
    });

    it("a query string escapes the 1-per-minute limit and an unmatched api path is never limited (why url-path is the default)", async () => {
        await w.redis.flushAll();
        await w.perValue?.redis.flushAll();
        await ensureWindow(10);
        const got = await codes(
            w,
            Array.from({ length: 10 }, (_, i) => `/productpage?n=${i}`),
        );
        expect(got).to.deep.equal(Array(10).fill("OK"));
        expect(await codes(w, ["/api/v1/products/100", "/api/v1/products/7?a=b"])).to.deep.equal(["none", "none"]);
    });
});
