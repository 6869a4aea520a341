/**
 * Faults with the REAL service and Redis, run with the rendered settings: Redis dies mid-run and
 * comes back; the service starts before Redis is reachable. What the gateway makes of an answer
 * (`failure_mode_deny`) is the MODEL in harness/client.ts `gatewayOutcome`.
 */
import { expect } from "chai";
import { World } from "./harness/fixture";
import { gatewayOutcome, Decision } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { renderedRatelimit } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { ensureWindow } from "./harness/window";
import { sleep, waitFor } from "./harness/ports";
import { gatewayModel } from "../../gateway-model/read-rendered";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

type Answer = { sentAt: number; at: number; result: Decision | Error };

/** Sends requests for fresh catch-all paths (each would be OK) from `workers` loops until `stop()`. */
function stream(w: World, workers = 8) {
    const answers: Answer[] = [];
    let running = true;
    let n = 0;
    const domain = gatewayModel(w.objects).domain;
    const loops = Array.from({ length: workers }, async () => {
        while (running) {
            const sentAt = Date.now();
            const path = `/static/fault-${n++}.css`;
            const x = w.explain(path);
            let result: Decision | Error;
            try {
                result = await w.clients[0].shouldRateLimit(
                    domain,
                    x.descriptors.map((d) => d.entries),
                    { deadlineMs: 12_000 },
                );
            } catch (e) {
                result = e as Error;
            }
            answers.push({ sentAt, at: Date.now(), result });
            await sleep(5);
        }
    });
    return {
        answers,
        async stop() {
            running = false;
            await Promise.all(loops);
        },
    };
}

