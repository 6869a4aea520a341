/**
 * `npm run bench:rls`, flood row: what the gateway's pre-limit saves the rate-limit service. A flood
 * of one limited path (variant A's `/api/v1/products/7`, api 2 per minute; and `/productpage`, 1 per
 * minute) at 10,000 and 20,000 requests a second for 10 s goes
 *   - with the pre-limit: through the gateway MODEL's local buckets (gateway-model/pre-limit-model.ts,
 *     simulated time, 3 modelled gateway pods), every request it passes to the REAL service;
 *   - without it: every request to the REAL service (as fast as the client sends, not paced).
 * Reported per client request: service calls and the service process's CPU (from /proc), and the
 * ratios. Not a test: it reports. Env: BENCH_FLOOD_SECONDS (default 10), BENCH_FLOOD_RATES (default
 * "10000,20000"), BENCH_OUT (the directory bench.sh gives).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { RedisServer } from "./harness/redis";
import { cpuSeconds } from "./harness/procs";
import { RateLimitProcess } from "./harness/service";
import { renderedRatelimit } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { RlsClient } from "./harness/client";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { PreLimitPod, preLimitDescriptors, readPreLimit } from "../../gateway-model/pre-limit-model";

const SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 10);
const RATES = (process.env.BENCH_FLOOD_RATES ?? "10000,20000").split(",").map(Number);
const PODS = 3;
const BATCH = 256;
/** The resolution of /proc's CPU times (100 ticks a second). */
const TICK = 0.01;

interface FloodRow {
    path: string;
    rate: number;
    preLimit: boolean;
    clientRequests: number;
    serviceCalls: number;
    ok: number;
    serviceCpuSeconds: number;
    wallSeconds: number;
}

async function main(): Promise<void> {
    const objects = await renderVariant("A");
    const model = gatewayModel(objects);
    const cfg = readPreLimit(objects, model);
    if (!cfg) throw new Error("the render has no pre-limit (preLimit=false?)");
    const rendered = renderedRatelimit(objects);
    const rows: FloodRow[] = [];
    for (const p of ["/api/v1/products/7", "/productpage"]) {
        for (const rate of RATES) {
            for (const preLimit of [true, false]) {
                // A fresh Redis and service for each run: no counter or over-limit cache carries over.
                const redis = await RedisServer.start();
                const svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password });
                const client: RlsClient = svc.client();
                await client.waitForReady();
                const x = explainWith(model, p);
                const descriptors = x.descriptors.map((d) => d.entries);
                const n = rate * SECONDS;
                const pods = Array.from({ length: PODS }, () => new PreLimitPod(cfg, 0));
                const cpu0 = cpuSeconds(svc.proc.child.pid!);
                const t0 = Date.now();
                let calls = 0;
                let ok = 0;
                let pending: Promise<unknown>[] = [];
                for (let i = 0; i < n; i++) {
                    const path = `${p}?n=${i}`;
                    if (preLimit && !pods[i % PODS].decide(preLimitDescriptors(model, cfg, path), i / rate).allowed) continue;
                    calls++;
                    pending.push(client.shouldRateLimit(x.domain, descriptors).then((d) => d.overallCode === "OK" && ok++));
                    if (pending.length >= BATCH) {
                        await Promise.all(pending);
                        pending = [];
                    }
                }
                await Promise.all(pending);
                const wall = (Date.now() - t0) / 1000;
                const cpu = cpuSeconds(svc.proc.child.pid!) - cpu0;
                rows.push({ path: p, rate, preLimit, clientRequests: n, serviceCalls: calls, ok, serviceCpuSeconds: cpu, wallSeconds: wall });
                console.log(
                    `flood ${p} ${rate}/s × ${SECONDS} s, pre-limit ${preLimit ? "on " : "off"}: ${calls} service calls for ${n} requests, ${ok} OK, service CPU ${cpu.toFixed(2)} s (${wall.toFixed(1)} s wall)`,
                );
                client.close();
                await svc.stop();
                await redis.stop();
            }
        }
    }
    const find = (p: string, rate: number, on: boolean) => rows.find((r) => r.path === p && r.rate === rate && r.preLimit === on)!;
    const lines = [
        `# bench:rls flood: the gateway pre-limit (model) in front of the real service`,
        "",
        `${new Date().toISOString()}, ${os.cpus().length} CPUs, load average before ${os
            .loadavg()
            .map((v) => v.toFixed(2))
            .join(
                " ",
            )}; ${PODS} modelled gateway pods; ${SECONDS} s of simulated flood per row; without the pre-limit the requests go to the service as fast as the client sends them.`,
        "",
        "| path | flood | pre-limit | client requests | service calls | calls per request | OK | service CPU (s) | service CPU per request (µs) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
        ...rows.map(
            (r) =>
                `| ${r.path} | ${r.rate}/s | ${r.preLimit ? "on" : "off"} | ${r.clientRequests} | ${r.serviceCalls} | ${(r.serviceCalls / r.clientRequests).toExponential(2)} | ${r.ok} | ${r.serviceCpuSeconds.toFixed(2)} | ${((r.serviceCpuSeconds * 1e6) / r.clientRequests).toFixed(3)} |`,
        ),
        "",
        "| path | flood | service calls, off / on | service CPU, off / on |",
        "|---|---:|---:|---:|",
    ];
    const ratios: Record<string, unknown>[] = [];
    for (const p of ["/api/v1/products/7", "/productpage"]) {
        for (const rate of RATES) {
            const [on, off] = [find(p, rate, true), find(p, rate, false)];
            const calls = off.serviceCalls / Math.max(1, on.serviceCalls);
            // /proc counts CPU in 10 ms ticks: below one tick, the ratio is at least off / 10 ms.
            const below = on.serviceCpuSeconds < TICK;
            const cpu = off.serviceCpuSeconds / Math.max(on.serviceCpuSeconds, TICK);
            ratios.push({ path: p, rate, callsRatio: calls, cpuRatio: cpu, cpuRatioIsLowerBound: below });
            lines.push(
                `| ${p} | ${rate}/s | ${calls.toFixed(0)}× | ${below ? "≥ " : ""}${cpu.toFixed(0)}×${below ? " (with the pre-limit: under one 10 ms /proc tick)" : ""} |`,
            );
        }
    }
    const outDir = process.env.BENCH_OUT ?? path.join(__dirname, "results");
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "bench-flood.json"), JSON.stringify({ seconds: SECONDS, pods: PODS, rows, ratios }, null, 2) + "\n");
    fs.writeFileSync(path.join(outDir, "bench-flood.md"), lines.join("\n") + "\n");
    console.log(lines.join("\n"));
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
