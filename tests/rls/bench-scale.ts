/**
 * `npm run bench:rls`, second part: where one Redis tops out and how to move the ceiling.
 *
 * Two request mixes, sent by the Go load generator (tests/rls/loadgen) to ONE real service process:
 * - over-limit: every request is for the limited path (/productpage, 1/minute), so after the first
 *   the service answers from its local over-limit cache and Redis is not asked;
 * - under-limit: each request is a distinct path (catch-all 100/minute, one hit each), so every
 *   decision is one INCRBY+EXPIRE in Redis.
 * against one Redis and a Redis Cluster of 3 masters (redisMode cluster, REDIS_PIPELINE_WINDOW 0 and
 * 150us), and one Redis with a larger pool. For each row: decisions/s, the service's and Redis's CPU
 * time per decision (from /proc; robust on a shared machine, unlike decisions/s), and the ceiling
 * they imply: decisions/s when one Redis core is busy (1e6 / Redis µs per decision), times the
 * masters for a Cluster. Every figure is labelled with the machine it was measured on.
 *
 * Env: BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 64), BENCH_OUT (results directory).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { spawn } from "child_process";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { cpuSeconds } from "./harness/procs";
import { RedisServer } from "./harness/redis";
import { RedisClusterSet } from "./harness/redis-topology";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { renderVariant } from "./harness/stack";
import { cacheDir } from "./harness/tools";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const HIGH = Number(process.env.BENCH_CONCURRENCY ?? 64);
const LOADGEN = process.env.RLS_LOADGEN ?? path.join(cacheDir(), "tools", "rls-loadgen", "rls-loadgen");
const OUT = process.env.BENCH_OUT ?? path.join(cacheDir(), "results");

function machine(): string {
    const cpu =
        fs
            .readFileSync("/proc/cpuinfo", "utf8")
            .match(/model name\s*:\s*(.*)/)?.[1]
            ?.trim() ?? "unknown CPU";
    return `${os.cpus().length} cores (${cpu}), load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} at the start`;
}

function loadgen(args: string[]): Promise<any> {
    return new Promise((resolve, reject) => {
        const child = spawn(LOADGEN, args, { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("error", reject);
        child.on("close", (code) => {
            try {
                resolve(JSON.parse(out));
            } catch {
                reject(new Error(`rls-loadgen exited ${code}: ${err.trim() || out.trim()}`));
            }
        });
    });
}

interface Row {
    topology: string;
    mix: string;
    settings: string;
    decisionsPerSecond: number;
    p99ms: number;
    errors: number;
    okShare: number;
    serviceUsPerDecision: number;
    redisUsPerDecision: number;
    masters: number;
    /** Decisions/s with every Redis master's core busy (1e6 x masters / Redis µs per decision). */
    ceiling: number;
}

