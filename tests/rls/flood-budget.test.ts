/**
 * A spent budget stays spent through a flood whose values go over their own limit, through the REAL
 * service as rendered (its over-limit cache on, sized by the stack) and its REAL Redis as rendered
 * (5mb, evicting by use), on every layout that stores a per-value counter and both windows.
 *
 * One per-value rule, 3 per window per `x-api-key`, values of 256 bytes (the longest a client gets
 * a counter of its own for). Victims: `spent` (3 used and refused once: 4 uses in Redis), `one-left` (2 uses) and
 * `two-left` (1 use). The flood, sent to the service by the project's load generator: new values,
 * each used 4 times in a row (3 allowed, the 4th over its limit and so in the cache, like the
 * spent key, and as often in Redis), in rounds of 1.5 times as many values as the store holds
 * counters until Redis has evicted the spent counter, never more requests than the attack cost of a spent
 * counter (builders/over-limit-cache.ts: the store's counters × 4, or the over-limit keys the cache
 * keeps × 4, the larger). As rendered: `spent` gets 0 more. Control: the same flood with the cache
 * the stack rendered before (1 MiB: 3 such keys a segment), until Redis has evicted the counter:
 * `spent` gets its 3 back. The partly used victims are printed: a flood of values used 4 times is
 * above their cost (a counter used k times goes for the store's counters × k requests).
 */
import { expect } from "chai";
import type { K8sObject } from "../../lib/k8s-object";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";
import { countersHeld, redisMemoryBytes } from "../../builders/failure-bounds";
import { spentCounterAttackRequests } from "../../builders/over-limit-cache";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { explain } from "../../gateway-model/explain";
import { listenerCalls, listenerModel } from "../../gateway-model/listener";
import { registerComponents } from "../../render/render";
import { RenderedRedis, renderedRatelimits, renderedRedis } from "./harness/rendered";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { RedisServer } from "./harness/redis";
import { RateLimitProcess } from "./harness/service";
import { redisInfo } from "./harness/counters";
import { runLoadgenWorkload } from "./harness/loadgen";
import { countedWorkloadArgs } from "./harness/flood";
import { ensureWindowOf } from "./harness/window";

const DAY = 86_400;
const LIMIT = 3;
const USES = LIMIT + 1;
const SMALL = "5mb";
const PREVIOUS_CACHE = "1048576";
// A small store on purpose (the flood must overflow it): the preview refuses such a rule unless its risk is accepted.
const rule = (unit: LimitUnit): RateLimitRuleArgs => ({
    name: "per-key",
    header: { name: "x-api-key", perValue: true },
    requestsPerUnit: LIMIT,
    unit,
    acceptEvictionRisk: true,
});
const FIXED: RateLimitRuleArgs = { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 100, unit: LimitUnit.Day };
/** A 256-byte `x-api-key` value, distinct per name: the longest a client gets a counter of its own for (longer ones are counted per client address). */
const value = (name: string) => `${name}-`.padEnd(256, "v");

type Call = { domain: string; descriptors: { key: string; value: string }[][] };
interface Layout {
    label: string;
    windowSeconds: number;
    render(): Promise<K8sObject[]>;
    side: number;
    call(objects: K8sObject[], key: string, sideName: string): Call;
}

function modelCall(objects: K8sObject[], key: string, sideName: string): Call {
    const c = explain(objects, "/search", { headers: { "x-api-key": key } }).calls.find((x) => x.service.split("|")[3]?.startsWith(`${sideName}.`));
    if (!c) throw new Error(`a request with an x-api-key makes no call to ${sideName} (model)`);
    return { domain: c.domain, descriptors: c.descriptors.map((d) => d.entries) };
}

const HOST = "a.example.com:8080";
function platformCall(objects: K8sObject[], key: string): Call {
    const model = listenerModel(
        objects.filter((o) => o.kind === "EnvoyFilter"),
        { port: 8080, podLabels: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: [{ name: HOST, routes: ["web"] }] },
    );
    const c = listenerCalls(model, { virtualHost: HOST, route: "web", path: "/search", headers: { "x-api-key": key }, clientAddress: "10.0.0.1" }).find(
        (x) => x.descriptors.length,
    );
    if (!c) throw new Error("the platform's filters send no descriptor for a request with an x-api-key (model)");
    return { domain: c.domain, descriptors: c.descriptors as { key: string; value: string }[][] };
}

