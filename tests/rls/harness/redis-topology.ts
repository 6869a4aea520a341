/**
 * Redis Cluster and Redis Sentinel setups made of real `redis-server` processes on loopback, one
 * password for every node (and the Sentinels), no persistence. Owned by the test that starts them.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { execFileSync } from "child_process";
import { redisServerBin } from "./tools";
import { freePort, isListening, waitFor } from "./ports";
import { Proc, start } from "./procs";
import { RespClient, Reply } from "./resp";

function redisCliBin(): string {
    const p = path.join(path.dirname(redisServerBin() ?? "/usr/bin/redis-server"), "redis-cli");
    if (!fs.existsSync(p)) throw new Error(`redis-cli not found next to redis-server (${p})`);
    return p;
}

/** One redis-server process (a Cluster node, a master or replica, or a Sentinel). */
export class RedisNode {
    proc?: Proc;
    constructor(
        readonly port: number,
        readonly password: string,
        readonly args: string[],
        readonly sentinel = false,
    ) {}

    get address(): string {
        return `127.0.0.1:${this.port}`;
    }

    async start(): Promise<void> {
        const bin = redisServerBin();
        if (!bin) throw new Error("redis-server is not installed (run scripts/tools/build-ratelimit.sh)");
        this.proc = start(bin, this.args);
        await waitFor(`redis ${this.sentinel ? "sentinel" : "server"} on ${this.address}`, async () => {
            if (this.proc!.exited()) throw new Error(`redis-server exited: ${this.proc!.output()}`);
            return isListening(this.port);
        });
    }

    /** SIGKILL: a crash, no chance to hand anything over. */
    async kill(): Promise<void> {
        await this.proc?.stop("SIGKILL");
    }

    async stop(): Promise<void> {
        await this.proc?.stop("SIGTERM", 2_000);
    }

    alive(): boolean {
        return !!this.proc && !this.proc.exited();
    }

    async command(...args: (string | number)[]): Promise<Reply> {
        const c = await RespClient.connect(this.port, this.password);
        try {
            return await c.command(...args);
        } finally {
            c.close();
        }
    }

    /** GET on this node even when it is a Cluster replica (READONLY on the same connection). */
    async readOnlyGet(key: string): Promise<Reply> {
        const c = await RespClient.connect(this.port, this.password);
        try {
            return (await c.pipeline([["READONLY"], ["GET", key]]))[1];
        } finally {
            c.close();
        }
    }

    /** `INFO <section>` as key → value. */
    async info(section: string): Promise<Record<string, string>> {
        const text = String(await this.command("INFO", section));
        return Object.fromEntries(
            text
                .split(/\r?\n/)
                .filter((l) => l.includes(":"))
                .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1)]),
        );
    }
}

/** A Redis Cluster: `masters` masters, each with `replicas` replicas, node timeout `nodeTimeoutMs`. */
export class RedisClusterSet {
    readonly password = crypto.randomBytes(12).toString("hex");
    readonly nodes: RedisNode[] = [];
    private constructor(readonly dir: string) {}

    static async start(masters = 3, replicas = 0, nodeTimeoutMs = 2_000): Promise<RedisClusterSet> {
        const c = new RedisClusterSet(fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-cluster-")));
        try {
            for (let i = 0; i < masters * (1 + replicas); i++) {
                const port = await freePort();
                const n = new RedisNode(port, c.password, [
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    String(port),
                    "--requirepass",
                    c.password,
                    "--masterauth",
                    c.password,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    path.join(c.dir, `nodes-${port}.conf`),
                    "--cluster-node-timeout",
                    String(nodeTimeoutMs),
                    "--dir",
                    c.dir,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--loglevel",
                    "warning",
                    // Replicas sync at once (the default waits 5 s for more replicas to share a transfer).
                    "--repl-diskless-sync-delay",
                    "0",
                ]);
                c.nodes.push(n);
            }
            await Promise.all(c.nodes.map((n) => n.start()));
            execFileSync(
                redisCliBin(),
                [
                    "-a",
                    c.password,
                    "--no-auth-warning",
                    "--cluster",
                    "create",
                    ...c.nodes.map((n) => n.address),
                    "--cluster-replicas",
                    String(replicas),
                    "--cluster-yes",
                ],
                { stdio: "pipe", timeout: 30_000 },
            );
            await c.waitHealthy(20_000);
            return c;
        } catch (e) {
            await c.stop();
            throw e;
        }
    }

    /** The seed list the service gets (`REDIS_URL` of REDIS_TYPE=CLUSTER). */
    get seeds(): string {
        return this.nodes.map((n) => n.address).join(",");
    }

    /**
     * Waits until every live node reports `cluster_state:ok` and every replica's link to its master
     * is up (a replica that never synced does not take part in a failover).
     */
    async waitHealthy(timeoutMs: number): Promise<number> {
        return waitFor(
            "cluster_state:ok on every live node, replicas in sync",
            async () => {
                for (const n of this.nodes.filter((x) => x.alive())) {
                    try {
                        const info = String(await n.command("CLUSTER", "INFO"));
                        if (!/cluster_state:ok/.test(info)) return false;
                        const repl = await n.info("replication");
                        if (repl.role === "slave" && repl.master_link_status !== "up") return false;
                    } catch {
                        return false;
                    }
                }
                return true;
            },
            timeoutMs,
            100,
        );
    }

    /** The live masters, by `ROLE`. */
    async masters(): Promise<RedisNode[]> {
        const out: RedisNode[] = [];
        for (const n of this.nodes.filter((x) => x.alive())) {
            const role = (await n.command("ROLE")) as Reply[];
            if (Array.isArray(role) && role[0] === "master") out.push(n);
        }
        return out;
    }

    /** The live master holding `key` (by its slot), and that master's replicas. */
    async ownerOf(key: string): Promise<{ master: RedisNode; replicas: RedisNode[] }> {
        for (const m of await this.masters()) {
            const r = await m.command("GET", key);
            if (!(r instanceof Error)) {
                const replicas: RedisNode[] = [];
                for (const n of this.nodes.filter((x) => x.alive() && x !== m)) {
                    const info = await n.info("replication");
                    if (info.role === "slave" && Number(info.master_port) === m.port) replicas.push(n);
                }
                return { master: m, replicas };
            }
        }
        throw new Error(`no live master serves ${key}`);
    }

    /** Every key on the live masters matching `pattern`, with its value and the port of its master. */
    async keys(pattern: string): Promise<{ key: string; value: number; port: number }[]> {
        const out: { key: string; value: number; port: number }[] = [];
        for (const m of await this.masters()) {
            for (const k of (await m.command("KEYS", pattern)) as string[]) out.push({ key: k, value: Number(await m.command("GET", k)), port: m.port });
        }
        return out;
    }

    async stop(): Promise<void> {
        await Promise.all(this.nodes.map((n) => n.stop()));
        fs.rmSync(this.dir, { recursive: true, force: true });
    }
}

/** One master, `replicas` replicas and `sentinels` Sentinels (quorum: a majority) monitoring `masterName`. */
export class SentinelSet {
    readonly password = crypto.randomBytes(12).toString("hex");
    readonly masterName = "mymaster";
    servers: RedisNode[] = [];
    sentinels: RedisNode[] = [];
    private constructor(readonly dir: string) {}

