/**
 * `npm run bench:rls`: decisions per second and latency of the REAL rate-limit service on loopback,
 * side by side in one run, for
 *   (a) the stack's rendered settings,
 *   (b) Istio's sample settings (LOG_LEVEL=debug, service defaults otherwise),
 *   (c) the physical limit: raw Redis INCRBY+EXPIRE round trips (one pipelined pair per decision,
 *       what the service sends per descriptor) from the same client process,
 * plus redis-benchmark's INCR as a reference for a C client. Not a timed test: it reports.
 *
 * Each of (a), (b), (c) is measured twice on the same processes and settings: with the Node.js
 * @grpc/grpc-js client in this process (which costs ~180 µs CPU per call, more than the service),
 * then with the project's Go load generator tests/rls/loadgen (built by tests/rls/build-loadgen.sh
 * into $CACHE/tools/rls-loadgen/; path overridable with RLS_LOADGEN), so the service, not the client,
 * is what limits the wall-clock figures. BENCH_GO=0 skips the Go client.
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 64), BENCH_LIGHT_CONCURRENCY
 * (default 4), BENCH_OUT (directory for bench-rls.json/.md; `npm run bench:rls` sets $CACHE/results, or
 * tests/rls/results with BENCH_RECORD=1; run directly without it: tests/rls/results),
 * BENCH_SWEEP=1 also measures candidate tunings of (a), BENCH_OVERRIDES='{"K":"V"}' overrides
 * stack config for (a), BENCH_KEEP_LOGS=1 keeps the services' logs.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { execFileSync, spawn } from "child_process";
import { RedisServer } from "./harness/redis";
import { cpuSeconds } from "./harness/procs";
import { freePort } from "./harness/ports";
import { RateLimitProcess } from "./harness/service";
import { renderedRatelimit, RenderedRatelimit } from "./harness/rendered";
import { renderVariant } from "./harness/stack";
import { RlsClient, Descriptor } from "./harness/client";
import { redisBenchmarkBin, RATELIMIT_COMMIT, cacheDir } from "./harness/tools";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { fixedWindowStart } from "../../gateway-model/fixed-window";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const HIGH = Number(process.env.BENCH_CONCURRENCY ?? 64);
const LIGHT = Number(process.env.BENCH_LIGHT_CONCURRENCY ?? 4);
const CHANNELS = 4;
const LIGHT_SECONDS = Math.max(3, SECONDS / 2);
const LOADGEN = ((): string | undefined => {
    if (process.env.BENCH_GO === "0") return undefined;
    const bin = process.env.RLS_LOADGEN ?? path.join(cacheDir(), "tools", "rls-loadgen", "rls-loadgen");
    if (fs.existsSync(bin)) return bin;
    console.log(`SKIPPED: bench:rls Go client: ${bin} not built (tests/rls/build-loadgen.sh); Node client only`);
    return undefined;
})();

interface Measure {
    concurrency: number;
    decisionsPerSecond: number;
    p50ms: number;
    p99ms: number;
    /** Go client only. */
    p90ms?: number;
    maxms?: number;
    errors: number;
    ok: number;
    overLimit: number;
    /** Every decision made, warm-up included. */
    total: number;
}

interface Row {
    name: string;
    label: string;
    env?: Record<string, string>;
    high: Measure;
    light: Measure;
    /** CPU time per decision during the C=high run (contention-proof): service process, Redis. */
    cpuUsPerDecision: { service?: number; redis?: number; client?: number };
    /** Log bytes the service wrote per decision. */
    logBytesPerDecision?: number;
    loadAverage: number[];
    /** The same row measured with the Go load generator (same service process and settings). */
    go?: GoRow;
}

interface GoRow {
    high: Measure;
    light: Measure;
    /** CPU time per decision during the C=high run, warm-up included (all decisions made in it). */
    cpuUsPerDecision: { service?: number; redis?: number; client?: number };
    loadAverage: number[];
}

