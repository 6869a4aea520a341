/**
 * Benchmark (not a test): `mesh-ratelimit replay` of a generated access log (Istio's default text
 * format, POSTs and GETs to /login and other paths over an hour) through the program of
 * examples/login-limit, read from its file as the command reads it. The log is written line by line
 * first (never held whole), so the peak memory printed is the replay's. Prints the wall and CPU time
 * of the whole replay (the program's render included), lines per second, and the peak resident memory.
 *
 *   npx tsx scripts/bench-replay.ts [--lines N] [--clients K] [--xff] [--dist | --cli]
 *
 * Defaults: 1,000,000 lines, 100,000 clients. `--xff`: every line logs a different X-Forwarded-For
 * (a header no rule of the program reads: replay keeps nothing of it, prove/read-fields.ts). `--dist` replays with the compiled package
 * (`npm run build` first), as `npx mesh-ratelimit` runs it; without it, the TypeScript sources
 * through tsx, which are slower. `--cli`: the compiled command itself (`npm run build` first), `node
 * dist/prove/cli.js replay --program examples/login-limit <log> --json`, run as a CI runs it in a
 * process of its own under GNU time (`/usr/bin/time`, Linux): its CPU time and peak resident memory
 * are that process's alone (the log's writing is not in them).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type * as api from "../prove/api";
import { istioText } from "../tests/unit/prove-login-log";

const PATHS = ["/login", "/login", "/login?next=/cart", "/cart", "/", "/login/help"];

function flag(name: string, dflt: number): number {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** Writes `lines` lines from `clients` distinct clients (each sends at least once), over an hour. */
function writeLog(file: string, lines: number, clients: number, xff: boolean): void {
    const fd = fs.openSync(file, "w");
    const start = Date.UTC(2026, 10, 28, 9, 0, 0);
    let s = 7;
    const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    let batch: string[] = [];
    for (let i = 0; i < lines; i++) {
        const c = i < clients ? i : Math.floor(rnd() ** 3 * clients);
        const client = `10.${(c >> 16) & 255}.${(c >> 8) & 255}.${c & 255}`;
        const line = { timeMs: start + Math.floor((i / lines) * 3_600_000), method: rnd() < 0.6 ? "POST" : "GET", path: PATHS[i % PATHS.length]!, client };
        const text = istioText(line, i);
        batch.push(xff ? text.replace(' 3 2 "-" ', ` 3 2 "198.51.${(i >> 8) & 255}.${i & 255}, 10.0.${(i >> 16) & 255}.1" `) : text);
        if (batch.length === 10_000 || i === lines - 1) {
            fs.writeSync(fd, batch.join("\n") + "\n");
            batch = [];
        }
    }
    fs.closeSync(fd);
}

/** What the compiled command did with the log in a process of its own: its answer, CPU seconds, wall seconds and peak resident MB. */
function runCli(file: string): { r: api.ProgramReplay; cpuSeconds: number; wall: number; peakMb: number } {
    const cli = path.join(__dirname, "..", "dist", "prove", "cli.js");
    if (!fs.existsSync(cli)) throw new Error(`${cli} does not exist: run npm run build first`);
    if (!fs.existsSync("/usr/bin/time")) throw new Error("--cli measures the command with GNU time (/usr/bin/time): install it (apt-get install time)");
    const program = path.join(__dirname, "..", "examples", "login-limit");
    const p = spawnSync("/usr/bin/time", ["-f", "BENCH %e %U %S %M", process.execPath, cli, "replay", "--program", program, file, "--json"], {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
    });
    const m = /BENCH ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(p.stderr);
    if (p.status !== 0 || !m) throw new Error(`the command exited ${p.status}: ${p.stderr.slice(-2000)}`);
    return { r: JSON.parse(p.stdout), wall: Number(m[1]), cpuSeconds: Number(m[2]) + Number(m[3]), peakMb: Math.round(Number(m[4]) / 1024) };
}

/** The replay in this process (the compiled package with --dist, else the sources through tsx). */
async function runHere(file: string): Promise<{ r: api.ProgramReplay; cpuSeconds: number; wall: number; peakMb: number }> {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const from = process.argv.includes("--dist") ? path.join(__dirname, "..", "dist", "prove", "api") : "../prove/api";
    const { replayLogFile } = require(from) as typeof api;
    const r = await replayLogFile(path.join(__dirname, "..", "examples", "login-limit"), file);
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(c0);
    return { r, wall, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakMb: Math.round(process.resourceUsage().maxRSS / 1024) };
}

async function main(): Promise<void> {
    const lines = flag("--lines", 1_000_000);
    const clients = flag("--clients", 100_000);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-replay-")), "access.log");
    const xff = process.argv.includes("--xff");
    writeLog(file, lines, clients, xff);
    const cli = process.argv.includes("--cli");
    const { r, wall, cpuSeconds, peakMb } = cli ? runCli(file) : await runHere(file);
    const login = r.rules.find((x) => x.rule === "login");
    console.log(
        `log: ${lines.toLocaleString("en")} lines, ${clients.toLocaleString("en")} distinct clients, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB${xff ? ", a different X-Forwarded-For on every line (read by no rule)" : ""}`,
    );
    console.log(`replay (render, read, order, decide, summarize): ${wall.toFixed(2)} s wall = ${Math.round(lines / wall).toLocaleString("en")} lines/s`);
    console.log(`CPU time (user + system): ${cpuSeconds.toFixed(2)} s = ${Math.round(lines / cpuSeconds).toLocaleString("en")} lines per CPU second`);
    console.log(`peak resident memory of the ${cli ? "command's process" : "process"}: ${peakMb} MB`);
    console.log(`rule login: ${login?.requests} requests, ${login?.refused} refused; requests ${r.requests}; bad lines ${r.badCount}; node ${process.version}`);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
});