const platform = (source: "defaults" | "overrides") => async () =>
    (
        await registerComponents(
            () =>
                void new PlatformRateLimit("platform", {
                    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system" },
                    namespace: "platform",
                    [source]: { rules: [rule(LimitUnit.Day)] },
                    redis: { maxMemory: SMALL },
                }),
            "platform",
            "rls",
        )
    ).objects;

const global = (rules: RateLimitRuleArgs[], x: Partial<GlobalRateLimitArgs>) => async () => [...USER_OBJECTS, ...(await renderComponent(rules, x))];

const LAYOUTS: Layout[] = [
    { label: "a per-value rule alone", windowSeconds: DAY, side: 0, call: modelCall, render: global([rule(LimitUnit.Day)], { redis: { maxMemory: SMALL } }) },
    {
        label: "a per-value rule alone, an hour window",
        windowSeconds: 3600,
        side: 0,
        call: modelCall,
        render: global([rule(LimitUnit.Hour)], { redis: { maxMemory: SMALL } }),
    },
    {
        label: "split: the per-value store",
        windowSeconds: DAY,
        side: 1,
        call: modelCall,
        render: global([FIXED, rule(LimitUnit.Day)], { perValueStore: { redis: { maxMemory: SMALL } } }),
    },
    {
        label: "counterStore single",
        windowSeconds: DAY,
        side: 0,
        call: modelCall,
        render: global([FIXED, rule(LimitUnit.Day)], { counterStore: CounterStore.Single, redis: { maxMemory: SMALL } }),
    },
    { label: "PlatformRateLimit defaults", windowSeconds: DAY, side: 0, call: platformCall, render: platform("defaults") },
    { label: "PlatformRateLimit overrides", windowSeconds: DAY, side: 0, call: platformCall, render: platform("overrides") },
];

interface Running {
    objects: K8sObject[];
    redis: RedisServer;
    svc: RateLimitProcess;
    name: string;
}

async function start(l: Layout, env: Record<string, string>, policy?: string): Promise<Running> {
    const objects = await l.render();
    const rendered = renderedRatelimits(objects)[l.side]!;
    const redisName = (rendered.env.find((e) => e.name === "REDIS_URL")?.value ?? "").split(".")[0]!;
    const asRendered = renderedRedis(objects, redisName);
    const redis = await RedisServer.startRendered(policy ? withPolicy(asRendered, policy) : asRendered);
    const svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, envOverrides: env });
    return { objects, redis, svc, name: String(rendered.deployment.metadata.name) };
}

/** The rendered Redis with another eviction policy and without the LFU settings (a control). */
function withPolicy(r: RenderedRedis, policy: string): RenderedRedis {
    const args = [...r.args];
    args[args.indexOf("--maxmemory-policy") + 1] = policy;
    const lfu = args.indexOf("--lfu-log-factor");
    if (lfu >= 0) args.splice(lfu, 4);
    return { ...r, args };
}

/** `n` requests with `name`'s key: how many the service allowed. */
async function requests(l: Layout, r: Running, name: string, n: number): Promise<number> {
    const { domain, descriptors } = l.call(r.objects, value(name), r.name);
    const c = r.svc.client();
    try {
        let ok = 0;
        for (let i = 0; i < n; i++) if ((await c.shouldRateLimit(domain, descriptors, { deadlineMs: 5_000 })).overallCode === "OK") ok++;
        return ok;
    } finally {
        c.close();
    }
}

async function command(r: Running, ...args: string[]): Promise<unknown> {
    const c = await r.redis.client();
    try {
        return await c.command(...args);
    } finally {
        c.close();
    }
}

