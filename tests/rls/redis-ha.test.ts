/**
 * The REAL service against a real Redis Cluster (several `redis-server --cluster-enabled yes` on
 * loopback) and a real Sentinel setup (master, replica, three Sentinels), each configured the way
 * the stack renders `redisMode` `cluster` / `sentinel` (REDIS_TYPE, REDIS_URL, REDIS_AUTH,
 * REDIS_SENTINEL_AUTH; only the addresses are rewritten to loopback).
 *
 * - Limits stay exact with several service processes sharing the counters.
 * - A master is killed (SIGKILL): every answer for its keys is an error until a replica has been
 *   promoted (the gateway's failure_mode_deny refuses them), never OK; afterwards, in the same
 *   window, at most the limit plus what asynchronous replication lost is let through (lost = the
 *   hits answered OK before the kill minus the promoted replica's counter at the kill, measured); the
 *   times to promotion and to the first answer after the kill are printed, not asserted.
 *
 * The promise is per window: a fixed window that ends during the experiment starts a new counter
 * (in another slot, so on another master), which lets the limit through again and can answer a
 * request "for the dead master" OK. Limits are per day (unit=day; windows start at 00:00 UTC), and
 * each failover experiment first waits for the next window when less than its whole time budget is
 * left in the current one, then checks that it ended inside that window. (The tier used unit=hour
 * without a guard: a run that crossed the hour failed with up to twice the limit answered OK.) See
 * docs/proof/rls.md, "Redis failover: what is promised".
 */
import { expect } from "chai";
import { explain } from "../../gateway-model/explain";
import { fixedWindowStart } from "../../gateway-model/fixed-window";
import { K8sObject } from "../../lib/k8s-object";
import { Decision, RlsClient } from "./harness/client";
import { sleep, waitFor } from "./harness/ports";
import { RedisClusterSet, RedisNode, SentinelSet } from "./harness/redis-topology";
import { RespClient } from "./harness/resp";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { renderVariant } from "./harness/stack";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

const LIMIT = 20;
const BASE = { unit: "day", catchAllLimit: String(LIMIT), redisPasswordSecret: "redis-auth" };
const RUN = Date.now().toString(36);
const WINDOW_MS = 86_400_000;

/**
 * Time budget of one failover experiment, from the key's first hit to its last answer. Promotion
 * is Redis's own work (failure detection, election) and slows down with the machine: 3–4 s when
 * quiet, and a loaded 2-core machine has needed more than 30 s. The budget is an upper bound for a
 * broken failover, not a figure the test promises; the measured times are printed.
 */
const PROMOTION_BUDGET_MS = 90_000;
/**
 * From promotion until every service process answers again. The service's Redis Cluster client
 * (radix v4) learns the new master only on a topology sync (every 5 s, asking a node it picks from
 * its pools, which can be the dead one): from the kill, 4–60 s measured for the slowest of the 3
 * processes (20 runs). Until then that process's calls for the dead master's slots end as errors,
 * which the gateway refuses.
 */
const RECOVERY_BUDGET_MS = 180_000;
/** A call after the failover that gets no answer within this is a refusal (the gateway's rateLimitTimeout). */
const AFTER_DEADLINE_MS = 2_000;
/** Sum of every step's own limit: 15 hits before (12 s deadline each), promotion, recovery, the hits after, 20 s for the rest. */
const EXPERIMENT_BUDGET_MS = 15 * 12_000 + PROMOTION_BUDGET_MS + RECOVERY_BUDGET_MS + (LIMIT + 10) * AFTER_DEADLINE_MS + 20_000;

const windowOf = (ms: number) => fixedWindowStart(WINDOW_MS / 1000, ms);

/** Waits for the next (day) window when less than `needMs` is left in the current one; returns the ms waited. */
async function ensureWindowLeft(needMs: number): Promise<number> {
    const left = WINDOW_MS - (Date.now() % WINDOW_MS);
    if (left >= needMs) return 0;
    console.log(`      waiting ${Math.ceil(left / 1000)} s for the next window (the experiment needs up to ${needMs / 1000} s of one window)`);
    await sleep(left + 200);
    return left + 200;
}

