/** Runs the project's Go load generator (tests/rls/loadgen) once and returns its JSON report. */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { loadgenBin } from "./tools";

/**
 * Writes `{domain, requests}` as the generator's workload, runs it with `args` (on the CPUs
 * `cpus`, `taskset -c`, when given) and resolves with its report, whatever its exit code.
 */
export function runLoadgenWorkload(domain: string, requests: unknown[], args: string[], cpus?: string): Promise<any> {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-loadgen-")), "workload.json");
    fs.writeFileSync(file, JSON.stringify({ domain, requests }));
    const all = ["-mode", "grpc", "-workload", file, ...args];
    const [cmd, argv] = cpus ? ["taskset", ["-c", cpus, loadgenBin(), ...all]] : [loadgenBin(), all];
    return new Promise((resolve, reject) => {
        const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("error", reject);
        child.on("close", (code) => {
            fs.rmSync(path.dirname(file), { recursive: true, force: true });
            try {
                resolve(JSON.parse(out));
            } catch {
                reject(new Error(`rls-loadgen exited ${code}: ${err.trim() || out.trim()}`));
            }
        });
    });
}
