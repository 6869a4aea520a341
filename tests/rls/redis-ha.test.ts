/**
 * The REAL service against a real Redis Cluster (several `redis-server --cluster-enabled yes` on
 * loopback) and a real Sentinel setup (master, replica, three Sentinels), each configured the way
 * the stack renders `redisMode` `cluster` / `sentinel` (REDIS_TYPE, REDIS_URL, REDIS_AUTH,
 * REDIS_SENTINEL_AUTH; only the addresses are rewritten to loopback).
 *
 * - Limits stay exact with several service processes sharing the counters.
 * - A master is killed (SIGKILL): every answer for its keys is an error until a replica has been
 *   promoted (the gateway's failure_mode_deny refuses them), never OK; afterwards at most the
 *   limit plus what asynchronous replication lost is let through (lost = the master's counter at the
 *   kill minus the replica's, measured); the time to the first answer after the kill is printed.
 *
 * Limits are per hour here (unit=hour) so a run never straddles a window.
 */
import { expect } from "chai";
import { explain, K8sObject } from "../../render/explain";
import { Decision, RlsClient } from "./harness/client";
import { sleep, waitFor } from "./harness/ports";
import { RedisClusterSet, RedisNode, SentinelSet } from "./harness/redis-topology";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { renderVariant } from "./harness/stack";

const LIMIT = 20;
const BASE = { unit: "hour", catchAllLimit: String(LIMIT), redisPasswordSecret: "redis-auth" };
const RUN = Date.now().toString(36);

type Answer = { sentAt: number; at: number; result: Decision | Error };
const isOk = (a: Answer) => !(a.result instanceof Error) && a.result.overallCode === "OK";
const isError = (a: Answer) => a.result instanceof Error;

class Services {
    constructor(readonly objects: K8sObject[], readonly procs: RateLimitProcess[], readonly clients: RlsClient[]) {}

    static async start(overrides: Record<string, string>, url: string, password: string, n: number): Promise<Services> {
        const objects = await renderVariant("A", { ...BASE, ...overrides });
        const rendered = renderedRatelimit(objects);
        const procs: RateLimitProcess[] = [];
        try {
            for (let i = 0; i < n; i++) procs.push(await RateLimitProcess.start(rendered, { redisAddress: url, redisPassword: password, sentinelPassword: password }));
        } catch (e) {
            await Promise.all(procs.map((p) => p.stop()));
            throw e;
        }
        const clients = procs.map((p) => p.client());
        await Promise.all(clients.map((c) => c.waitForReady()));
        return new Services(objects, procs, clients);
    }

    async send(path: string, i = 0, deadlineMs = 12_000): Promise<Decision> {
        const x = explain(this.objects, path);
        return this.clients[i % this.clients.length].shouldRateLimit(x.domain, x.descriptors.map((d) => d.entries), { deadlineMs });
    }

    /** `per` concurrent requests for each path, round-robin over the processes; OK count per path. */
    async burst(paths: string[], per: number): Promise<Map<string, number>> {
        const oks = new Map<string, number>(paths.map((p) => [p, 0]));
        let i = 0;
        await Promise.all(paths.flatMap((p) => Array.from({ length: per }, async () => {
            const d = await this.send(p, i++);
            if (d.overallCode === "OK") oks.set(p, oks.get(p)! + 1);
        })));
        return oks;
    }

    /** Requests for fresh paths (each one's first hit, so OK whenever Redis answers) from `workers` loops until stop(). */
    stream(paths: string[], workers = 4) {
        const answers: Answer[] = [];
        let running = true;
        let k = 0;
        const loops = Array.from({ length: workers }, async () => {
            while (running) {
                const sentAt = Date.now();
                const i = k++;
                let result: Decision | Error;
                try {
                    // A 1 s deadline, like a gateway with rateLimitTimeout 1s: a call stuck on the dead
                    // master ends as an error and the next one shows when the service answers again.
                    result = await this.send(paths[i % paths.length], i, 1_000);
                } catch (e) {
                    result = e as Error;
                }
                answers.push({ sentAt, at: Date.now(), result });
                await sleep(20);
            }
        });
        return { answers, async stop() { running = false; await Promise.all(loops); } };
    }

    async stop(): Promise<void> {
        for (const c of this.clients) c.close();
        await Promise.all(this.procs.map((p) => p.stop()));
    }
}

/**
 * The failover experiment. `key` has had `before` hits (all OK). While a stream of first hits on
 * fresh paths that live on `master` runs, 5 more hits on `key` are fired and `master` is killed
 * (SIGKILL). Then: the replica's counter for `key` (frozen until it is promoted), the time to
 * promotion and to the first answer that is not an error, and `LIMIT + 10` hits on `key`.
 */