type Answer = { sentAt: number; at: number; result: Decision | Error };
const isOk = (a: Answer) => !(a.result instanceof Error) && a.result.overallCode === "OK";
const isError = (a: Answer) => a.result instanceof Error;

class Services {
    constructor(
        readonly objects: K8sObject[],
        readonly procs: RateLimitProcess[],
        readonly clients: RlsClient[],
    ) {}

    static async start(overrides: Record<string, string>, url: string, password: string, n: number): Promise<Services> {
        const objects = await renderVariant("A", { ...BASE, ...ONE_STORE, ...overrides });
        const rendered = renderedRatelimit(objects);
        const procs: RateLimitProcess[] = [];
        try {
            for (let i = 0; i < n; i++)
                procs.push(await RateLimitProcess.start(rendered, { redisAddress: url, redisPassword: password, sentinelPassword: password }));
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
        return this.clients[i % this.clients.length].shouldRateLimit(
            x.domain,
            x.descriptors.map((d) => d.entries),
            { deadlineMs },
        );
    }

    /** `per` concurrent requests for each path, round-robin over the processes; OK count per path. */
    async burst(paths: string[], per: number): Promise<Map<string, number>> {
        const oks = new Map<string, number>(paths.map((p) => [p, 0]));
        let i = 0;
        await Promise.all(
            paths.flatMap((p) =>
                Array.from({ length: per }, async () => {
                    const d = await this.send(p, i++);
                    if (d.overallCode === "OK") oks.set(p, oks.get(p)! + 1);
                }),
            ),
        );
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
        return {
            answers,
            async stop() {
                running = false;
                await Promise.all(loops);
            },
        };
    }

    async stop(): Promise<void> {
        for (const c of this.clients) c.close();
        await Promise.all(this.procs.map((p) => p.stop()));
    }
}

/**
 * The failover experiment. `key` has had `before` hits (all OK), the first sent at `firstHitAt`.
 * While a stream of first hits on fresh paths that live on `master` runs, 5 more hits on `key` are
 * fired and `master` is killed (SIGKILL). Then: the replicas' counters for `key` (frozen until one
 * is promoted), the time to promotion and to the first answer that is not an error, every service
 * process answering again, and `LIMIT + 10` hits on `key`.
 *
 * What is promised, and asserted: (1) no request whose counter lives on the dead master is answered
 * OK before a replica has been promoted; (2) in the window, the OK answers for `key` (before, during
 * and after the failover) are at most LIMIT plus the hits lost by asynchronous replication; (3) the
 * service answers again after the failover. How long promotion and recovery take is measured only.
 */
async function failover(
    what: string,
    svc: Services,
    o: {
        path: string;
        before: number;
        firstHitAt: number;
        freshPaths: string[];
        master: RedisNode;
        /** Each replica's counter for the key (READONLY reads; null counts as 0). */
        replicaValues: () => Promise<number[]>;
        /** Index of the replica that is now the master of the key, or -1. */
        promoted: () => Promise<number>;
        /** The topology as the live nodes see it, for the message when no replica is promoted in time. */
        topology: () => Promise<string>;
    },
): Promise<void> {
    const s = svc.stream(o.freshPaths);
    await sleep(300);
    const racing = Array.from({ length: 5 }, (_, i) =>
        svc.send(o.path, i).then(
            (d) => d,
            (e: Error) => e,
        ),
    );
    await o.master.kill();
    // From here on no request can reach the old master: the process is gone.
    const killedAt = Date.now();
    const replicasAtKill = await o.replicaValues();
    let promotedAt = 0;
    let promotedIndex = -1;
    // Start of the last poll that still saw no promoted replica: up to then, for certain, none was
    // (a busy machine can answer a poll late, so the time a poll *sees* the promotion is no bound).
    let notPromotedAt = killedAt;
    let recoveredAt = 0;
    try {
        try {
            await waitFor(
                "a replica promoted",
                async () => {
                    const t0 = Date.now();
                    const i = await o.promoted().catch(() => -1);
                    if (i >= 0) {
                        promotedAt = Date.now();
                        promotedIndex = i;
                        return true;
                    }
                    notPromotedAt = t0;
                    return false;
                },
                PROMOTION_BUDGET_MS,
                50,
            );
        } catch (e) {
            throw new Error(
                `${(e as Error).message} (killed at ${new Date(killedAt).toISOString()}; topology now: ${await o.topology().catch((x) => String(x))})`,
                { cause: e },
            );
        }
        await waitFor(
            "an answer that is not an error after the kill",
            () => {
                const a = s.answers.find((x) => x.sentAt > killedAt && !isError(x));
                if (a) recoveredAt = a.at;
                return !!a;
            },
            RECOVERY_BUDGET_MS,
            50,
        );
    } finally {
        await s.stop();
    }
    // Every process answers again before the hits after the failover: one process recovering says
    // nothing of the others, and a process still sending to the dead node would only refuse them
    // (or hold each until its deadline). One budget for the whole recovery.
    const recoveryEnds = promotedAt + RECOVERY_BUDGET_MS;
    let probe = 0;
    for (let p = 0; p < svc.clients.length; p++) {
        await waitFor(
            `service process ${p} answering after the failover`,
            async () => {
                const d = await svc.send(o.freshPaths[probe++ % o.freshPaths.length], p, 1_000).catch((e: Error) => e);
                return !(d instanceof Error);
            },
            Math.max(0, recoveryEnds - Date.now()),
            100,
        );
    }
    const allAnsweringAt = Date.now();
    const okBefore = o.before + (await Promise.all(racing)).filter((d) => !(d instanceof Error) && d.overallCode === "OK").length;
    let okAfter = 0;
    // After the failover a process may still answer one call with an error (e.g. CANCELLED while its
    // cluster client reconnects): the gateway refuses that request (failure_mode_deny), so it counts
    // as not OK; only OK answers can break the limit.
    for (let i = 0; i < LIMIT + 10; i++) {
        const d = await svc.send(o.path, i, AFTER_DEADLINE_MS).catch((e: Error) => e);
        if (!(d instanceof Error) && d.overallCode === "OK") okAfter++;
    }
    const endedAt = Date.now();
    // The promoted replica's counter is the one the window goes on with.
    const replicaAtKill = replicasAtKill[promotedIndex];
    const lost = Math.max(0, okBefore - replicaAtKill);
    const outage = s.answers.filter((a) => a.sentAt >= killedAt && a.at < notPromotedAt);
    report(what, {
        killToPromotedMs: `${notPromotedAt - killedAt}-${promotedAt - killedAt}`,
        killToFirstAnswerMs: recoveredAt - killedAt,
        killToAllProcessesMs: allAnsweringAt - killedAt,
        firstHitToEndMs: endedAt - o.firstHitAt,
        refusedDuringOutage: outage.filter(isError).length,
        okBeforeKill: okBefore,
        replicaAtKill,
        lostByReplication: lost,
        okTotal: okBefore + okAfter,
        limit: LIMIT,
    });
    // Every hit on `key` was decided in the window of its first hit (the limit is per window).
    expect(
        windowOf(endedAt),
        `the experiment stayed inside the window of its first hit (${new Date(o.firstHitAt).toISOString()} to ${new Date(endedAt).toISOString()})`,
    ).to.equal(windowOf(o.firstHitAt));
    expect(outage.length, "requests sent during the outage").to.be.greaterThan(0);
    expect(outage.filter(isOk), "OK answers for the dead master's keys before a replica was promoted").to.have.length(0);
    expect(outage.every(isError), "every answer during the outage is an error (failure_mode_deny: refused)").to.equal(true);
    expect(okBefore + okAfter, "OK answers in the window").to.be.at.most(LIMIT + lost);
    expect(s.answers.filter((a) => a.sentAt > killedAt && isOk(a)).length, "fresh paths answered OK again after the failover").to.be.greaterThan(0);
}

function report(what: string, f: Record<string, number | string>): void {
    console.log(
        `      measured (${what}): ${Object.entries(f)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")}`,
    );
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

    it("killing the master of a key: errors (never OK) until a replica is promoted; then, in the window, at most the limit plus what replication lost", async function () {
        this.timeout(2 * EXPERIMENT_BUDGET_MS + 30_000);
        await ensureWindowLeft(EXPERIMENT_BUDGET_MS);
        const path = `/static/k-${RUN}.css`;
        const before = 15;
        const firstHitAt = Date.now();
        for (let i = 0; i < before; i++) expect((await svc.send(path, i)).overallCode).to.equal("OK");
        const [key] = await cluster.keys(`*k-${RUN}*`);
        const { master, replicas } = await cluster.ownerOf(key.key);
        expect(replicas, "the key's master has a replica").to.have.length.at.least(1);
        // Fresh paths whose counters live on that master: the key name with the path swapped, by
        // CLUSTER KEYSLOT (one connection, one pipeline).
        const slots = ((await master.command("CLUSTER", "SLOTS")) as any[])
            .filter((r) => Number(r[2][1]) === master.port)
            .map((r) => [Number(r[0]), Number(r[1])]);
        const candidates = Array.from({ length: 5_000 }, (_, i) => `/static/o-${RUN}-${i}.css`);
        const conn = await RespClient.connect(master.port, master.password);
        const keySlots = await conn.pipeline(candidates.map((p) => ["CLUSTER", "KEYSLOT", key.key.replace(path, p)])).finally(() => conn.close());
        const freshPaths = candidates.filter((_, i) => slots.some(([a, b]) => Number(keySlots[i]) >= a && Number(keySlots[i]) <= b)).slice(0, 200);
        expect(freshPaths.length, "fresh paths on the key's master").to.be.greaterThan(50);
        expect(key.key, "the counter's key names the path").to.contain(path);
        await failover("cluster failover", svc, {
            path,
            before,
            firstHitAt,
            freshPaths,
            master,
            replicaValues: () => Promise.all(replicas.map(async (r) => Number(await r.readOnlyGet(key.key)))),
            promoted: async () => {
                for (let i = 0; i < replicas.length; i++) if (((await replicas[i].command("ROLE")) as any[])[0] === "master") return i;
                return -1;
            },
            topology: async () => {
                const live = cluster.nodes.filter((n) => n.alive());
                return (
                    await Promise.all(
                        live.map(
                            async (n) =>
                                `${n.port}: ${String(await n.command("CLUSTER", "NODES").catch((e) => e))
                                    .trim()
                                    .replace(/\n/g, " | ")}`,
                        ),
                    )
                ).join(" || ");
            },
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
            {
                redisMode: "sentinel",
                redisAddress: "s-0:26379,s-1:26379,s-2:26379",
                redisSentinelMaster: set.masterName,
                redisSentinelPasswordSecret: "sentinel-auth",
            },
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

    it("killing the master: errors (never OK) until the Sentinels promote the replica; then, in the window, at most the limit plus what replication lost", async function () {
        this.timeout(2 * EXPERIMENT_BUDGET_MS + 30_000);
        await ensureWindowLeft(EXPERIMENT_BUDGET_MS);
        const path = `/static/sk-${RUN}.css`;
        const before = 15;
        const firstHitAt = Date.now();
        for (let i = 0; i < before; i++) expect((await svc.send(path, i)).overallCode).to.equal("OK");
        const master = set.master(await set.masterPort());
        const replica = set.servers.find((n) => n !== master)!;
        const keys = (await master.command("KEYS", `*sk-${RUN}*`)) as string[];
        expect(keys).to.have.length(1);
        await failover("sentinel failover", svc, {
            path,
            before,
            firstHitAt,
            master,
            freshPaths: Array.from({ length: 2_000 }, (_, i) => `/static/so-${RUN}-${i}.css`),
            replicaValues: async () => [Number(await replica.command("GET", keys[0]))],
            promoted: async () => ((await set.masterPort()) === replica.port ? 0 : -1),
            topology: async () =>
                JSON.stringify(
                    await Promise.all(
                        set.sentinels
                            .filter((n) => n.alive())
                            .map((n) => n.command("SENTINEL", "get-master-addr-by-name", set.masterName).catch((e) => String(e))),
                    ),
                ),
        });
    });
});