/** One round of the flood: `values` new values from `from`, each sent `USES` times in a row. */
async function floodRound(l: Layout, r: Running, from: number, values: number, uses = USES): Promise<{ ok: number; overLimit: number; errors: number }> {
    const t = l.call(r.objects, value("spent"), r.name);
    const victim = value("spent");
    const reqs: unknown[] = [];
    for (let i = from; i < from + values; i++) {
        const v = value(`flood-${i}`);
        const d = t.descriptors.map((entries) => entries.map((e) => (e.value === victim ? { ...e, value: v } : e)));
        for (let u = 0; u < uses; u++) reqs.push(d);
    }
    const args = countedWorkloadArgs(r.svc.grpcAddress, reqs.length, { concurrency: 16, conns: 2 });
    const rep = await runLoadgenWorkload(t.domain, reqs, args);
    return { ok: rep.ok, overLimit: rep.overLimit, errors: rep.errors };
}

/** The case: victims, then flood rounds until Redis evicted the spent counter (at most `budget` requests); what each victim gets next. */
async function budgetCase(l: Layout, env: Record<string, string>, stopAtCost: boolean) {
    const r = await start(l, env);
    try {
        await ensureWindowOf(l.windowSeconds, 600);
        expect(await requests(l, r, "spent", USES), "spent: 3 of 4 before the flood").to.equal(LIMIT);
        expect(await requests(l, r, "one-left", 2), "one-left: 2 before the flood").to.equal(2);
        expect(await requests(l, r, "two-left", 1), "two-left: 1 before the flood").to.equal(1);
        const keys = (await command(r, "KEYS", `*${value("spent")}*`)) as string[];
        expect(keys, "the spent counter in Redis").to.have.length(1);
        const key = keys[0]!;
        const cacheBytes = Number(r.svc.env.LOCAL_CACHE_SIZE_IN_BYTES);
        const held = countersHeld(redisMemoryBytes(r.redis.serverArgs[r.redis.serverArgs.indexOf("--maxmemory") + 1]!)!, key.length);
        const cost = spentCounterAttackRequests({ limit: LIMIT, cheapestLimit: LIMIT, countersHeld: held, cacheBytes, keyBytes: key.length });
        // Rounds of 1.5 times the counters the store holds, until Redis evicted the spent counter (below the cost as rendered).
        const round = Math.ceil(1.5 * held);
        let sent = 0;
        let answers = { ok: 0, overLimit: 0, errors: 0 };
        for (let i = 0; i < 8 && (!stopAtCost || sent + round * USES < cost) && Number(await command(r, "EXISTS", key)) === 1; i++) {
            const a = await floodRound(l, r, i * round, round);
            answers = { ok: answers.ok + a.ok, overLimit: answers.overLimit + a.overLimit, errors: answers.errors + a.errors };
            sent += round * USES;
        }
        const gone = Number(await command(r, "EXISTS", key)) === 0;
        const info = await redisInfo(r.redis);
        const next = { spent: await requests(l, r, "spent", 5), oneLeft: await requests(l, r, "one-left", 5), twoLeft: await requests(l, r, "two-left", 5) };
        return { cacheBytes, held, cost, sent, answers, gone, evicted: Number(info.evicted_keys), next };
    } finally {
        await r.svc.stop();
        await r.redis.stop();
    }
}

/**
 * Values used once: `spent` and `one-left` used before, then 1.5 × the counters the store holds in
 * new values, each used once (below the cost of a counter used twice, 2 × the counters held, and
 * of no use against it: a value used once ties only with a counter used once): what each gets next.
 * With another `policy` (the control) the rounds go on until the counter used twice is gone.
 */
async function usedOnceCase(l: Layout, policy?: string) {
    const r = await start(l, {}, policy);
    try {
        await ensureWindowOf(l.windowSeconds, 600);
        expect(await requests(l, r, "spent", USES), "spent: 3 of 4 before the flood").to.equal(LIMIT);
        expect(await requests(l, r, "one-left", 2), "one-left: 2 before the flood").to.equal(2);
        const key = ((await command(r, "KEYS", `*${value("one-left")}*`)) as string[])[0]!;
        const held = countersHeld(redisMemoryBytes(r.redis.serverArgs[r.redis.serverArgs.indexOf("--maxmemory") + 1]!)!, key.length);
        const values = Math.ceil(1.5 * held);
        let answers = await floodRound(l, r, 0, values, 1);
        // The control (another policy) floods on until the counter is gone: which key goes first depends on its jitter there.
        for (let i = 1; policy && i < 8 && Number(await command(r, "EXISTS", key)) === 1; i++) answers = await floodRound(l, r, i * values, values, 1);
        const info = await redisInfo(r.redis);
        const kept = Number(await command(r, "EXISTS", key)) === 1;
        const next = { spent: await requests(l, r, "spent", 5), oneLeft: await requests(l, r, "one-left", 5) };
        return { held, values, cost: 2 * held, answers, evicted: Number(info.evicted_keys), kept, next, args: r.redis.serverArgs.join(" ") };
    } finally {
        await r.svc.stop();
        await r.redis.stop();
    }
}

