/**
 * A real Prometheus (scripts/tools/build-prometheus.sh) on loopback, owned by the test that starts
 * it: a temporary directory for its config, rule file and storage; only loopback targets; its HTTP
 * API for queries and alerts. Also promtool.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as http from "http";
import { execFileSync } from "child_process";
import { stringify } from "yaml";
import { cacheDir } from "./tools";
import { freePort, waitFor } from "./ports";
import { Proc, start } from "./procs";

export const PROMETHEUS_VERSION = "v0.316.0";

export function prometheusBin(name: "prometheus" | "promtool"): string {
    return path.join(cacheDir(), "tools", `prometheus-${PROMETHEUS_VERSION}`, name);
}

export function prometheusMissing(): string[] {
    return (["prometheus", "promtool"] as const).map(prometheusBin).filter((b) => !fs.existsSync(b));
}

/** `promtool check rules <file>`: its exit code and output. */
export function promtoolCheckRules(file: string): { ok: boolean; output: string } {
    try {
        return { ok: true, output: execFileSync(prometheusBin("promtool"), ["check", "rules", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
    } catch (e: any) {
        return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
    }
}

export interface ScrapeTarget {
    job: string;
    /** host:port on 127.0.0.1 */
    address: string;
    /** Target labels, as the kubernetes-pods job's relabeling would set them (namespace, pod, pod labels). */
    labels: Record<string, string>;
    metricsPath?: string;
}

export interface Sample {
    metric: Record<string, string>;
    value: number;
}

function getJson(port: number, p: string): Promise<any> {
    return new Promise((resolve, reject) => {
        const req = http.get({ host: "127.0.0.1", port, path: p, timeout: 10_000 }, (res) => {
            let body = "";
            res.on("data", (c) => (body += c));
            res.on("end", () => {
                try {
                    resolve(JSON.parse(body));
                } catch {
                    reject(new Error(`${p}: ${res.statusCode} ${body.slice(0, 300)}`));
                }
            });
        });
        req.on("timeout", () => req.destroy(new Error(`${p}: timeout`)));
        req.on("error", reject);
    });
}

export class PrometheusServer {
    private constructor(
        readonly port: number,
        readonly dir: string,
        private readonly proc: Proc,
    ) {}

    /** Starts Prometheus scraping `targets` every second and evaluating `ruleGroups` every second. */
    static async start(targets: ScrapeTarget[], ruleGroups: unknown[]): Promise<PrometheusServer> {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-prom-"));
        for (const t of targets) if (!t.address.startsWith("127.0.0.1:")) throw new Error(`only loopback targets: ${t.address}`);
        fs.writeFileSync(path.join(dir, "rules.yaml"), stringify({ groups: ruleGroups }));
        const jobs = [...new Set(targets.map((t) => t.job))].map((job) => ({
            job_name: job,
            metrics_path: targets.find((t) => t.job === job)!.metricsPath ?? "/metrics",
            static_configs: targets.filter((t) => t.job === job).map((t) => ({ targets: [t.address], labels: t.labels })),
        }));
        fs.writeFileSync(
            path.join(dir, "prometheus.yml"),
            stringify({ global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" }, rule_files: ["rules.yaml"], scrape_configs: jobs }),
        );
        const port = await freePort();
        const proc = start(
            prometheusBin("prometheus"),
            [
                `--config.file=${path.join(dir, "prometheus.yml")}`,
                `--storage.tsdb.path=${path.join(dir, "data")}`,
                `--web.listen-address=127.0.0.1:${port}`,
                "--log.level=warn",
            ],
            { cwd: dir },
        );
        const p = new PrometheusServer(port, dir, proc);
        await waitFor(
            "prometheus ready",
            async () => {
                if (proc.exited()) throw new Error(`prometheus exited: ${proc.output()}`);
                try {
                    return (await getJson(port, "/api/v1/status/buildinfo")).status === "success";
                } catch {
                    return false;
                }
            },
            60_000,
            250,
        );
        return p;
    }

    /** An instant query; throws on a query error (a bad expression fails the test). */
    async query(expr: string): Promise<Sample[]> {
        const r = await getJson(this.port, `/api/v1/query?query=${encodeURIComponent(expr)}`);
        if (r.status !== "success") throw new Error(`query failed: ${expr}: ${r.error}`);
        if (r.data.resultType === "scalar") return [{ metric: {}, value: Number(r.data.result[1]) }];
        return r.data.result.map((s: any) => ({ metric: s.metric, value: Number(s.value[1]) }));
    }

    /** A range query (step 1 s): every series with its values. */
    async queryRange(expr: string, startMs: number, endMs: number): Promise<{ metric: Record<string, string>; values: [number, number][] }[]> {
        const q = `/api/v1/query_range?query=${encodeURIComponent(expr)}&start=${startMs / 1000}&end=${endMs / 1000}&step=1`;
        const r = await getJson(this.port, q);
        if (r.status !== "success") throw new Error(`query_range failed: ${expr}: ${r.error}`);
        return r.data.result.map((s: any) => ({ metric: s.metric, values: s.values.map(([t, v]: [number, string]) => [t, Number(v)]) }));
    }

    /** Active alerts (pending or firing). */
    async alerts(): Promise<{ labels: Record<string, string>; state: string }[]> {
        const r = await getJson(this.port, "/api/v1/alerts");
        return r.data.alerts;
    }

    /** Health of every scrape target. */
    async targets(): Promise<{ labels: Record<string, string>; health: string }[]> {
        const r = await getJson(this.port, "/api/v1/targets");
        return r.data.activeTargets;
    }

    async stop(): Promise<void> {
        await this.proc.stop("SIGTERM");
        fs.rmSync(this.dir, { recursive: true, force: true });
    }
}
