/**
 * One real envoyproxy/ratelimit process (service_cmd), run with the stack's rendered settings.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as http from "http";
import { ratelimitBin } from "./tools";
import { freePort, isListening, waitFor } from "./ports";
import { Proc, start } from "./procs";
import { RenderedRatelimit, serviceEnv } from "./rendered";
import { RlsClient, grpcHealth } from "./client";

/**
 * Writes the ConfigMap's files the way the kubelet lays out a ConfigMap volume: a timestamped
 * `..<ts>` directory, a `..data` symlink to it and one symlink per key. This is why the stack
 * needs RUNTIME_IGNOREDOTFILES=true and RUNTIME_WATCH_ROOT=false.
 */
export function writeConfigMapVolume(dir: string, data: Record<string, string>): void {
    fs.mkdirSync(dir, { recursive: true });
    const ts = `..${new Date().toISOString().replace(/[-:.]/g, "_")}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    fs.mkdirSync(path.join(dir, ts));
    for (const [k, v] of Object.entries(data)) fs.writeFileSync(path.join(dir, ts, k), v);
    const tmpLink = path.join(dir, "..data_tmp");
    fs.rmSync(tmpLink, { force: true });
    fs.symlinkSync(ts, tmpLink);
    fs.renameSync(tmpLink, path.join(dir, "..data"));
    for (const k of Object.keys(data)) {
        const p = path.join(dir, k);
        if (!fs.existsSync(p)) fs.symlinkSync(path.join("..data", k), p);
    }
}

export interface HttpAnswer {
    status: number;
    body: string;
}

export function httpGet(port: number, p: string, timeoutMs = 2_000): Promise<HttpAnswer | "refused"> {
    return new Promise((resolve) => {
        const req = http.get({ host: "127.0.0.1", port, path: p, timeout: timeoutMs }, (res) => {
            let body = "";
            res.on("data", (d) => (body += d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.on("error", () => resolve("refused"));
    });
}

export interface StartOptions {
    redisAddress: string;
    redisPassword: string;
    /** Password of the Sentinels, when REDIS_SENTINEL_AUTH is rendered. */
    sentinelPassword?: string;
    /** Wait until /healthcheck answers 200 and gRPC connects. Default true. */
    waitReady?: boolean;
    /** Env changes on top (benchmark comparisons only; never in conformance tests); null unsets. */
    envOverrides?: Record<string, string | null>;
    /** Write the service's log to this file instead of keeping it in memory. */
    logFile?: string;
    /** Run it on these CPUs only (`taskset -c`), as a pod with a CPU budget of its own. */
    cpus?: string;
    /** Listen where the rendered env says (HOST, GRPC_HOST, DEBUG_HOST), only the ports moved. */
    renderedHosts?: boolean;
}

export class RateLimitProcess {
    private constructor(
        readonly rendered: RenderedRatelimit,
        readonly proc: Proc,
        readonly env: Record<string, string>,
        readonly rewritten: string[],
        readonly fsRoot: string,
        readonly httpPort: number,
        readonly grpcPort: number,
        readonly debugPort: number,
        /** Where PROMETHEUS_ADDR was moved to (only used when the rendered env serves metrics). */
        readonly metricsPort: number,
    ) {}

    static async start(rendered: RenderedRatelimit, opts: StartOptions): Promise<RateLimitProcess> {
        const fsRoot = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-pod-"));
        // The ConfigMap goes where the Deployment mounts it (under the stand-in root).
        writeConfigMapVolume(path.join(fsRoot, rendered.mountPath), rendered.configMap.data);
        const [httpPort, grpcPort, debugPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
        const { env, rewritten } = serviceEnv(rendered, {
            redisAddress: opts.redisAddress,
            redisPassword: opts.redisPassword,
            sentinelPassword: opts.sentinelPassword,
            fsRoot,
            httpPort,
            grpcPort,
            debugPort,
            metricsPort,
            renderedHosts: opts.renderedHosts ?? false,
        });
        for (const [k, v] of Object.entries(opts.envOverrides ?? {})) {
            if (v === null) delete env[k];
            else env[k] = v;
        }
        const args: string[] = rendered.container.args ?? [];
        const [cmd, cmdArgs] = opts.cpus ? ["taskset", ["-c", opts.cpus, ratelimitBin("service_cmd"), ...args]] : [ratelimitBin("service_cmd"), args];
        const proc = start(cmd, cmdArgs, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, logFile: opts.logFile });
        const p = new RateLimitProcess(rendered, proc, env, rewritten, fsRoot, httpPort, grpcPort, debugPort, metricsPort);
        if (opts.waitReady ?? true) await p.waitReady();
        return p;
    }

    get grpcAddress(): string {
        return `127.0.0.1:${this.grpcPort}`;
    }

    client(): RlsClient {
        return new RlsClient(this.grpcAddress);
    }

    /** Waits for the rendered readiness probe to pass and the gRPC port to accept connections. */
    async waitReady(timeoutMs = 20_000): Promise<number> {
        return waitFor(
            `rate-limit service ready on ${this.grpcAddress}`,
            async () => {
                if (this.proc.exited()) throw new Error(`service_cmd exited with ${this.proc.exitCode()}:\n${this.proc.output().slice(-4000)}`);
                return (await this.ready()) && (await isListening(this.grpcPort));
            },
            timeoutMs,
        );
    }

    /** Runs the Deployment's readinessProbe (gRPC health or httpGet) against this process: true = ready. */
    async ready(): Promise<boolean> {
        const grpcProbe = this.rendered.readinessProbe?.grpc;
        if (grpcProbe) return (await grpcHealth(`127.0.0.1:${this.mapPort(grpcProbe.port)}`, grpcProbe.service ?? "")) === "SERVING";
        const probe = this.rendered.readinessProbe?.httpGet;
        if (!probe) throw new Error("the rendered rate-limit container has no grpc or httpGet readinessProbe");
        const port = this.mapPort(probe.port);
        const a = await httpGet(port, probe.path ?? "/");
        return a !== "refused" && a.status >= 200 && a.status < 400;
    }

    /** Container port (number or name) → the loopback port this process listens on. */
    mapPort(port: number | string): number {
        const n = typeof port === "string" ? this.rendered.ports[port] : port;
        const env = this.rendered.env;
        const val = (k: string, d: number) => Number(env.find((e) => e.name === k)?.value ?? d);
        if (n === val("PORT", 8080)) return this.httpPort;
        if (n === val("GRPC_PORT", 8081)) return this.grpcPort;
        if (n === val("DEBUG_PORT", 6070)) return this.debugPort;
        throw new Error(`probe port ${port} is none of the service's ports`);
    }

    healthcheck(): Promise<HttpAnswer | "refused"> {
        return httpGet(this.httpPort, "/healthcheck");
    }

    /** The debug endpoint's view of the loaded config (`domain.KEY_VALUE: unit=... requests_per_unit=...`). */
    async rlconfig(): Promise<string> {
        const a = await httpGet(this.debugPort, "/rlconfig");
        if (a === "refused") throw new Error("debug port refused");
        return a.body;
    }

    /** The Prometheus text the service serves (PROMETHEUS_ADDR/PROMETHEUS_PATH, moved to loopback). */
    async metrics(): Promise<string> {
        const a = await httpGet(this.metricsPort, this.env.PROMETHEUS_PATH ?? "/metrics");
        if (a === "refused") throw new Error("metrics port refused (is ratelimitPrometheus on?)");
        return a.body;
    }

    /** Replaces the mounted config the way a ConfigMap update does (symlink swap). */
    updateConfig(data: Record<string, string>): void {
        writeConfigMapVolume(path.join(this.fsRoot, this.rendered.mountPath), data);
    }

    async stop(): Promise<void> {
        await this.proc.stop("SIGTERM");
        fs.rmSync(this.fsRoot, { recursive: true, force: true });
    }
}
