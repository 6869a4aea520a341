/**
 * Benchmark (not a test): `mesh-ratelimit replay` throughput on a generated access log of a million
 * lines (Istio's default text format, 500 clients, POSTs and GETs over an hour) through the program
 * of examples/login-limit. Prints the lines per second of reading the log and of the
 * whole replay (read, order, decide, summarize), the program's render apart.
 *
 *   npm run bench:replay [-- --lines N]
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseLog } from "../prove/access-log";
import { renderProgram } from "../prove/program-runner";
import { decideAll, inTimeOrder, summarize } from "../prove/replay";
import { loginLog } from "../tests/unit/prove-login-log";

async function main(): Promise<void> {
    const i = process.argv.indexOf("--lines");
    const lines = i > 0 ? Number(process.argv[i + 1]) : 1_000_000;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-replay-")), "access.log");
    fs.writeFileSync(file, loginLog(lines, { clients: 500, spanMinutes: 60, seed: 1 }).text);
    const t0 = process.hrtime.bigint();
    const program = await renderProgram(path.join(__dirname, "..", "examples", "login-limit"));
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage();
    const text = fs.readFileSync(file, "utf8");
    const log = parseLog(text);
    const t2 = process.hrtime.bigint();
    const { ordered, outOfOrder } = inTimeOrder(log.requests);
    const decisions = decideAll(program.objects, ordered);
    const result = summarize(log, ordered, decisions, outOfOrder);
    const t3 = process.hrtime.bigint();
    const cpu = process.cpuUsage(c1);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const s = (a: bigint, b: bigint) => Number(b - a) / 1e9;
    const login = result.rules.find((r) => r.rule === "login");
    console.log(`log: ${lines.toLocaleString("en")} lines, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB; program render ${s(t0, t1).toFixed(2)} s`);
    console.log(`read: ${s(t1, t2).toFixed(2)} s (${Math.round(lines / s(t1, t2)).toLocaleString("en")} lines/s)`);
    console.log(`replay (read, order, decide, summarize): ${s(t1, t3).toFixed(2)} s = ${Math.round(lines / s(t1, t3)).toLocaleString("en")} lines/s`);
    console.log(
        `replay CPU time (user + system of this process): ${cpuSeconds.toFixed(2)} s = ${Math.round(lines / cpuSeconds).toLocaleString("en")} lines per CPU second (the wall figure above is lower when other work shares the cores)`,
    );
    console.log(
        `rule login: ${login?.requests} requests, ${login?.refused} refused; bad lines ${result.bad.length}; node ${process.version}, ${os.cpus().length} cores`,
    );
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