function percentile(sorted: number[], p: number): number {
    if (!sorted.length) return NaN;
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Closed loop: `concurrency` callers, each sends its next request when the previous one is answered. */
let firstLoop = true;

async function closedLoop(concurrency: number, seconds: number, call: (i: number) => Promise<"OK" | "OVER_LIMIT" | "ERR">): Promise<Measure> {
    // The first loop of the run also warms up the client's JIT (else row (a) pays for it).
    const warmupMs = firstLoop ? 4000 : 1000;
    firstLoop = false;
    const lat: number[] = [];
    let errors = 0;
    let ok = 0;
    let over = 0;
    let n = 0;
    const warmupEnd = Date.now() + warmupMs;
    const end = warmupEnd + seconds * 1000;
    let measuredStart = 0;
    let counted = 0;
    await Promise.all(
        Array.from({ length: concurrency }, async () => {
            while (Date.now() < end) {
                const i = n++;
                const t = process.hrtime.bigint();
                const r = await call(i);
                const now = Date.now();
                if (now >= warmupEnd) {
                    if (!measuredStart) measuredStart = now;
                    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
                    counted++;
                    if (r === "ERR") errors++;
                    else if (r === "OK") ok++;
                    else over++;
                }
            }
        }),
    );
    const elapsed = (Date.now() - measuredStart) / 1000;
    lat.sort((a, b) => a - b);
    return {
        concurrency,
        decisionsPerSecond: Math.round(counted / elapsed),
        p50ms: percentile(lat, 50),
        p99ms: percentile(lat, 99),
        errors,
        ok,
        overLimit: over,
        total: n,
    };
}

/** The traffic: a mix of what the gateway sends for the limited path, the api route and catch-all paths (via the gateway model). */
function workload(objects: any[]): { domain: string; requests: Descriptor[][] } {
    const m = gatewayModel(objects);
    const paths = [
        "/productpage",
        ...Array.from({ length: 9 }, (_, k) => `/api/v1/products/${k + 1}`),
        ...Array.from({ length: 90 }, (_, k) => `/static/asset-${k}.js`),
    ];
    const requests = paths.map((p) => explainWith(m, p).descriptors.map((d) => d.entries)).filter((d) => d.length);
    return { domain: m.domain, requests };
}

const LOG_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-bench-"));

/** Runs the Go load generator once (closed loop, its own warm-up) and returns its JSON report. */
function runLoadgen(args: string[], env: Record<string, string> = {}): Promise<any> {
    return new Promise((resolve, reject) => {
        const child = spawn(LOADGEN!, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("error", reject);
        child.on("close", (code) => {
            try {
                resolve(JSON.parse(out));
            } catch {
                reject(new Error(`rls-loadgen ${args.join(" ")} exited ${code}: ${err.trim() || out.trim()}`));
            }
        });
    });
}

function goMeasure(r: any): Measure {
    return {
        concurrency: r.concurrency,
        decisionsPerSecond: Math.round(r.decisionsPerSecond),
        p50ms: r.p50ms,
        p90ms: r.p90ms,
        p99ms: r.p99ms,
        maxms: r.maxms,
        errors: r.errors,
        ok: r.ok,
        overLimit: r.overLimit,
        total: r.totalRequests,
    };
}

/**
 * C=high then C=light with the Go client; `pids` are the server processes whose CPU is charged
 * per decision (service, Redis). The C=high CPU window covers the loadgen's warm-up too, so it
 * is divided by every decision made in it, as for the Node client.
 */
async function measureGo(args: string[], env: Record<string, string>, redis: RedisServer, servicePid?: number): Promise<GoRow> {
    const cpu = () => [servicePid ? cpuSeconds(servicePid) : 0, cpuSeconds(redis.pid!)];
    await redis.flushAll();
    const load = os.loadavg();
    const cpu0 = cpu();
    const high = await runLoadgen([...args, "-concurrency", String(HIGH), "-conns", String(CHANNELS), "-duration", `${SECONDS}s`, "-warmup", "1s"], env);
    const cpu1 = cpu();
    await redis.flushAll();
    const light = await runLoadgen(
        [...args, "-concurrency", String(LIGHT), "-conns", String(CHANNELS), "-duration", `${LIGHT_SECONDS}s`, "-warmup", "1s"],
        env,
    );
    const n = high.totalRequests;
    return {
        high: goMeasure(high),
        light: goMeasure(light),
        cpuUsPerDecision: {
            service: servicePid ? ((cpu1[0] - cpu0[0]) * 1e6) / n : undefined,
            redis: ((cpu1[1] - cpu0[1]) * 1e6) / n,
            client: (high.cpuTotalSeconds * 1e6) / n,
        },
        loadAverage: load,
    };
}

async function measureService(
    name: string,
    label: string,
    rendered: RenderedRatelimit,
    redis: RedisServer,
    objects: any[],
    envOverrides: Record<string, string | null>,
): Promise<Row> {
    const logFile = path.join(LOG_DIR, `${name}-${Date.now()}.log`);
    const svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, envOverrides, logFile });
    const pid = svc.proc.child.pid!;
    const clients = Array.from({ length: CHANNELS }, () => new RlsClient(svc.grpcAddress));
    await Promise.all(clients.map((c) => c.waitForReady()));
    const { domain, requests } = workload(objects);
    const call = async (i: number) => {
        try {
            const d = await clients[i % CHANNELS].shouldRateLimit(domain, requests[i % requests.length]);
            return d.overallCode === "OVER_LIMIT" ? "OVER_LIMIT" : "OK";
        } catch {
            return "ERR" as const;
        }
    };
    await redis.flushAll();
    const load = os.loadavg();
    const cpu0 = [cpuSeconds(pid), cpuSeconds(redis.pid!), cpuSeconds(process.pid)];
    const log0 = fs.statSync(logFile).size;
    const high = await closedLoop(HIGH, SECONDS, call);
    const cpu1 = [cpuSeconds(pid), cpuSeconds(redis.pid!), cpuSeconds(process.pid)];
    const log1 = fs.statSync(logFile).size;
    // The CPU window also covers the warm-up: divide by all decisions made in it.
    const decisions = high.total;
    await redis.flushAll();
    const light = await closedLoop(LIGHT, LIGHT_SECONDS, call);
    for (const c of clients) c.close();
    let go: GoRow | undefined;
    if (LOADGEN) {
        const wl = path.join(LOG_DIR, "workload.json");
        fs.writeFileSync(wl, JSON.stringify({ domain, requests }));
        go = await measureGo(["-mode", "grpc", "-target", svc.grpcAddress, "-workload", wl], {}, redis, pid);
    }
    const env = svc.env;
    await svc.stop();
    const shown = Object.fromEntries(
        Object.entries(env).filter(([k]) => /^(LOG_|REDIS_(POOL|PIPELINE|TYPE|SOCKET)|LOCAL_CACHE|USE_STATSD|USE_PROMETHEUS|DISABLE_STATS|NEAR_LIMIT)/.test(k)),
    );
    return {
        name,
        label,
        env: shown,
        high,
        light,
        cpuUsPerDecision: {
            service: ((cpu1[0] - cpu0[0]) * 1e6) / decisions,
            redis: ((cpu1[1] - cpu0[1]) * 1e6) / decisions,
            client: ((cpu1[2] - cpu0[2]) * 1e6) / decisions,
        },
        logBytesPerDecision: (log1 - log0) / decisions,
        loadAverage: load,
        go,
    };
}

