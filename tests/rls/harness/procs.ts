/** Child processes the harness starts; every one is stopped at exit even when a test throws. */
import { ChildProcess, spawn, SpawnOptions } from "child_process";
import * as fs from "fs";

const live = new Set<ChildProcess>();
process.on("exit", () => {
    for (const p of live) {
        try {
            p.kill("SIGKILL");
        } catch {
            /* already gone */
        }
    }
});

/** CPU seconds (user + system) a live process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[11] = utime, fields[12] = stime (clock ticks; 100 per second on Linux)
    return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Proc {
    child: ChildProcess;
    /** Everything the process wrote (stdout and stderr interleaved), for diagnostics. */
    output(): string;
    exited(): boolean;
    exitCode(): number | null;
    stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

/**
 * Starts a process. Its output is kept in memory, or written to `logFile` (the benchmark: a busy
 * debug log must not cost the measuring process CPU).
 */
export function start(cmd: string, args: string[], opts: SpawnOptions & { logFile?: string } = {}): Proc {
    const { logFile, ...spawnOpts } = opts;
    const fd = logFile ? fs.openSync(logFile, "a") : undefined;
    const child = spawn(cmd, args, { ...spawnOpts, stdio: fd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", fd, fd] });
    if (fd !== undefined) fs.closeSync(fd);
    live.add(child);
    let out = "";
    const keep = (d: Buffer) => {
        out += d.toString();
        if (out.length > 200_000) out = out.slice(-100_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    let done = false;
    let code: number | null = null;
    const exit = new Promise<void>((resolve) =>
        child.on("exit", (c) => {
            done = true;
            code = c;
            live.delete(child);
            resolve();
        }),
    );
    return {
        child,
        output: () => {
            if (!logFile) return out;
            const text = fs.readFileSync(logFile, "utf8");
            return text.slice(-100_000);
        },
        exited: () => done,
        exitCode: () => code,
        async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 5_000) {
            if (done) return;
            child.kill(signal);
            const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
            await exit;
            clearTimeout(t);
        },
    };
}