async function main(): Promise<void> {
    if (!fs.existsSync(LOADGEN)) {
        console.log(`SKIPPED: bench:rls scale: ${LOADGEN} not built (tests/rls/build-loadgen.sh)`);
        return;
    }
    const where = machine();
    const run = Date.now().toString(36);
    const rows: Row[] = [];
    const wlDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-scale-"));

    async function measure(
        topology: string,
        overrides: Record<string, string>,
        redisUrl: string,
        password: string,
        redisPids: () => number[],
        masters: number,
        env: Record<string, string> = {},
    ) {
        const objects = await renderVariant("A", { ...ONE_STORE, ...overrides });
        const m = gatewayModel(objects);
        const mixes: [string, string[]][] = [
            ["over-limit (one limited path)", ["/productpage"]],
            [
                "under-limit (distinct paths, one INCRBY each)",
                Array.from({ length: 200_000 }, (_, i) => `/static/u-${run}-${topology.length}-${Object.keys(env).length}-${i}.js`),
            ],
        ];
        const svc = await RateLimitProcess.start(renderedRatelimit(objects), {
            redisAddress: redisUrl,
            redisPassword: password,
            envOverrides: env,
            logFile: path.join(wlDir, "service.log"),
        });
        try {
            for (const [mix, paths] of mixes) {
                const wl = path.join(wlDir, "workload.json");
                fs.writeFileSync(wl, JSON.stringify({ domain: m.domain, requests: paths.map((p) => explainWith(m, p).descriptors.map((d) => d.entries)) }));
                const cpu = () => [cpuSeconds(svc.proc.child.pid!), redisPids().reduce((a, p) => a + cpuSeconds(p), 0)];
                // Redis's own background CPU (a Cluster's bus heartbeats, cron) over 2 idle seconds,
                // subtracted so the per-decision figure is what the decisions cost.
                const i0 = cpu()[1];
                const it0 = Date.now();
                await new Promise((r) => setTimeout(r, 2_000));
                const idlePerSecond = (cpu()[1] - i0) / ((Date.now() - it0) / 1000);
                const t0 = Date.now();
                const c0 = cpu();
                const r = await loadgen([
                    "-mode",
                    "grpc",
                    "-target",
                    svc.grpcAddress,
                    "-workload",
                    wl,
                    "-concurrency",
                    String(HIGH),
                    "-conns",
                    "4",
                    "-duration",
                    `${SECONDS}s`,
                    "-warmup",
                    "1s",
                ]);
                const c1 = cpu();
                const n = r.totalRequests;
                const redisUs = Math.max(0, (c1[1] - c0[1] - idlePerSecond * ((Date.now() - t0) / 1000)) * 1e6) / n;
                rows.push({
                    topology,
                    mix,
                    settings:
                        [
                            ...Object.entries(overrides)
                                .filter(([k]) => !/^redis(Mode|Address|PasswordSecret)$/.test(k))
                                .map(([k, v]) => `${k}=${v}`),
                            ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
                        ].join(" ") || "stack defaults",
                    decisionsPerSecond: Math.round(r.decisionsPerSecond),
                    p99ms: r.p99ms,
                    errors: r.errors,
                    okShare: r.ok / Math.max(1, r.ok + r.overLimit),
                    serviceUsPerDecision: ((c1[0] - c0[0]) * 1e6) / n,
                    redisUsPerDecision: redisUs,
                    masters,
                    ceiling: redisUs > 0.05 ? Math.round((1e6 * masters) / redisUs) : Infinity,
                });
                console.log(JSON.stringify(rows[rows.length - 1]));
            }
        } finally {
            await svc.stop();
        }
    }

    const single = await RedisServer.start();
    try {
        await measure("one Redis", {}, single.address, single.password, () => [single.pid!], 1);
        await measure("one Redis", {}, single.address, single.password, () => [single.pid!], 1, { REDIS_POOL_SIZE: "50" });
    } finally {
        await single.stop();
    }
    const cluster = await RedisClusterSet.start(3, 0);
    try {
        const pids = () => cluster.nodes.map((n) => n.proc!.child.pid!);
        const base = { redisMode: "cluster", redisAddress: "redis-0:6379,redis-1:6379,redis-2:6379", redisPasswordSecret: "redis-auth" };
        await measure("Redis Cluster, 3 masters", base, cluster.seeds, cluster.password, pids, 3);
        await measure("Redis Cluster, 3 masters", { ...base, redisPipelineWindow: "150us" }, cluster.seeds, cluster.password, pids, 3);
    } finally {
        await cluster.stop();
    }

    const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a (Redis idle)");
    const md = [
        `# bench:rls scale: where one Redis tops out`,
        "",
        `Machine: ${where}. One service process, Go load generator, concurrency ${HIGH}, ${SECONDS} s per row; one run.`,
        "CPU per decision is CPU time (user+system, /proc) of the service and of every Redis process over the row, divided by the decisions made (Redis: less its idle background CPU, measured for 2 s before the row); it depends little on what else the machine runs. The ceiling is what those Redis figures imply: decisions/s with each Redis master's core fully busy.",
        "",
        "| topology | mix | settings | decisions/s (this machine) | p99 ms | errors | OK share | service µs/decision | Redis µs/decision | ceiling (decisions/s at busy Redis cores) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ...rows.map(
            (r) =>
                `| ${r.topology} | ${r.mix} | ${r.settings} | ${r.decisionsPerSecond} | ${f(r.p99ms, 2)} | ${r.errors} | ${(r.okShare * 100).toFixed(0)} % | ${f(r.serviceUsPerDecision)} | ${f(r.redisUsPerDecision, 2)} | ${Number.isFinite(r.ceiling) ? r.ceiling : "none (Redis not asked)"} |`,
        ),
        "",
    ].join("\n");
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, "bench-rls-scale.md"), md);
    fs.writeFileSync(path.join(OUT, "bench-rls-scale.json"), JSON.stringify({ machine: where, seconds: SECONDS, concurrency: HIGH, rows }, null, 2));
    console.log(md);
    console.log(`wrote ${path.join(OUT, "bench-rls-scale.md")}`);
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