async function measureRawRedis(redis: RedisServer): Promise<Row> {
    const conns = await Promise.all(Array.from({ length: CHANNELS }, () => redis.client()));
    const call = async (i: number) => {
        const key = `bench_PATH_/static/asset-${i % 90}.js_${fixedWindowStart(60, Date.now())}`;
        const r = await conns[i % CHANNELS].pipeline([
            ["INCRBY", key, 1],
            ["EXPIRE", key, 60],
        ]);
        return r.some((x) => x instanceof Error) ? "ERR" : "OK";
    };
    await redis.flushAll();
    const load = os.loadavg();
    const cpu0 = [cpuSeconds(redis.pid!), cpuSeconds(process.pid)];
    const high = await closedLoop(HIGH, SECONDS, call);
    const cpu1 = [cpuSeconds(redis.pid!), cpuSeconds(process.pid)];
    const light = await closedLoop(LIGHT, LIGHT_SECONDS, call);
    for (const c of conns) c.close();
    const go = LOADGEN ? await measureGo(["-mode", "redis", "-target", redis.address], { REDIS_PASSWORD: redis.password }, redis) : undefined;
    return {
        name: "c",
        label: `(c) raw Redis: INCRBY+EXPIRE pipelined pair per decision, same client, ${CHANNELS} connections`,
        high,
        light,
        cpuUsPerDecision: { redis: ((cpu1[0] - cpu0[0]) * 1e6) / high.total, client: ((cpu1[1] - cpu0[1]) * 1e6) / high.total },
        loadAverage: load,
        go,
    };
}

