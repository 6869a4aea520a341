/**
 * Where the REAL rate-limit service listens when run with its RENDERED listen addresses (HOST,
 * GRPC_HOST, DEBUG_HOST as rendered; only the ports moved to free ones): gRPC, which the gateway
 * calls from another pod, on every address; the HTTP JSON API (PORT) and the debug server
 * (DEBUG_PORT: config dump, pprof) on the pod's loopback only. Reached here through a second
 * loopback address, 127.0.0.2, standing in for the pod's own address (only loopback is aimed at).
 * The other rls tests move every listen address to 127.0.0.1, so they cannot see this.
 * Negative control: the env without HOST and DEBUG_HOST (the service's default 0.0.0.0) answers
 * HTTP and debug on 127.0.0.2.
 */
import { expect } from "chai";
import * as http from "http";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { RlsClient, grpcHealth } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { renderedRatelimits } from "./harness/rendered";
import { renderVariant } from "./harness/stack";

const OTHER = "127.0.0.2";

/** GET `path` at `host:port`: the status, or "refused" (nothing listens there for that address). */
function get(host: string, port: number, path: string): Promise<number | "refused"> {
    return new Promise((resolve) => {
        const req = http.get({ host, port, path, timeout: 2_000 }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("error", () => resolve("refused"));
    });
}

/** What answers on 127.0.0.2 and on 127.0.0.1 for one service process. */
async function reach(svc: RateLimitProcess, domain: string) {
    const client = new RlsClient(`${OTHER}:${svc.grpcPort}`);
    try {
        const decision = (await client.shouldRateLimit(domain, [[{ key: "PATH", value: "/productpage" }]])).overallCode;
        return {
            grpcHealth: await grpcHealth(`${OTHER}:${svc.grpcPort}`, "ratelimit"),
            decision,
            http: await get(OTHER, svc.httpPort, "/healthcheck"),
            debug: await get(OTHER, svc.debugPort, "/rlconfig"),
            loopbackHttp: await get("127.0.0.1", svc.httpPort, "/healthcheck"),
            loopbackDebug: await get("127.0.0.1", svc.debugPort, "/rlconfig"),
        };
    } finally {
        client.close();
    }
}

describe("rls listen: the service run with its rendered listen addresses (ports moved only), reached on 127.0.0.2", function () {
    this.timeout(120_000);
    let redis: RedisServer;
    before(async () => {
        redis = await RedisServer.start();
    });
    after(async () => {
        await redis?.stop();
    });

    it("each rendered service answers gRPC (health and a decision) on 127.0.0.2; its HTTP API and debug server refuse 127.0.0.2 and answer on 127.0.0.1; negative control: without HOST and DEBUG_HOST, 127.0.0.2:8080 answers", async () => {
        const objects = await renderVariant("A");
        const domain = gatewayModel(objects).domain;
        const rendered = renderedRatelimits(objects);
        expect(rendered.length, "the fixed and the per-value service").to.equal(2);
        for (const r of rendered) {
            const svc = await RateLimitProcess.start(r, { redisAddress: redis.address, redisPassword: redis.password, renderedHosts: true });
            try {
                expect(
                    svc.rewritten.filter((k) => k.endsWith("HOST")),
                    "listen addresses as rendered",
                ).to.deep.equal([]);
                const seen = await reach(svc, domain);
                console.log(`      ${r.deployment.metadata.name} as rendered: ${JSON.stringify(seen)}`);
                expect(seen, String(r.deployment.metadata.name)).to.deep.include({ grpcHealth: "SERVING", http: "refused", debug: "refused" });
                expect(seen.decision).to.be.oneOf(["OK", "OVER_LIMIT"]);
                expect([seen.loopbackHttp, seen.loopbackDebug], "HTTP and debug on the pod's loopback").to.deep.equal([200, 200]);
            } finally {
                await svc.stop();
            }
        }
        const open = await RateLimitProcess.start(rendered[0]!, {
            redisAddress: redis.address,
            redisPassword: redis.password,
            renderedHosts: true,
            envOverrides: { HOST: null, DEBUG_HOST: null },
        });
        try {
            const seen = await reach(open, domain);
            console.log(`      control, without HOST and DEBUG_HOST: ${JSON.stringify(seen)}`);
            expect([seen.http, seen.debug], "control: HTTP and debug answer on 127.0.0.2").to.deep.equal([200, 200]);
        } finally {
            await open.stop();
        }
    });
});
