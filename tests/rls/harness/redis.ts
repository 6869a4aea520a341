/** A Debian redis-server on loopback with a password, owned by the test that starts it. */
import * as crypto from "crypto";
import { redisServerBin } from "./tools";
import { freePort, isListening, waitFor } from "./ports";
import { Proc, start } from "./procs";
import { RespClient } from "./resp";

export class RedisServer {
    readonly password = crypto.randomBytes(12).toString("hex");
    private proc?: Proc;
    private constructor(
        readonly port: number,
        /** Server arguments after the password (default: no persistence); e.g. the stack's `redisServerArgs(...)`. */
        readonly serverArgs: string[] = ["--save", "", "--appendonly", "no"],
    ) {}

    static async start(port?: number, opts: { serverArgs?: string[] } = {}): Promise<RedisServer> {
        const r = new RedisServer(port ?? (await freePort()), opts.serverArgs);
        await r.resume();
        return r;
    }

    get address(): string {
        return `127.0.0.1:${this.port}`;
    }

    /** Starts (again) on the same port and password, empty (no persistence). */
    async resume(): Promise<void> {
        const bin = redisServerBin();
        if (!bin) throw new Error("redis-server is not installed (run scripts/tools/build-ratelimit.sh)");
        // Password on stdin-free config: pass as an argument (loopback, test-only secret).
        this.proc = start(bin, [
            "--bind",
            "127.0.0.1",
            "--port",
            String(this.port),
            "--requirepass",
            this.password,
            ...this.serverArgs,
            "--protected-mode",
            "yes",
            "--loglevel",
            "warning",
        ]);
        await waitFor(`redis on ${this.address}`, async () => {
            if (this.proc!.exited()) throw new Error(`redis-server exited: ${this.proc!.output()}`);
            return isListening(this.port);
        });
    }

    /** Stops the server process (SIGKILL: a crash, not a graceful shutdown). */
    async kill(): Promise<void> {
        await this.proc?.stop("SIGKILL");
    }

    async stop(): Promise<void> {
        await this.proc?.stop("SIGTERM");
    }

    get pid(): number | undefined {
        return this.proc?.child.pid;
    }

    async client(): Promise<RespClient> {
        return RespClient.connect(this.port, this.password);
    }

    async flushAll(): Promise<void> {
        const c = await this.client();
        try {
            await c.command("FLUSHALL");
        } finally {
            c.close();
        }
    }

    async keys(pattern = "*"): Promise<string[]> {
        const c = await this.client();
        try {
            return (await c.command("KEYS", pattern)) as string[];
        } finally {
            c.close();
        }
    }
}