describe("rls flood budget: a partly used budget never gains from a flood of values used once (real service as rendered, Redis as rendered, 5mb)", function () {
    this.timeout(600_000);

    for (const l of LAYOUTS) {
        it(`${l.label}: 1.5 × the store's counters in values used once, below the cost of a counter used twice: the client with 1 left gets exactly 1, the spent one 0; negative control: volatile-ttl loses the counter and gives 3`, async () => {
            const now = await usedOnceCase(l);
            console.log(
                `      as rendered (${now.args}): ${now.values} values used once (store holds ~${now.held}; cost of a counter used twice ${now.cost} requests), ` +
                    `evicted ${now.evicted}, ${JSON.stringify(now.answers)}; one-left counter kept ${now.kept}; next of 5 ${JSON.stringify(now.next)}`,
            );
            expect(now.values, "the flood stayed below the cost of a counter used twice").to.be.below(now.cost);
            expect(now.evicted, "the flood filled the store").to.be.greaterThan(0);
            expect(now.answers.errors, "no call failed").to.equal(0);
            expect(now.next, "what each client gets next").to.deep.equal({ spent: 0, oneLeft: 1 });

            const before = await usedOnceCase(l, "volatile-ttl");
            console.log(
                `      control (volatile-ttl): evicted ${before.evicted}; one-left counter kept ${before.kept}; next of 5 ${JSON.stringify(before.next)}`,
            );
            expect(before.kept, "volatile-ttl: the counter used twice is gone").to.equal(false);
            expect(before.next.oneLeft, "volatile-ttl: its budget comes back").to.equal(LIMIT);
        });
    }
});

describe("rls flood budget: a spent budget stays spent through a flood of values over their own limit (real service with its over-limit cache, Redis as rendered, 5mb)", function () {
    this.timeout(900_000);

    for (const l of LAYOUTS) {
        it(`${l.label}: values used 4 times (over their limit), below the printed cost of a spent counter: the spent client gets 0 more; negative control: the 1 MiB cache rendered before gives it 3 once Redis evicted its counter`, async () => {
            const now = await budgetCase(l, {}, true);
            console.log(
                `      as rendered (LOCAL_CACHE_SIZE_IN_BYTES=${now.cacheBytes}): store holds ~${now.held}, cost of a spent counter ${now.cost} requests; flood ${now.sent} requests ` +
                    `(${JSON.stringify(now.answers)}), evicted ${now.evicted}, spent counter gone from Redis ${now.gone}; next of 5 ${JSON.stringify(now.next)}`,
            );
            expect(now.sent, "the flood stayed below the printed cost").to.be.below(now.cost);
            expect(now.evicted, "the flood filled the store").to.be.greaterThan(0);
            expect(now.answers.errors, "no call failed").to.equal(0);
            expect(now.next.spent, "the spent client after the flood").to.equal(0);

            const before = await budgetCase(l, { LOCAL_CACHE_SIZE_IN_BYTES: PREVIOUS_CACHE }, false);
            console.log(
                `      control (LOCAL_CACHE_SIZE_IN_BYTES=${PREVIOUS_CACHE}): flood ${before.sent} requests, evicted ${before.evicted}, spent counter gone ${before.gone}; next of 5 ${JSON.stringify(before.next)}`,
            );
            expect(before.gone, "control: Redis evicted the spent counter").to.equal(true);
            expect(before.next.spent, "control: the spent budget comes back").to.equal(LIMIT);
        });
    }
});