function redisBenchmark(redis: RedisServer): { requestsPerSecond: number; p50ms?: number; p99ms?: number } | undefined {
    const bin = redisBenchmarkBin();
    if (!bin) return undefined;
    let out: string;
    try {
        out = execFileSync(
            bin,
            ["-h", "127.0.0.1", "-p", String(redis.port), "-a", redis.password, "-c", String(HIGH), "-n", "200000", "-t", "incr", "--csv", "--precision", "3"],
            { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
        );
    } catch (e) {
        console.error(`redis-benchmark failed: ${(e as Error).message.split("\n")[0]}`);
        return undefined;
    }
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    const line = out
        .trim()
        .split("\n")
        .find((l) => l.startsWith('"INCR"'));
    if (!line) return undefined;
    const f = line.split(",").map((s) => s.replace(/"/g, ""));
    return { requestsPerSecond: Math.round(Number(f[1])), p50ms: Number(f[4]), p99ms: Number(f[6]) };
}

/** Istio's sample (samples/ratelimit/rate-limit-service.yaml): LOG_LEVEL=debug, defaults otherwise. */
function istioSampleEnv(rendered: RenderedRatelimit): Record<string, string | null> {
    const keep = new Set([
        "RUNTIME_ROOT",
        "RUNTIME_SUBDIRECTORY",
        "RUNTIME_WATCH_ROOT",
        "RUNTIME_IGNOREDOTFILES",
        "REDIS_SOCKET_TYPE",
        "REDIS_URL",
        "REDIS_AUTH",
        "USE_STATSD",
        "PORT",
        "GRPC_PORT",
        "DEBUG_PORT",
    ]);
    const out: Record<string, string | null> = {};
    for (const e of rendered.env) if (!keep.has(e.name)) out[e.name] = null;
    out.LOG_LEVEL = "debug";
    return out;
}

function fmt(n: number, d = 2): string {
    return Number.isFinite(n) ? n.toFixed(d) : "n/a";
}

async function main(): Promise<void> {
    const overrides = JSON.parse(process.env.BENCH_OVERRIDES ?? "{}");
    const objects = await renderVariant("A", { ...ONE_STORE, ...overrides });
    const rendered = renderedRatelimit(objects);
    const redis = await RedisServer.start();
    const rows: Row[] = [];
    try {
        rows.push(await measureService("a", "(a) the stack's rendered settings", rendered, redis, objects, {}));
        // Everything the sample does not set is unset, so the service uses its own defaults.
        rows.push(
            await measureService("b", "(b) Istio's sample settings (LOG_LEVEL=debug, defaults otherwise)", rendered, redis, objects, istioSampleEnv(rendered)),
        );
        rows.push(await measureRawRedis(redis));
        if (process.env.BENCH_SWEEP === "1") {
            const prom = `127.0.0.1:${await freePort()}`;
            // Candidate tunings of the stack's ratelimit*/redis* keys, relative to the rendered defaults
            // (local cache 1 MiB, DISABLE_STATS=true, pool 10, no pipeline window).
            const sweep: [string, Record<string, string | null>][] = [
                ["local cache off (LOCAL_CACHE_SIZE_IN_BYTES=0: every decision goes to Redis)", { LOCAL_CACHE_SIZE_IN_BYTES: "0" }],
                ["USE_PROMETHEUS=true (ratelimitPrometheus=true)", { DISABLE_STATS: null, USE_PROMETHEUS: "true", PROMETHEUS_ADDR: prom }],
                ["pool 4", { REDIS_POOL_SIZE: "4" }],
                ["pool 32", { REDIS_POOL_SIZE: "32" }],
                ["pipeline window 150us", { REDIS_PIPELINE_WINDOW: "150us" }],
                ["local cache off + pipeline window 150us", { LOCAL_CACHE_SIZE_IN_BYTES: "0", REDIS_PIPELINE_WINDOW: "150us" }],
            ];
            for (const [label, env] of sweep) rows.push(await measureService(`sweep`, `sweep: rendered + ${label}`, rendered, redis, objects, env));
        }
    } finally {
        await redis.stop();
    }
    const rbRedis = await RedisServer.start();
    const rb = redisBenchmark(rbRedis);
    await rbRedis.stop();

    const a = rows.find((r) => r.name === "a")!;
    const b = rows.find((r) => r.name === "b")!;
    const c = rows.find((r) => r.name === "c")!;
    const ratios = {
        a_over_b_throughput: a.high.decisionsPerSecond / b.high.decisionsPerSecond,
        b_over_a_service_cpu_per_decision: b.cpuUsPerDecision.service! / a.cpuUsPerDecision.service!,
        a_over_c_throughput: a.high.decisionsPerSecond / c.high.decisionsPerSecond,
        a_p99_light_ms: a.light.p99ms,
        /** Service capacity per core: 1 / service CPU per decision (C=high, Node client run). */
        a_over_b_service_capacity: b.cpuUsPerDecision.service! / a.cpuUsPerDecision.service!,
        go:
            a.go && b.go && c.go
                ? {
                      a_over_b_throughput: a.go.high.decisionsPerSecond / b.go.high.decisionsPerSecond,
                      a_over_b_throughput_light: a.go.light.decisionsPerSecond / b.go.light.decisionsPerSecond,
                      b_over_a_service_cpu_per_decision: b.go.cpuUsPerDecision.service! / a.go.cpuUsPerDecision.service!,
                      a_over_c_throughput: a.go.high.decisionsPerSecond / c.go.high.decisionsPerSecond,
                      a_over_c_throughput_light: a.go.light.decisionsPerSecond / c.go.light.decisionsPerSecond,
                      a_p99_light_ms: a.go.light.p99ms,
                      a_p99_high_ms: a.go.high.p99ms,
                  }
                : undefined,
        targets: { a_over_b_at_least: 2, a_p99_under_ms: 2, a_within_factor_of_c: 2 },
    };
    const meta = {
        date: new Date().toISOString(),
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
        service: `envoyproxy/ratelimit ${RATELIMIT_COMMIT}`,
        redis: execFileSync("redis-server", ["--version"], { encoding: "utf8" }).trim(),
        seconds: SECONDS,
        concurrency: { high: HIGH, light: LIGHT, grpcChannels: CHANNELS },
        workload:
            "variant A; per request one of 100 paths round-robin: /productpage, /api/v1/products/1..9, 90 catch-all /static paths (descriptors via the gateway model); single service process",
        goClient: LOADGEN
            ? `tests/rls/loadgen (${path.basename(LOADGEN)}), GOMAXPROCS=${os.cpus().length}, ${CHANNELS} connections, run after the Node client on the same service process`
            : "skipped (BENCH_GO=0)",
    };
    const md: string[] = [];
    md.push(
        `| setting | decisions/s (C=${HIGH}) | p50 ms | p99 ms | decisions/s (C=${LIGHT}) | p50 ms | p99 ms | service CPU µs/decision | Redis CPU µs/decision | client CPU µs/decision | log B/decision | errors | load avg |`,
    );
    md.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) {
        md.push(
            `| ${r.label} | ${r.high.decisionsPerSecond} | ${fmt(r.high.p50ms)} | ${fmt(r.high.p99ms)} | ${r.light.decisionsPerSecond} | ${fmt(r.light.p50ms)} | ${fmt(r.light.p99ms)} | ` +
                `${r.cpuUsPerDecision.service === undefined ? "–" : fmt(r.cpuUsPerDecision.service, 1)} | ${fmt(r.cpuUsPerDecision.redis ?? NaN, 1)} | ${fmt(r.cpuUsPerDecision.client ?? NaN, 1)} | ${r.logBytesPerDecision === undefined ? "–" : fmt(r.logBytesPerDecision, 0)} | ${r.high.errors + r.light.errors} | ${fmt(r.loadAverage[0], 1)} |`,
        );
    }
    if (rb)
        md.push(
            `| reference: redis-benchmark INCR (C client, C=${HIGH}) | ${rb.requestsPerSecond} | ${fmt(rb.p50ms ?? NaN, 3)} | ${fmt(rb.p99ms ?? NaN, 3)} | | | | | | | | | |`,
        );
    md.push("");
    md.push(
        `Ratios (Node client): (a)/(b) throughput ${fmt(ratios.a_over_b_throughput)}× (target ≥ 2×), service CPU per decision (b)/(a) ${fmt(ratios.b_over_a_service_cpu_per_decision)}×; (a)/(c) ${fmt(ratios.a_over_c_throughput)}× (target ≥ 0.5×); (a) p99 at C=${LIGHT}: ${fmt(a.light.p99ms)} ms (target < 2 ms).`,
    );
    if (rows.some((r) => r.go)) {
        md.push("");
        md.push(`Go client (tests/rls/loadgen), same service processes and settings, run right after the Node client:`);
        md.push("");
        md.push(
            `| setting | decisions/s (C=${HIGH}) | p50 ms | p90 ms | p99 ms | decisions/s (C=${LIGHT}) | p50 ms | p90 ms | p99 ms | max ms | over limit % | service CPU µs/decision | Redis CPU µs/decision | client CPU µs/decision | errors | load avg |`,
        );
        md.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (const r of rows) {
            const g = r.go;
            if (!g) continue;
            md.push(
                `| ${r.label.replace(", same client", "")} | ${g.high.decisionsPerSecond} | ${fmt(g.high.p50ms)} | ${fmt(g.high.p90ms ?? NaN)} | ${fmt(g.high.p99ms)} | ${g.light.decisionsPerSecond} | ${fmt(g.light.p50ms)} | ${fmt(g.light.p90ms ?? NaN)} | ${fmt(g.light.p99ms)} | ${fmt(g.light.maxms ?? NaN)} | ${fmt((100 * g.high.overLimit) / Math.max(1, g.high.ok + g.high.overLimit + g.high.errors), 0)} | ` +
                    `${g.cpuUsPerDecision.service === undefined ? "–" : fmt(g.cpuUsPerDecision.service, 1)} | ${fmt(g.cpuUsPerDecision.redis ?? NaN, 1)} | ${fmt(g.cpuUsPerDecision.client ?? NaN, 1)} | ${g.high.errors + g.light.errors} | ${fmt(g.loadAverage[0], 1)} |`,
            );
        }
        const gr = ratios.go;
        if (gr) {
            md.push("");
            md.push(
                `Ratios (Go client): (a)/(b) throughput ${fmt(gr.a_over_b_throughput)}× at C=${HIGH}, ${fmt(gr.a_over_b_throughput_light)}× at C=${LIGHT} (target ≥ 2×), service CPU per decision (b)/(a) ${fmt(gr.b_over_a_service_cpu_per_decision)}×; ` +
                    `(a)/(c) ${fmt(gr.a_over_c_throughput)}× at C=${HIGH}, ${fmt(gr.a_over_c_throughput_light)}× at C=${LIGHT} (target ≥ 0.5×); (a) p99 ${fmt(gr.a_p99_light_ms)} ms at C=${LIGHT}, ${fmt(gr.a_p99_high_ms)} ms at C=${HIGH} (target < 2 ms).`,
            );
        }
    }
    const text = md.join("\n");
    console.log(
        `\n${meta.workload}\n${meta.machine.cpus} CPUs (${meta.machine.model}), ${meta.redis}, ${meta.service}, ${SECONDS}s per point after 1s warm-up (4s before the first)\n`,
    );
    console.log(text);
    for (const r of rows) console.log(`${r.name}: ${JSON.stringify(r.env ?? {})}`);
    const outDir = process.env.BENCH_OUT ?? path.join(__dirname, "results");
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "bench-rls.json"), JSON.stringify({ meta, rows, redisBenchmark: rb, ratios }, null, 2) + "\n");
    fs.writeFileSync(
        path.join(outDir, "bench-rls.md"),
        `${meta.date}, ${meta.machine.cpus} CPUs, ${meta.service}, ${meta.redis}\n\n${meta.workload}\n\nGo client: ${meta.goClient}\n\n${text}\n`,
    );
    console.log(`\nwritten: ${path.join(outDir, "bench-rls.json")}, ${path.join(outDir, "bench-rls.md")}`);
}

main().then(
    () => {
        // The service logs (the stats sink writes one line per decision) are large: keep them only on request.
        if (process.env.BENCH_KEEP_LOGS !== "1") fs.rmSync(LOG_DIR, { recursive: true, force: true });
        else console.log(`service logs kept in ${LOG_DIR}`);
        process.exit(0);
    },
    (e) => {
        console.error(e);
        process.exit(1);
    },
);