async function failover(what: string, svc: Services, o: {
    path: string; before: number; freshPaths: string[]; master: RedisNode; replicaValue: () => Promise<number>; promoted: () => Promise<boolean>;
}): Promise<void> {
    const s = svc.stream(o.freshPaths);
    await sleep(300);
    const racing = Array.from({ length: 5 }, (_, i) => svc.send(o.path, i).then((d) => d, (e: Error) => e));
    await o.master.kill();
    // From here on no request can reach the old master: the process is gone.
    const killedAt = Date.now();
    const replicaAtKill = await o.replicaValue();
    let promotedAt = 0;
    // Start of the last poll that still saw no promoted replica: up to then, for certain, none was
    // (a busy machine can answer a poll late, so the time a poll *sees* the promotion is no bound).
    let notPromotedAt = killedAt;
    let recoveredAt = 0;
    try {
        await waitFor("a replica promoted", async () => {
            const t0 = Date.now();
            if (await o.promoted().catch(() => false)) {
                promotedAt = Date.now();
                return true;
            }
            notPromotedAt = t0;
            return false;
        }, 30_000, 50);
        await waitFor("an answer that is not an error after the kill", () => {
            const a = s.answers.find((x) => x.sentAt > killedAt && !isError(x));
            if (a) recoveredAt = a.at;
            return !!a;
        }, 30_000, 50);
        await sleep(500);
    } finally {
        await s.stop();
    }
    const okBefore = o.before + (await Promise.all(racing)).filter((d) => !(d instanceof Error) && d.overallCode === "OK").length;
    let okAfter = 0;
    // After the failover a process may still answer one call with an error (e.g. CANCELLED while its
    // cluster client reconnects): the gateway refuses that request (failure_mode_deny), so it counts
    // as not OK; only OK answers can break the limit.
    for (let i = 0; i < LIMIT + 10; i++) {
        const d = await svc.send(o.path, i).catch((e: Error) => e);
        if (!(d instanceof Error) && d.overallCode === "OK") okAfter++;
    }
    const lost = Math.max(0, okBefore - replicaAtKill);
    const outage = s.answers.filter((a) => a.sentAt >= killedAt && a.at < notPromotedAt);
    report(what, {
        killToPromotedMs: `${notPromotedAt - killedAt}-${promotedAt - killedAt}`,
        killToFirstAnswerMs: recoveredAt - killedAt,
        refusedDuringOutage: outage.filter(isError).length,
        okBeforeKill: okBefore,
        replicaAtKill,
        lostByReplication: lost,
        okTotal: okBefore + okAfter,
        limit: LIMIT,
    });
    expect(outage.length, "requests sent during the outage").to.be.greaterThan(0);
    expect(outage.filter(isOk), "OK answers for the dead master's keys before a replica was promoted").to.have.length(0);
    expect(outage.every(isError), "every answer during the outage is an error (failure_mode_deny: refused)").to.equal(true);
    expect(okBefore + okAfter, "OK answers in the window").to.be.at.most(LIMIT + lost);
    expect(s.answers.filter((a) => a.sentAt > killedAt && isOk(a)).length, "fresh paths answered OK again after the failover").to.be.greaterThan(0);
}

function report(what: string, f: Record<string, number | string>): void {
    console.log(`      measured (${what}): ${Object.entries(f).map(([k, v]) => `${k}=${v}`).join(", ")}`);
}

