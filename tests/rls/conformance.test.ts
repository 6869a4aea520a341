/**
 * Spec 8, checks 1 and 2, against the REAL envoyproxy/ratelimit service and a real Redis, run with
 * exactly the settings the stack renders. Request paths become rate-limit requests through the
 * gateway MODEL (gateway-model/explain.ts), which reads the rendered EnvoyFilters and VirtualService.
 */
import { expect } from "chai";
import { World } from "./harness/fixture";
import { ensureWindow, minuteOf } from "./harness/window";
import { gatewayOutcome } from "./harness/client";
import { windowStart } from "../../render/explain-format";

/** The specification's numbers (spec 2.1 / 8), asserted against the real service. */
const SPEC = {
    A: { domain: "ratelimit", limitedPath: "/productpage", limited: 1, api: 2, catchAll: 100 },
    B: { domain: "productpage-ratelimit", limitedPath: "/productpage", limited: 1, api: undefined, catchAll: 100 },
} as const;

for (const variant of ["A", "B"] as const) {
    const spec = SPEC[variant];
    describe(`rls conformance, variant ${variant}: real ratelimit service + Redis, rendered config; paths via the gateway model`, function () {
        let w: World;
        before(async () => {
            w = await World.start(variant);
        });
        after(async () => {
            await w?.stop();
        });
        beforeEach(async () => {
            await w.redis.flushAll();
            await w.perValue?.redis.flushAll();
        });

        it(`the rendered domain is ${spec.domain} in both the filter and the config`, () => {
            const x = w.explain(spec.limitedPath);
            expect(x.domain).to.equal(spec.domain);
            expect(w.rendered.configYaml).to.match(new RegExp(`^domain: ${spec.domain}$`, "m"));
        });

        it(`spec 8 check 1: ${spec.limitedPath} is answered OK once, then OVER_LIMIT for the rest of the window, with or without a query`, async () => {
            await ensureWindow(10);
            const t0 = Date.now();
            const codes: string[] = [];
            for (let i = 0; i < 6; i++) codes.push((await w.send(i % 2 ? `${spec.limitedPath}?u=${i}` : spec.limitedPath))!.overallCode);
            expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
            expect(codes).to.deep.equal(["OK", ...Array(5).fill("OVER_LIMIT")]);
            const d = await w.send(spec.limitedPath);
            expect(d!.statuses[0].currentLimit).to.deep.include({ requestsPerUnit: spec.limited, unit: "MINUTE" });
            expect(gatewayOutcome(d!)).to.equal("429");
        });

        it("a query string does not make a new descriptor value: /productpage?u=1 sends PATH=/productpage (model: CEL request.url_path)", () => {
            for (const q of ["?u=1", "?", "?a=b&c", `?p=${"x".repeat(4096)}`]) {
                const x = w.explain(`${spec.limitedPath}${q}`);
                expect(x.descriptors.map((d) => d.entries)).to.deep.equal([[{ key: "PATH", value: spec.limitedPath }]]);
            }
        });

        it(`catch-all: ${spec.catchAll} OK per distinct path, then OVER_LIMIT; another path has its own ${spec.catchAll}`, async () => {
            await ensureWindow(20);
            const t0 = Date.now();
            for (const path of ["/static/app.css", "/login"]) {
                const codes = await Promise.all(Array.from({ length: spec.catchAll + 5 }, () => w.send(path)));
                const ok = codes.filter((d) => d!.overallCode === "OK").length;
                expect(ok, path).to.equal(spec.catchAll);
                expect(codes.length - ok).to.equal(5);
            }
            // Sequentially: the 101st is refused regardless of order.
            const one = "/logout";
            for (let i = 0; i < spec.catchAll; i++) expect((await w.send(one))!.overallCode).to.equal("OK");
            expect((await w.send(one))!.overallCode).to.equal("OVER_LIMIT");
            expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
        });

        it("the Redis counter is the bucket the model names (domain, key, value, window start)", async () => {
            await ensureWindow(5);
            const now = Date.now();
            await w.send("/static/bucket.css");
            const x = w.explain("/static/bucket.css");
            const expected = x.descriptors[0].bucket!.replace("{window}", String(windowStart("minute", now)));
            // A per-path counter: in the per-value counters' own Redis (counterStore split), none in the fixed one.
            expect(await w.perValue!.redis.keys()).to.deep.equal([expected]);
            expect(await w.redis.keys()).to.deep.equal([]);
        });

        it("paths that match no route produce no descriptor (model: Envoy answers 404 and never asks)", () => {
            for (const p of ["/", "/reviews/1", "/productpage2", "/productpage/", "/stati"]) {
                const x = w.explain(p);
                expect(x.route, p).to.equal(undefined);
                expect(x.descriptors, p).to.deep.equal([]);
            }
        });

        if (variant === "A") {
            it("spec 8 check 2: api route, 2 OK then OVER_LIMIT, one bucket shared by different n", async () => {
                await ensureWindow(10);
                const t0 = Date.now();
                const seq = ["/api/v1/products/1", "/api/v1/products/99", "/api/v1/products/7", "/api/v1/products/42", "/api/v1/products/1"];
                const codes: string[] = [];
                for (const p of seq) codes.push((await w.send(p))!.overallCode);
                expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
                expect(codes).to.deep.equal(["OK", "OK", "OVER_LIMIT", "OVER_LIMIT", "OVER_LIMIT"]);
                expect((await w.redis.keys()).filter((k) => k.includes("_PATH_api_"))).to.have.length(1);
                const d = await w.send("/api/v1/products/5");
                expect(d!.statuses[0].currentLimit).to.deep.include({ requestsPerUnit: spec.api, unit: "MINUTE" });
            });

            it("api route: PATH=api alone is sent, in one call to the fixed counters' service (the api limit refuses before a per-path counter could) (model)", () => {
                for (const n of [1, 9, 11, 55, 99]) {
                    const x = w.explain(`/api/v1/products/${n}`);
                    expect(x.route?.name).to.equal("api");
                    expect(x.rateLimitsFrom.level).to.equal("route and virtual host");
                    expect(x.descriptors.map((d) => d.entries)).to.deep.equal([[{ key: "PATH", value: "api" }]]);
                    expect(x.calls.map((c) => c.service)).to.deep.equal([`outbound|8081||ratelimit.default.svc.cluster.local`]);
                }
            });

            it("every n from 1 to 99 (spec 4, 8) sends PATH=api; the route regex excludes nothing in that range (model)", () => {
                // The specification's own regex, <api_prefix>/[1-9]{1,2}, would miss 10, 20, ..., 90.
                const missed = Array.from({ length: 99 }, (_, i) => i + 1).filter(
                    (n) => !w.explain(`/api/v1/products/${n}`).descriptors.some((d) => d.limit?.entry === "PATH=api"),
                );
                expect(missed, "n without a PATH=api descriptor").to.deep.equal([]);
            });

            it("api route paths that do not fully match the regex fall under the per-path catch-all: 100 OK each, then refused", async () => {
                await ensureWindow(15);
                const paths = [
                    "/api/v1/products",
                    "/api/v1/products/",
                    "/api/v1/products/0",
                    "/api/v1/products/100",
                    "/api/v1/products/07",
                    "/api/v1/products/7/reviews",
                ];
                for (const p of paths) {
                    const x = w.explain(p);
                    expect(x.route?.name, p).to.equal("api");
                    // Besides its path, the catch-all's long-path marker, which a short path sends without a config node.
                    expect(
                        x.descriptors.map((d) => [d.entries.map((e) => `${e.key}=${e.value}`).join(","), d.limit !== undefined]),
                        p,
                    ).to.deep.equal([
                        [`other_paths=each,PATH=${p}`, true],
                        ["other_paths=each,long_path=within-1024-bytes,masked_remote_address=192.0.2.1/32", false],
                    ]);
                    const codes = await Promise.all(Array.from({ length: spec.catchAll + 3 }, () => w.send(p)));
                    expect(codes.filter((d) => d!.overallCode === "OK").length, p).to.equal(spec.catchAll);
                }
                expect((await w.redis.keys()).filter((k) => k.includes("_PATH_api_"))).to.deep.equal([]);
            });
        } else {
            it("variant B has no api route: /api/v1/products/<n> falls to the catch-all, 100 per distinct path", async () => {
                await ensureWindow(15);
                const x = w.explain("/api/v1/products/7");
                expect(x.rateLimitsFrom.level).to.equal("virtual host");
                expect(x.descriptors.map((d) => [d.entries.map((e) => `${e.key}=${e.value}`).join(","), d.limit !== undefined])).to.deep.equal([
                    ["other_paths=each,PATH=/api/v1/products/7", true],
                    ["other_paths=each,long_path=within-1024-bytes,masked_remote_address=192.0.2.1/32", false],
                ]);
                const codes = await Promise.all(Array.from({ length: 103 }, () => w.send("/api/v1/products/7")));
                expect(codes.filter((d) => d!.overallCode === "OK")).to.have.length(spec.catchAll);
                expect((await w.send("/api/v1/products/8"))!.overallCode).to.equal("OK");
            });

            it("variant B's config answers nothing for domain ratelimit (the domain really differs)", async () => {
                const d = await w.clients[0].shouldRateLimit("ratelimit", [[{ key: "PATH", value: spec.limitedPath }]]);
                expect(d.statuses[0].currentLimit).to.equal(undefined);
            });
        }
    });
}
