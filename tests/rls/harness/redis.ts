/** A Debian redis-server on loopback with a password, owned by the test that starts it. */
import * as crypto from "crypto";
import * as path from "path";
import { redisServerBin } from "./tools";
import { freePort, isListening, waitFor } from "./ports";
import { Proc, start } from "./procs";
import { RespClient } from "./resp";
import type { RenderedRedis } from "./rendered";

export class RedisServer {
    readonly password = crypto.randomBytes(12).toString("hex");
    private proc?: Proc;
    private constructor(
        readonly port: number,
        /** Server arguments after the password (default: no persistence); e.g. the stack's `redisServerArgs(...)`. */
        readonly serverArgs: string[] = ["--save", "", "--appendonly", "no"],
        /** The rendered container, run as it is (its command and arguments, its secret variables set to the password). */
        readonly rendered?: RenderedRedis,
        /** CPUs it runs on (`taskset -c`); undefined: any. */
        readonly cpus?: string,
    ) {}

    /**
     * Redis as the stack renders it: the container's command and arguments (the password reaches
     * redis-server on stdin, never in an argument), with only loopback, the port and the log level
     * added; every variable the container reads from a Secret holds the test's password.
     */
    static async startRendered(rendered: RenderedRedis, opts: { port?: number; cpus?: string } = {}): Promise<RedisServer> {
        const r = new RedisServer(opts.port ?? (await freePort()), rendered.args, rendered, opts.cpus);
        await r.resume();
        return r;
    }

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
        const local = ["--bind", "127.0.0.1", "--port", String(this.port), "--protected-mode", "yes", "--loglevel", "warning"];
        if (this.rendered) {
            const [cmd, ...rest] = this.rendered.command;
            if (!cmd) throw new Error("the rendered Redis container has no command");
            const secrets = this.rendered.env.filter((e) => e.valueFrom?.secretKeyRef).map((e) => [e.name, this.password]);
            const dir = path.dirname(bin);
            const argv = [...rest, ...this.rendered.args, ...local];
            const env = { env: { PATH: `${dir}:/usr/bin:/bin`, ...Object.fromEntries(secrets) } };
            this.proc = this.cpus ? start("taskset", ["-c", this.cpus, cmd, ...argv], env) : start(cmd, argv, env);
        } else
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
