/**
 * `npm run bench:rls`, saturation row: fixed-limit decisions/s and p99 while a flood of new per-path
 * counters saturates the service that counts them, with one store (counterStore single, before) and
 * with the per-value counters in a store of their own (counterStore split, the default, after).
 *
 * Real envoyproxy/ratelimit processes and Redis servers started as the stack renders them, and the
 * project's Go load generator twice at once: the flood (64 in flight, a new 1,000-byte path each)
 * and the measured client (8 in flight, `/productpage` and the api descriptor, the fixed limits). On
 * two cores: the services counting the fixed limits and their Redis on CPU 0; the per-value
 * service, its Redis and both clients on CPU 1 (as pods with CPU budgets of their own; with one
 * store, its one service on CPU 0 takes the flood too). Not a test: it reports.
 * Env: BENCH_SATURATION_SECONDS (default 10), BENCH_OUT (the directory bench.sh gives).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { K8sObject } from "../../lib/k8s-object";
import { explain } from "../../gateway-model/explain";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { RenderedRatelimit, renderedRatelimits, renderedRedis } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { runLoadgenWorkload } from "./harness/loadgen";

const SECONDS = Number(process.env.BENCH_SATURATION_SECONDS ?? 10);
const PINNED = os.cpus().length >= 2;

interface Side {
    redis: RedisServer;
    svc: RateLimitProcess;
}

async function startSide(objects: K8sObject[], r: RenderedRatelimit, cpu: string): Promise<Side> {
    const redisName = (r.env.find((e) => e.name === "REDIS_URL")?.value ?? "").split(".")[0]!;
    const redis = await RedisServer.startRendered(renderedRedis(objects, redisName), PINNED ? { cpus: cpu } : {});
    const svc = await RateLimitProcess.start(r, { redisAddress: redis.address, redisPassword: redis.password, ...(PINNED ? { cpus: cpu } : {}) });
    return { redis, svc };
}

/** The descriptors of the call the gateway (MODEL) makes to `service` for a path. */
function callOf(objects: K8sObject[], p: string, service: string) {
    const c = explain(objects, p).calls.find((x) => x.service.split("|")[3]?.startsWith(`${service}.`));
    if (!c) throw new Error(`${p} calls nothing on ${service} (model)`);
    return { domain: c.domain, descriptors: c.descriptors.map((d) => d.entries) };
}

function loadgen(target: string, domain: string, requests: unknown[], concurrency: number): Promise<any> {
    const args = ["-target", target, "-warmup", "1s", "-duration", `${SECONDS}s`, "-concurrency", String(concurrency), "-conns", "4"];
    return runLoadgenWorkload(domain, requests, args, PINNED ? "1" : undefined);
}

async function row(layout: "single" | "split"): Promise<Record<string, string | number>> {
    const objects = await renderVariant("A", layout === "single" ? { counterStore: "single" } : {});
    const rendered = renderedRatelimits(objects);
    const sides: Side[] = [];
    try {
        sides.push(await startSide(objects, rendered[0]!, "0"));
        if (rendered[1]) sides.push(await startSide(objects, rendered[1], "1"));
        const fixedName = String(rendered[0]!.deployment.metadata.name);
        const floodName = String((rendered[1] ?? rendered[0])!.deployment.metadata.name);
        const fixedSide = sides[0]!;
        const floodSide = sides[sides.length - 1]!;
        // The measured client: the two fixed limits, alternately (each refuses after its limit: the
        // decision is still made, which is what is measured).
        const page = callOf(objects, "/productpage", fixedName);
        const api = callOf(objects, "/api/v1/products/7", fixedName);
        const flood = Array.from({ length: 200_000 }, (_, i) => callOf(objects, `/static/sat-${layout}-${i}/${"x".repeat(980)}`, floodName));
        const [f, m] = await Promise.all([
            loadgen(
                floodSide.svc.grpcAddress,
                flood[0]!.domain,
                flood.map((x) => x.descriptors),
                64,
            ),
            loadgen(fixedSide.svc.grpcAddress, page.domain, [page.descriptors, api.descriptors], 8),
        ]);
        return {
            layout:
                layout === "single"
                    ? "one store (counterStore single): the flood and the fixed limits share a service and Redis"
                    : "split (default): the flood on the per-value service and Redis",
            "fixed decisions/s": Math.round(m.decisionsPerSecond),
            "fixed p50 ms": Number(m.p50ms.toFixed(2)),
            "fixed p99 ms": Number(m.p99ms.toFixed(2)),
            "fixed errors": m.errors,
            "flood decisions/s": Math.round(f.decisionsPerSecond),
            "flood p99 ms": Number(f.p99ms.toFixed(2)),
        };
    } finally {
        for (const s of sides) {
            await s.svc.stop();
            await s.redis.stop();
        }
    }
}

async function main(): Promise<void> {
    const rows = [await row("single"), await row("split")];
    const keys = Object.keys(rows[0]!);
    const md = [
        `Saturation row (${new Date().toISOString().slice(0, 10)}, ${SECONDS} s each, ${PINNED ? "fixed side on CPU 0, per-value side and both clients on CPU 1" : "one core, no pinning"}):`,
        "",
        `| ${keys.join(" | ")} |`,
        `|${keys.map(() => "---").join("|")}|`,
        ...rows.map((r) => `| ${keys.map((k) => r[k]).join(" | ")} |`),
    ].join("\n");
    console.log(md);
    const out = process.env.BENCH_OUT;
    if (out) fs.writeFileSync(path.join(out, "bench-saturation.md"), `${md}\n`);
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
