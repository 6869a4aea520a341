/** Child processes the harness starts; every one is stopped at exit even when a test throws. */
import { ChildProcess, spawn, SpawnOptions } from "child_process";

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

export interface Proc {
    child: ChildProcess;
    /** Everything the process wrote (stdout and stderr interleaved), for diagnostics. */
    output(): string;
    exited(): boolean;
    exitCode(): number | null;
    stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

export function start(cmd: string, args: string[], opts: SpawnOptions = {}): Proc {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    live.add(child);
    let out = "";
    const keep = (d: Buffer) => {
        out += d.toString();
        if (out.length > 200_000) out = out.slice(-100_000);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
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
        output: () => out,
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