    static async start(replicas = 1, sentinels = 3, downAfterMs = 1_000): Promise<SentinelSet> {
        const s = new SentinelSet(fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-sentinel-")));
        try {
            const serverArgs = (port: number) => [
                "--bind",
                "127.0.0.1",
                "--port",
                String(port),
                "--requirepass",
                s.password,
                "--masterauth",
                s.password,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                s.dir,
                "--loglevel",
                "warning",
                "--repl-diskless-sync-delay",
                "0",
            ];
            const mport = await freePort();
            s.servers.push(new RedisNode(mport, s.password, serverArgs(mport)));
            for (let i = 0; i < replicas; i++) {
                const p = await freePort();
                s.servers.push(new RedisNode(p, s.password, [...serverArgs(p), "--replicaof", "127.0.0.1", String(mport)]));
            }
            await Promise.all(s.servers.map((n) => n.start()));
            const quorum = Math.floor(sentinels / 2) + 1;
            for (let i = 0; i < sentinels; i++) {
                const p = await freePort();
                const conf = path.join(s.dir, `sentinel-${p}.conf`);
                // Sentinel rewrites its config file, so each has its own.
                fs.writeFileSync(
                    conf,
                    [
                        `port ${p}`,
                        "bind 127.0.0.1",
                        `dir ${s.dir}`,
                        `requirepass ${s.password}`,
                        `sentinel monitor ${s.masterName} 127.0.0.1 ${mport} ${quorum}`,
                        `sentinel auth-pass ${s.masterName} ${s.password}`,
                        `sentinel down-after-milliseconds ${s.masterName} ${downAfterMs}`,
                        `sentinel failover-timeout ${s.masterName} 10000`,
                        `sentinel parallel-syncs ${s.masterName} 1`,
                        "",
                    ].join("\n"),
                );
                s.sentinels.push(new RedisNode(p, s.password, [conf, "--sentinel", "--loglevel", "warning"], true));
            }
            await Promise.all(s.sentinels.map((n) => n.start()));
            await s.waitSynced(20_000);
            return s;
        } catch (e) {
            await s.stop();
            throw e;
        }
    }

    /** `REDIS_URL` of REDIS_TYPE=SENTINEL: `<master name>,<sentinel>,...`. */
    get url(): string {
        return [this.masterName, ...this.sentinels.map((n) => n.address)].join(",");
    }

    /** The master's port as the Sentinels report it. */
    async masterPort(): Promise<number> {
        const r = (await this.sentinels.find((n) => n.alive())!.command("SENTINEL", "get-master-addr-by-name", this.masterName)) as string[];
        return Number(r[1]);
    }

    master(port: number): RedisNode {
        const n = this.servers.find((x) => x.port === port);
        if (!n) throw new Error(`no server on ${port}`);
        return n;
    }

    /** Waits until the replicas are in sync and every Sentinel knows the replicas and the other Sentinels. */
    async waitSynced(timeoutMs: number): Promise<number> {
        return waitFor(
            "replicas synced and Sentinels agreeing",
            async () => {
                try {
                    const m = this.master(await this.masterPort());
                    const info = await m.info("replication");
                    if (Number(info.connected_slaves) !== this.servers.filter((x) => x.alive()).length - 1) return false;
                    for (const r of this.servers.filter((x) => x.alive() && x !== m))
                        if ((await r.info("replication")).master_link_status !== "up") return false;
                    for (const s of this.sentinels) {
                        const r = (await s.command("SENTINEL", "master", this.masterName)) as string[];
                        const f: Record<string, string> = {};
                        for (let i = 0; i + 1 < r.length; i += 2) f[r[i]] = r[i + 1];
                        if (Number(f["num-other-sentinels"]) !== this.sentinels.length - 1) return false;
                        if (Number(f["num-slaves"]) < this.servers.length - 1) return false;
                    }
                    return true;
                } catch {
                    return false;
                }
            },
            timeoutMs,
            200,
        );
    }

    async stop(): Promise<void> {
        await Promise.all([...this.sentinels, ...this.servers].map((n) => n.stop()));
        fs.rmSync(this.dir, { recursive: true, force: true });
    }
}