describe("rls faults, variant A: real service + Redis with the rendered settings", function () {
    describe("Redis stops mid-run and comes back", function () {
        let w: World;
        before(async () => {
            w = await World.start("A", 1, ONE_STORE);
        });
        after(async () => {
            await w?.stop();
        });

        it("while Redis is down every answer is an error, never OK (the gateway's failure_mode_deny turns it into 500) (model of the gateway)", async () => {
            expect(gatewayModel(w.objects).failureModeDeny, "the rendered filter must fail closed").to.equal(true);
            const s = stream(w);
            await sleep(500);
            const killStartedAt = Date.now();
            await w.redis.kill();
            const killedAt = Date.now();
            await sleep(2_000);
            await s.stop();
            const before = s.answers.filter((a) => a.at < killStartedAt);
            const after = s.answers.filter((a) => a.sentAt > killedAt);
            expect(before.length, "answers before the kill").to.be.greaterThan(10);
            expect(before.every((a) => !(a.result instanceof Error) && a.result.overallCode === "OK")).to.equal(true);
            expect(after.length, "answers after the kill").to.be.at.least(5);
            const oks = after.filter((a) => !(a.result instanceof Error) && a.result.overallCode === "OK");
            expect(oks, "OK answers while Redis was down").to.have.length(0);
            expect(after.every((a) => gatewayOutcome(a.result) === "500")).to.equal(true);
            const slowest = Math.max(...after.map((a) => a.at - a.sentAt));
            const kinds = new Map<string, number>();
            for (const a of after) {
                const k = `${(a.result as any).code} ${String((a.result as any).details).split(/ after |,/)[0]}`;
                kinds.set(k, (kinds.get(k) ?? 0) + 1);
            }
            console.log(
                `      ${after.length} answers while Redis was down, all errors: ${[...kinds].map(([k, n]) => `${n}× [${k}]`).join(", ")}; slowest ${slowest} ms`,
            );
        });

        it("what the readiness probe says while Redis is down (rendered env decides)", async () => {
            const active = w.rendered.env.find((e) => e.name === "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION")?.value === "true";
            const ready = await w.services[0].ready();
            console.log(`      readiness probe with Redis down: ${ready ? "passes (pod stays Ready; every answer is an error → gateway 500)" : "fails"}`);
            // Without REDIS_HEALTH_CHECK_ACTIVE_CONNECTION the health check does not watch Redis after start.
            expect(ready).to.equal(!active);
        });

        it("Redis back: correct answers again, same process (no restart), within a measured time", async () => {
            const pid = w.services[0].proc.child.pid;
            await w.redis.resume();
            const t0 = Date.now();
            const domain = gatewayModel(w.objects).domain;
            let i = 0;
            const recoveryMs = await waitFor(
                "a non-error answer after Redis came back",
                async () => {
                    try {
                        const d = await w.clients[0].shouldRateLimit(domain, [[{ key: "PATH", value: `/static/recover-${i++}` }]], { deadlineMs: 12_000 });
                        return d.overallCode === "OK";
                    } catch {
                        return false;
                    }
                },
                30_000,
                50,
            );
            console.log(`      recovered ${recoveryMs} ms after Redis was back (${Date.now() - t0} ms incl. the last call)`);
            expect(w.services[0].proc.exited()).to.equal(false);
            expect(w.services[0].proc.child.pid).to.equal(pid);
            expect(recoveryMs).to.be.lessThan(15_000);
            await ensureWindow(5);
            const a = await w.send("/productpage");
            const b = await w.send("/productpage");
            expect([a!.overallCode, b!.overallCode]).to.deep.equal(["OK", "OVER_LIMIT"]);
        });
    });

    describe("the service starts before Redis is reachable", function () {
        let svc: RateLimitProcess | undefined;
        let redis: RedisServer | undefined;
        after(async () => {
            await svc?.stop();
            await redis?.stop();
        });

        it("it never answers OK and the rendered readiness probe fails until Redis is up; then it serves correct answers", async () => {
            const objects = await renderVariant("A", ONE_STORE);
            const rendered = renderedRatelimit(objects);
            redis = await RedisServer.start();
            await redis.stop(); // keep its port and password, but nothing listens there yet
            svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, waitReady: false });
            const early = svc.client();
            const domain = gatewayModel(objects).domain;
            const t0 = Date.now();
            let attempts = 0;
            while (Date.now() - t0 < 3_000) {
                attempts++;
                expect(await svc.ready(), "readiness probe before Redis").to.equal(false);
                let answer: Decision | Error;
                try {
                    answer = await early.shouldRateLimit(domain, [[{ key: "PATH", value: "/productpage" }]], { deadlineMs: 300 });
                } catch (e) {
                    answer = e as Error;
                }
                expect(answer, "a gRPC answer before Redis is reachable").to.be.instanceOf(Error);
                await sleep(200);
            }
            early.close();
            const exited = svc.proc.exited();
            const restartPolicy = (rendered.deployment.spec as any).template.spec.restartPolicy ?? "Always";
            console.log(
                `      before Redis: ${attempts} probes refused, gRPC unavailable; process ${exited ? `exited (${svc.proc.exitCode()}); restartPolicy ${restartPolicy}` : "alive, retrying Redis with backoff"}`,
            );
            // The pinned commit exits when Redis is unreachable at start (envoyproxy/ratelimit#1143);
            // the Deployment's restartPolicy brings it back, as the harness does below.
            if (exited) expect(restartPolicy).to.equal("Always");

            await redis.resume();
            if (exited) {
                const t1 = Date.now();
                svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password });
                console.log(`      restarted as the kubelet would: ready ${Date.now() - t1} ms after Redis came up`);
            } else {
                const readyMs = await svc.waitReady(45_000);
                console.log(`      ready ${readyMs} ms after Redis came up (startup backoff with jitter)`);
            }
            const client = svc.client();
            await client.waitForReady();
            await ensureWindow(5);
            const a = await client.shouldRateLimit(domain, [[{ key: "PATH", value: "/productpage" }]]);
            const b = await client.shouldRateLimit(domain, [[{ key: "PATH", value: "/productpage" }]]);
            expect([a.overallCode, b.overallCode]).to.deep.equal(["OK", "OVER_LIMIT"]);
            client.close();
        });
    });
});
