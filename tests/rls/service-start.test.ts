/**
 * The platform's service starts on a loaded node: the REAL envoyproxy/ratelimit with a PlatformRateLimit's
 * rendered settings and its Redis as rendered.
 *
 * At start the service dials every connection of its pool and panics when one dial fails; the dial
 * is bounded by `REDIS_TIMEOUT`. A loaded node (or a Redis busy accepting) delays a connect, and a
 * connect whose first SYN is lost completes only after Linux resends it, 1 s later. The case makes
 * that happen on purpose: Redis stopped (SIGSTOP) with its accept queue full, so the service's SYNs
 * are dropped, then continued 300 ms after the service starts. As rendered (2 s) the service becomes
 * ready, the same process. Control: `REDIS_TIMEOUT=25ms` (what the platform's 50 ms filter timeout
 * gave before) exits with the panic `dial tcp ...: i/o timeout`, as seen once in about 25 starts
 * under load.
 */
import { expect } from "chai";
import * as net from "net";
import type { K8sObject } from "../../lib/k8s-object";
import { LimitUnit } from "../../builders/rule-args";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { registerComponents } from "../../render/render";
import { RedisServer } from "./harness/redis";
import { renderedRatelimit, renderedRedis } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";

async function renderPlatform(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () =>
            void new PlatformRateLimit("platform", {
                gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system" },
                namespace: "platform",
                defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Minute }] },
            }),
        "platform",
        "rls",
    );
    return objects;
}

/** Connects to `port`: whether the handshake completed within `ms`. */
function connects(port: number, ms: number, keep: net.Socket[]): Promise<boolean> {
    return new Promise((resolve) => {
        const s = net.connect({ host: "127.0.0.1", port });
        keep.push(s);
        const t = setTimeout(() => resolve(false), ms);
        s.once("connect", () => {
            clearTimeout(t);
            resolve(true);
        });
        s.once("error", () => {
            clearTimeout(t);
            resolve(false);
        });
    });
}

/**
 * Redis stopped with its accept queue full (a new SYN is dropped), the service started with
 * `env`, Redis continued after 300 ms: whether the service became ready, and its output's end.
 */
async function startWhileSynsDrop(
    objects: K8sObject[],
    env: Record<string, string | null>,
): Promise<{ ready: boolean; exited: boolean; tail: string; redisTimeout?: string }> {
    const rendered = renderedRatelimit(objects);
    const redisName = (rendered.env.find((e) => e.name === "REDIS_URL")?.value ?? "").split(".")[0]!;
    const redis = await RedisServer.startRendered(renderedRedis(objects, redisName));
    const fillers: net.Socket[] = [];
    let svc: RateLimitProcess | undefined;
    try {
        process.kill(redis.pid!, "SIGSTOP");
        // The accept queue holds min(tcp-backlog 511, somaxconn) connections: fill it until a connect no longer completes.
        let filled = false;
        for (let i = 0; i < 40 && !filled; i++) {
            await Promise.all(Array.from({ length: 50 }, () => connects(redis.port, 500, fillers)));
            filled = !(await connects(redis.port, 300, fillers));
        }
        expect(filled, "Redis's accept queue is full: a connect does not complete").to.equal(true);
        svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, waitReady: false, envOverrides: env });
        await new Promise((r) => setTimeout(r, 300));
        process.kill(redis.pid!, "SIGCONT");
        for (const s of fillers) s.destroy();
        let ready = false;
        try {
            await svc.waitReady(20_000);
            ready = true;
        } catch {
            ready = false;
        }
        return { ready, exited: svc.proc.exited(), tail: svc.proc.output().slice(-20_000), redisTimeout: svc.env.REDIS_TIMEOUT };
    } finally {
        for (const s of fillers) s.destroy();
        try {
            process.kill(redis.pid!, "SIGCONT");
        } catch {
            /* already gone */
        }
        await svc?.stop();
        await redis.stop();
    }
}

describe("rls service start: the platform's service starts while its first connects to Redis lose their SYN (real service and Redis as rendered)", function () {
    this.timeout(120_000);

    it("as rendered (REDIS_TIMEOUT 2000ms) it becomes ready, the same process; negative control: REDIS_TIMEOUT=25ms (derived from the 50 ms filter timeout before) panics with a dial i/o timeout", async () => {
        const objects = await renderPlatform();
        const now = await startWhileSynsDrop(objects, {});
        console.log(`      as rendered (REDIS_TIMEOUT=${now.redisTimeout}): ready ${now.ready}, exited ${now.exited}`);
        expect(now.redisTimeout, "the rendered dial bound").to.equal("2000ms");
        expect(now.exited, `the service kept running:\n${now.tail}`).to.equal(false);
        expect(now.ready, "the service became ready").to.equal(true);

        const before = await startWhileSynsDrop(objects, { REDIS_TIMEOUT: "25ms" });
        console.log(
            `      control (REDIS_TIMEOUT=25ms): ready ${before.ready}, exited ${before.exited}; ${before.tail.split("\n").find((l) => /panic/.test(l)) ?? ""}`,
        );
        expect(before.exited, "the service exited").to.equal(true);
        expect(before.tail, "the panic of a dial that timed out").to.match(/panic: .*i\/o timeout/);
    });
});