describe("rls Redis Cluster: real service processes against 3 masters + 3 replicas on loopback (redisMode=cluster)", function () {
    this.timeout(120_000);
    let cluster: RedisClusterSet;
    let svc: Services;
    before(async function () {
        cluster = await RedisClusterSet.start(3, 1, 2_000);
        svc = await Services.start({ redisMode: "cluster", redisAddress: "redis-0:6379,redis-1:6379,redis-2:6379" }, cluster.seeds, cluster.password, 3);
    });
    after(async () => {
        await svc?.stop();
        await cluster?.stop();
    });

    it("the rendered service runs REDIS_TYPE=CLUSTER with the seed list", () => {
        expect(svc.procs[0].env.REDIS_TYPE).to.equal("CLUSTER");
        expect(svc.procs[0].env.REDIS_URL.split(",")).to.have.length(6);
    });

    it(`limits stay exact: 12 paths x 30 concurrent requests over 3 processes -> exactly ${LIMIT} OK each; counters spread over the masters`, async () => {
        const paths = Array.from({ length: 12 }, (_, i) => `/static/c-${RUN}-${i}.css`);
        const oks = await svc.burst(paths, 30);
        expect([...oks.values()]).to.deep.equal(Array(12).fill(LIMIT));
        const keys = await cluster.keys(`*c-${RUN}-*`);
        expect(keys, "one counter per path").to.have.length(12);
        // Every counter reached the limit (hits past it are answered from the over-limit cache, uncounted).
        for (const k of keys) expect(k.value, k.key).to.be.within(LIMIT, 30);
        expect(new Set(keys.map((k) => k.port)).size, "masters holding the 12 counters").to.be.at.least(2);
    });

    it("killing the master of a key: errors (never OK) until a replica is promoted; then at most the limit plus what replication lost", async () => {
        const path = `/static/k-${RUN}.css`;
        const before = 15;
        for (let i = 0; i < before; i++) expect((await svc.send(path, i)).overallCode).to.equal("OK");
        const [key] = await cluster.keys(`*k-${RUN}*`);
        const { master, replicas } = await cluster.ownerOf(key.key);
        expect(replicas, "the key's master has a replica").to.have.length.at.least(1);
        // Fresh paths whose counters live on that master: the key name with the path swapped, by CLUSTER KEYSLOT.
        const slots = ((await master.command("CLUSTER", "SLOTS")) as any[]).filter((r) => Number(r[2][1]) === master.port).map((r) => [Number(r[0]), Number(r[1])]);
        const freshPaths: string[] = [];
        for (let i = 0; freshPaths.length < 200 && i < 5_000; i++) {
            const p = `/static/o-${RUN}-${i}.css`;
            const slot = Number(await master.command("CLUSTER", "KEYSLOT", key.key.replace(path, p)));
            if (slots.some(([a, b]) => slot >= a && slot <= b)) freshPaths.push(p);
        }
        expect(key.key, "the counter's key names the path").to.contain(path);
        await failover("cluster failover", svc, {
            path, before, freshPaths, master,
            replicaValue: async () => Number(await replicas[0].readOnlyGet(key.key)),
            promoted: async () => ((await replicas[0].command("ROLE")) as any[])[0] === "master",
        });
        // The other masters' keys were counted all along: a fresh path works after the failover.
        expect((await svc.send(`/static/after-${RUN}.css`)).overallCode).to.equal("OK");
    });
});

describe("rls Redis Sentinel: real service processes against a master, a replica and 3 Sentinels on loopback (redisMode=sentinel)", function () {
    this.timeout(120_000);
    let set: SentinelSet;
    let svc: Services;
    before(async function () {
        set = await SentinelSet.start(1, 3, 1_000);
        svc = await Services.start(
            { redisMode: "sentinel", redisAddress: "s-0:26379,s-1:26379,s-2:26379", redisSentinelMaster: set.masterName, redisSentinelPasswordSecret: "sentinel-auth" },
            set.url,
            set.password,
            2,
        );
    });
    after(async () => {
        await svc?.stop();
        await set?.stop();
    });

    it("the rendered service runs REDIS_TYPE=SENTINEL with '<master>,<sentinels>' and both passwords", () => {
        const env = svc.procs[0].env;
        expect(env.REDIS_TYPE).to.equal("SENTINEL");
        expect(env.REDIS_URL.split(",")[0]).to.equal(set.masterName);
        expect(env.REDIS_AUTH).to.equal(set.password);
        expect(env.REDIS_SENTINEL_AUTH).to.equal(set.password);
    });

    it(`limits stay exact: 8 paths x 30 concurrent requests over 2 processes -> exactly ${LIMIT} OK each`, async () => {
        const paths = Array.from({ length: 8 }, (_, i) => `/static/s-${RUN}-${i}.css`);
        const oks = await svc.burst(paths, 30);
        expect([...oks.values()]).to.deep.equal(Array(8).fill(LIMIT));
    });

    it("killing the master: errors (never OK) until the Sentinels promote the replica; then at most the limit plus what replication lost", async () => {
        const path = `/static/sk-${RUN}.css`;
        const before = 15;
        for (let i = 0; i < before; i++) expect((await svc.send(path, i)).overallCode).to.equal("OK");
        const master = set.master(await set.masterPort());
        const replica = set.servers.find((n) => n !== master)!;
        const keys = (await master.command("KEYS", `*sk-${RUN}*`)) as string[];
        expect(keys).to.have.length(1);
        await failover("sentinel failover", svc, {
            path, before, master,
            freshPaths: Array.from({ length: 2_000 }, (_, i) => `/static/so-${RUN}-${i}.css`),
            replicaValue: async () => Number(await replica.command("GET", keys[0])),
            promoted: async () => (await set.masterPort()) === replica.port,
        });
    });
});
