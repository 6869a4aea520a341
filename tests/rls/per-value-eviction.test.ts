/**
 * No flood resets a per-value counter, in every layout that stores one: the REAL service and a REAL
 * Redis started with the arguments the stack renders (its `maxmemory` given small, 8mb, so that a
 * flood fills it), one per-value rule of 3 a day per `x-api-key`, values of 200 bytes (within the
 * length bound).
 *
 * 1. Eviction by use, per layout (a per-value rule alone, also with an hour window, the split layout's per-value store,
 *    `counterStore: single` with a fixed rule beside it, a PlatformRateLimit's defaults): a client
 *    that used its key twice and one that spent its 3 (and was refused once) keep their counters in
 *    Redis through a flood of new values that evicts more keys than the store holds; the first gets
 *    exactly one more request, the second none. Control: the same Redis with `volatile-ttl` (the
 *    policy rendered before) loses both counters, and the client that used two gets more than one.
 * 2. A spent budget stays spent when its counter is gone: a flood of values each used more often
 *    than the spent key (what an attacker pays to get past eviction by use) until Redis no longer
 *    holds that counter; the service's over-limit cache, as rendered, keeps refusing the client.
 *    Control: the cache off (`service.localCacheSizeInBytes: 0`), the same client gets 3 more.
 * 3. A cost counter (100 a day per key, the cost from `x-cost`): a client that spent 80 of it in two
 *    requests of 40 keeps its counter through the flood and gets 2 more requests of 10, not 10; a
 *    new key after the flood still gets exactly its 100. Control: `volatile-ttl` forgets the 80.
 * 4. What a client sees when the store is full, for the per-value rule alone and the split layout's
 *    per-value store: as rendered no call fails and the limits hold. Control, `noeviction` (the
 *    policy before; its bound then lowered under what it holds so that it stays full): Redis refuses
 *    every write, existing counters too, the service answers each call with an error, and the
 *    filter's rendered failure mode decides: the rule alone fails closed (every request refused with
 *    500, clients within their limit too), the split per-value filter fails open (every request
 *    passes, the limit is off).
 */
import { expect } from "chai";
import type { K8sObject } from "../../lib/k8s-object";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { explain } from "../../gateway-model/explain";
import { listenerCalls, listenerModel } from "../../gateway-model/listener";
import { registerComponents } from "../../render/render";
import { RenderedRedis, renderedRatelimits } from "./harness/rendered";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { Side, failureModeDeny, send, startSide, stopSide } from "./harness/flood";
import { pipeCounters, redisInfo } from "./harness/counters";
import { ensureWindowOf } from "./harness/window";

const DAY = 86_400;
const LIMIT = 3;
// The risk accepted by name: a store of 8mb sizes no rate of new values, and these tests flood it on purpose.
const PER_KEY: RateLimitRuleArgs = {
    name: "per-key",
    header: { name: "x-api-key", perValue: true },
    requestsPerUnit: LIMIT,
    unit: LimitUnit.Day,
    acceptEvictionRisk: true,
};
const FIXED: RateLimitRuleArgs = { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 100, unit: LimitUnit.Day };
const SMALL = "8mb";
const COST_LIMIT = 100;
const PER_KEY_COST: RateLimitRuleArgs = { ...PER_KEY, name: "per-key-cost", requestsPerUnit: COST_LIMIT, cost: { requestHeader: "x-cost" } };
/** A 200-byte `x-api-key` value, distinct per name. */
const value = (name: string) => `${name}-`.padEnd(200, "v");

/** One layout: how it is rendered, which rendered service holds the per-value counters, and the call a request with `key` makes to it. */
interface Layout {
    label: string;
    /** The per-value rule's window (seconds; a day unless said). */
    windowSeconds?: number;
    render(extra?: Partial<GlobalRateLimitArgs>): Promise<K8sObject[]>;
    side: number;
    call(objects: K8sObject[], key: string, sideName: string): { domain: string; descriptors: { key: string; value: string }[][] };
}

/** The per-value call of a GlobalRateLimit's request, from the gateway MODEL. */
function modelCall(objects: K8sObject[], key: string, sideName: string) {
    const c = explain(objects, "/search", { headers: { "x-api-key": key } }).calls.find((x) => x.service.split("|")[3]?.startsWith(`${sideName}.`));
    if (!c) throw new Error(`a request with an x-api-key makes no call to ${sideName} (model)`);
    return { domain: c.domain, descriptors: c.descriptors.map((d) => d.entries) };
}

const PLATFORM_GW = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };
const HOST = "a.example.com:8080";

const LAYOUTS: Layout[] = [
    {
        label: "a per-value rule alone (one store)",
        side: 0,
        call: modelCall,
        render: async (x = {}) => [...USER_OBJECTS, ...(await renderComponent([PER_KEY], { redis: { maxMemory: SMALL }, ...x }))],
    },
    {
        label: "a per-value rule alone, an hour window",
        windowSeconds: 3600,
        side: 0,
        call: modelCall,
        render: async (x = {}) => [...USER_OBJECTS, ...(await renderComponent([{ ...PER_KEY, unit: LimitUnit.Hour }], { redis: { maxMemory: SMALL }, ...x }))],
    },
    {
        label: "split: the per-value store",
        side: 1,
        call: modelCall,
        render: async (x = {}) => [...USER_OBJECTS, ...(await renderComponent([FIXED, PER_KEY], { perValueStore: { redis: { maxMemory: SMALL } }, ...x }))],
    },
    {
        label: "counterStore single, a fixed rule beside",
        side: 0,
        call: modelCall,
        render: async (x = {}) => [
            ...USER_OBJECTS,
            ...(await renderComponent([FIXED, PER_KEY], { counterStore: CounterStore.Single, redis: { maxMemory: SMALL }, ...x })),
        ],
    },
    {
        label: "PlatformRateLimit defaults",
        side: 0,
        render: async (x = {}) =>
            (
                await registerComponents(
                    () =>
                        void new PlatformRateLimit("platform", {
                            gateway: PLATFORM_GW,
                            namespace: "platform",
                            defaults: { rules: [PER_KEY] },
                            redis: { maxMemory: SMALL },
                            ...(x.service ? { service: x.service } : {}),
                        }),
                    "platform",
                    "rls",
                )
            ).objects,
        call: (objects, key) => {
            const model = listenerModel(
                objects.filter((o) => o.kind === "EnvoyFilter"),
                { port: 8080, podLabels: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: [{ name: HOST, routes: ["web"] }] },
            );
            const c = listenerCalls(model, { virtualHost: HOST, route: "web", path: "/search", headers: { "x-api-key": key }, clientAddress: "10.0.0.1" }).find(
                (x) => x.descriptors.length,
            );
            if (!c) throw new Error("the platform's filter sends no descriptor for a request with an x-api-key (model)");
            return { domain: c.domain, descriptors: c.descriptors as { key: string; value: string }[][] };
        },
    },
];

/** A per-value rule with a request-header cost, alone (one store). */
const COST_LAYOUT: Layout = {
    label: "a per-value rule with a cost",
    side: 0,
    call: modelCall,
    render: async (x = {}) => [...USER_OBJECTS, ...(await renderComponent([PER_KEY_COST], { redis: { maxMemory: SMALL }, ...x }))],
};

/** The rendered Redis with another eviction policy and without the LFU settings (the control). */
function withPolicy(policy: string) {
    return (r: RenderedRedis): RenderedRedis => {
        const args = [...r.args];
        args[args.indexOf("--maxmemory-policy") + 1] = policy;
        const lfu = args.indexOf("--lfu-log-factor");
        if (lfu >= 0) args.splice(lfu, 4);
        return { ...r, args };
    };
}

/** A running layout: requests of one client, its counter's Redis key, the counter itself. */
class Running {
    constructor(
        readonly l: Layout,
        readonly objects: K8sObject[],
        readonly side: Side,
    ) {}

    static async start(l: Layout, extra: Partial<GlobalRateLimitArgs> = {}, redisOf?: (r: RenderedRedis) => RenderedRedis): Promise<Running> {
        const objects = await l.render(extra);
        const rendered = renderedRatelimits(objects)[l.side]!;
        return new Running(l, objects, await startSide(objects, rendered, undefined, redisOf));
    }

    /** `n` requests with `name`'s key: how many the service let through. */
    async requests(name: string, n: number): Promise<number> {
        const { domain, descriptors } = this.l.call(this.objects, value(name), this.side.name);
        let ok = 0;
        for (let i = 0; i < n; i++) if ((await this.side.client.shouldRateLimit(domain, descriptors, { deadlineMs: 5_000 })).overallCode === "OK") ok++;
        return ok;
    }

    /** `n` requests with `name`'s key, each costing `cost` (`x-cost`, the addend from the gateway MODEL): how many the service let through. */
    async costRequests(name: string, n: number, cost: number): Promise<number> {
        const headers = { "x-api-key": value(name), "x-cost": String(cost) };
        const c = explain(this.objects, "/search", { headers }).calls.find((x) => x.service.split("|")[3]?.startsWith(`${this.side.name}.`));
        if (!c) throw new Error(`a request with an x-api-key makes no call to ${this.side.name} (model)`);
        const addends = c.descriptors.map((d) => d.hitsAddend);
        expect(addends, "the model sends the request's cost").to.include(cost);
        let ok = 0;
        for (let i = 0; i < n; i++) {
            const d = await this.side.client.shouldRateLimit(
                c.domain,
                c.descriptors.map((x) => x.entries),
                { addends, deadlineMs: 5_000 },
            );
            if (d.overallCode === "OK") ok++;
        }
        return ok;
    }

    /** `n` requests with `name`'s key as the gateway MODEL handles them, the filter's failure mode included: what the client sees. */
    async seen(name: string, n: number): Promise<{ codes: string[]; failedOpen: string[] }> {
        const codes: string[] = [];
        const failedOpen: string[] = [];
        for (let i = 0; i < n; i++) {
            const a = await send(this.objects, [this.side], "/search", { "x-api-key": value(name) });
            codes.push(a.code);
            failedOpen.push(...a.failedOpen);
        }
        return { codes, failedOpen };
    }

    /** The filter that sends the per-value call, and its rendered failure mode. */
    filterDenies(): boolean {
        const c = explain(this.objects, "/search", { headers: { "x-api-key": value("probe") } }).calls[0]!;
        return failureModeDeny(this.objects, c.filter);
    }

    /**
     * New single-use values until Redis refuses a write (a `noeviction` store once full); then its
     * bound lowered to 256 KB under what it holds, so that it stays full (the memory of a closed
     * connection's buffers would otherwise let a few writes in): how many values were written.
     */
    async fillUntilRefused(template: string, name: string): Promise<number> {
        const keyOf = (i: number) => template.replace(value(name), value(`flood-${i}`));
        const round = 20_000;
        let written = 0;
        while ((await pipeCounters(this.side.redis, keyOf, written, round, () => DAY, true)).errors === 0) {
            written += round;
            if (written > 1_000_000) throw new Error("the noeviction store never refused a write");
        }
        const used = Number((await redisInfo(this.side.redis)).used_memory);
        expect(await this.command("CONFIG", "SET", "maxmemory", String(used - 262_144))).to.equal("OK");
        const probe = await this.command("INCRBY", keyOf(0), "1");
        expect(String(probe), "the full store refuses a write to an existing counter").to.match(/OOM/);
        return written + round;
    }

    async command(...args: string[]): Promise<unknown> {
        const c = await this.side.redis.client();
        try {
            return await c.command(...args);
        } finally {
            c.close();
        }
    }

    /** The Redis key the service wrote for `name`'s counter (found by its value: the key format stays the service's own). */
    async keyOf(name: string): Promise<string> {
        const keys = (await this.command("KEYS", `*${value(name)}*`)) as string[];
        expect(keys, `one counter in Redis for ${name}`).to.have.length(1);
        return keys[0]!;
    }

    /**
     * New values, each written `uses` times the way the service writes a decision, in rounds of
     * `round`, until the store has evicted more keys than it holds and (`until`) that key is gone.
     */
    async flood(template: string, name: string, uses: number, until?: string): Promise<{ written: number; info: Record<string, string> }> {
        const keyOf = (i: number) => template.replace(value(name), value(`flood-${i}`));
        const window = this.l.windowSeconds ?? DAY;
        // The service's TTL: the window plus up to the rendered jitter.
        const jitter = Math.max(1, Number(this.side.svc.env.EXPIRATION_JITTER_MAX_SECONDS ?? 300));
        const ttlOf = (i: number) => window + (i % jitter);
        const round = 20_000;
        for (let written = 0; written < 3_000_000;) {
            for (let u = 0; u < uses; u++) await pipeCounters(this.side.redis, keyOf, written, round, ttlOf);
            written += round;
            const info = await redisInfo(this.side.redis);
            const held = Number(/keys=(\d+)/.exec(info.db0 ?? "")?.[1] ?? 0);
            if (Number(info.evicted_keys) > held && (until === undefined || Number(await this.command("EXISTS", until)) === 0)) return { written, info };
        }
        throw new Error("the flood never filled the store");
    }

    async stop(): Promise<void> {
        await stopSide(this.side);
    }
}

/** Item 1 for one layout and Redis: `twice` used 2, `spent` used 3 and refused once, then the flood; what stayed and what each client gets next. */
async function evictionCase(l: Layout, redisOf?: (r: RenderedRedis) => RenderedRedis) {
    const run = await Running.start(l, {}, redisOf);
    try {
        await ensureWindowOf(l.windowSeconds ?? DAY, 300);
        expect(await run.requests("twice", 2), "twice: before the flood").to.equal(2);
        expect(await run.requests("spent", LIMIT + 1), "spent: before the flood").to.equal(LIMIT);
        const twiceKey = await run.keyOf("twice");
        const spentKey = await run.keyOf("spent");
        const filled = await run.flood(twiceKey, "twice", 1, redisOf ? twiceKey : undefined);
        const counts = { twice: await run.command("GET", twiceKey), spent: await run.command("GET", spentKey) };
        const next = { twice: await run.requests("twice", 5), spent: await run.requests("spent", 5) };
        return { filled, counts, next, args: run.side.redis.serverArgs.join(" ") };
    } finally {
        await run.stop();
    }
}

describe("rls per-value eviction: in every layout that stores a per-value counter, a flood of new values resets none (real service and Redis as rendered, 8mb)", function () {
    this.timeout(300_000);

    for (const l of LAYOUTS) {
        it(`${l.label}: a counter used twice and a spent one stay in Redis and hold (1 more, 0 more); negative control: volatile-ttl loses the used-twice counter and gives it more than 1`, async () => {
            const now = await evictionCase(l);
            console.log(
                `      ${l.label} (${now.args}): ${now.filled.written} new values, evicted ${now.filled.info.evicted_keys}, ${now.filled.info.db0}; counters ${JSON.stringify(now.counts)}; next ${JSON.stringify(now.next)} of 5`,
            );
            expect(now.args, "the rendered store evicts by use").to.contain("--maxmemory-policy allkeys-lfu");
            expect(now.counts.twice, "the used-twice counter").to.equal("2");
            expect(Number(now.counts.spent), "the spent counter").to.equal(LIMIT + 1);
            expect(now.next, "what each client gets next").to.deep.equal({ twice: 1, spent: 0 });

            const before = await evictionCase(l, withPolicy("volatile-ttl"));
            console.log(
                `      control (volatile-ttl): ${before.filled.written} new values, evicted ${before.filled.info.evicted_keys}; counters ${JSON.stringify(before.counts)}; next ${JSON.stringify(before.next)} of 5`,
            );
            expect(before.counts.twice, "volatile-ttl: the used-twice counter is gone").to.equal(null);
            expect(before.next.twice, "volatile-ttl: the used-twice client gets more than its one left").to.be.greaterThan(1);
        });
    }
});

/** Item 2: `spent` over its limit, then values used more often than it until its counter is gone from Redis; what `spent` gets next. */
async function spentCase(extra: Partial<GlobalRateLimitArgs>) {
    const run = await Running.start(LAYOUTS[0]!, extra);
    try {
        await ensureWindowOf(DAY, 300);
        expect(await run.requests("spent", LIMIT + 1), "spent: 3 of 4 before the flood").to.equal(LIMIT);
        const key = await run.keyOf("spent");
        const filled = await run.flood(key, "spent", LIMIT + 3, key);
        const gone = Number(await run.command("EXISTS", key)) === 0;
        const env = run.side.svc.env.LOCAL_CACHE_SIZE_IN_BYTES;
        return { filled, gone, next: await run.requests("spent", 5), env };
    } finally {
        await run.stop();
    }
}

describe("rls per-value eviction: a spent budget stays spent when Redis evicts its counter (real service and Redis as rendered)", function () {
    this.timeout(300_000);

    it("the over-limit cache as rendered keeps the client refused after its counter is gone from Redis; negative control: with the cache off it gets 3 more", async () => {
        const now = await spentCase({});
        console.log(
            `      as rendered (LOCAL_CACHE_SIZE_IN_BYTES=${now.env}): ${now.filled.written} values used ${LIMIT + 3} times, counter gone ${now.gone}; next ${now.next} of 5`,
        );
        expect(now.gone, "the flood evicted the spent counter").to.equal(true);
        expect(Number(now.env), "the rendered cache").to.be.greaterThan(0);
        expect(now.next, "the spent client after the flood").to.equal(0);

        const off = await spentCase({ service: { localCacheSizeInBytes: 0 } });
        console.log(`      control (cache off): counter gone ${off.gone}; next ${off.next} of 5`);
        expect(off.gone).to.equal(true);
        expect(off.next, "without the cache the spent budget comes back").to.equal(LIMIT);
    });
});

/** Item 3: the cost client spends 80 of 100 (two requests of 40), then the flood; what it and a new key get in requests of 10. */
async function costCase(redisOf?: (r: RenderedRedis) => RenderedRedis) {
    const run = await Running.start(COST_LAYOUT, {}, redisOf);
    try {
        await ensureWindowOf(DAY, 300);
        expect(await run.costRequests("spender", 2, 40), "spender: 2 of 40 before the flood").to.equal(2);
        const key = await run.keyOf("spender");
        const filled = await run.flood(key, "spender", 1, redisOf ? key : undefined);
        const counter = await run.command("GET", key);
        const next = { spender: await run.costRequests("spender", 12, 10), fresh: await run.costRequests("fresh", 12, 10) };
        return { filled, counter, next, args: run.side.redis.serverArgs.join(" ") };
    } finally {
        await run.stop();
    }
}

describe("rls per-value eviction: a cost counter's spent budget survives a flood that fills the store (real service and Redis as rendered, 8mb)", function () {
    this.timeout(300_000);

    it(`80 of ${COST_LIMIT} spent in two requests of 40: the counter stays at 80 and its client gets 2 more requests of 10, a new key exactly 10; negative control: volatile-ttl forgets the 80 and gives 10`, async () => {
        const now = await costCase();
        console.log(
            `      as rendered (${now.args}): ${now.filled.written} new values, evicted ${now.filled.info.evicted_keys}, ${now.filled.info.db0}; counter ${now.counter}; next of 12 requests of 10 ${JSON.stringify(now.next)}`,
        );
        expect(now.args, "the rendered store evicts by use").to.contain("--maxmemory-policy allkeys-lfu");
        expect(Number(now.filled.info.evicted_keys), "the flood filled the store").to.be.greaterThan(0);
        expect(now.counter, "the cost counter").to.equal("80");
        expect(now.next, "what each client gets next").to.deep.equal({ spender: 2, fresh: COST_LIMIT / 10 });

        const before = await costCase(withPolicy("volatile-ttl"));
        console.log(
            `      control (volatile-ttl): ${before.filled.written} new values, evicted ${before.filled.info.evicted_keys}; counter ${before.counter}; next ${JSON.stringify(before.next)}`,
        );
        expect(before.counter, "volatile-ttl: the cost counter is gone").to.equal(null);
        // Forgotten, the client has at least a whole budget again (more when its new counter is evicted in turn).
        expect(before.next.spender, "volatile-ttl: the 80 spent come back").to.be.at.least(COST_LIMIT / 10);
    });
});

/** Item 4: a client that used its key twice, then the store filled; what the client sees next, and its counter. */
async function fullStoreCase(l: Layout, redisOf?: (r: RenderedRedis) => RenderedRedis) {
    const run = await Running.start(l, {}, redisOf);
    try {
        await ensureWindowOf(DAY, 300);
        expect(await run.requests("twice", 2), "twice: before the flood").to.equal(2);
        const key = await run.keyOf("twice");
        const written = redisOf ? await run.fillUntilRefused(key, "twice") : (await run.flood(key, "twice", 1)).written;
        const seen = await run.seen("twice", 5);
        const fresh = await run.seen("fresh", 5);
        const info = await redisInfo(run.side.redis);
        return { written, seen, fresh, counter: await run.command("GET", key), denies: run.filterDenies(), info };
    } finally {
        await run.stop();
    }
}

type FullStore = Awaited<ReturnType<typeof fullStoreCase>>;
const fmt = (o: FullStore) =>
    `${o.written} new values, evicted ${o.info.evicted_keys}, ${o.info.db0}; failure_mode_deny ${o.denies}; twice ${o.seen.codes.join(",")} fresh ${o.fresh.codes.join(",")}; calls failed ${o.seen.failedOpen.length + o.fresh.failedOpen.length}; counter ${o.counter}`;
const oks = (codes: string[]) => codes.filter((c) => c === "OK").length;

describe("rls per-value eviction: what a client sees when the per-value store is full (real service and Redis, 8mb)", function () {
    this.timeout(300_000);

    // The rule alone: its one filter fails closed as rendered (the component's failureModeDeny
    // default); split: the per-value filter fails open as rendered (perValueStore.failureModeDeny).
    for (const [l, denies] of [
        [LAYOUTS[0]!, true],
        [LAYOUTS[2]!, false],
    ] as const) {
        const failing = denies
            ? "the filter fails closed as rendered: every request refused with its error status"
            : "the filter fails open as rendered: all 5 of 5 pass";
        it(`${l.label}: as rendered (allkeys-lfu) no call fails and the limits hold (1 of 5 for a key used twice, ${LIMIT} of 5 for a new one); negative control: noeviction refuses every write, the service errs on each call, and ${failing}`, async () => {
            const now = await fullStoreCase(l);
            console.log(`      as rendered: ${fmt(now)}`);
            expect(now.denies, "the filter's rendered failure mode").to.equal(denies);
            expect([...now.seen.failedOpen, ...now.fresh.failedOpen], "calls that failed").to.deep.equal([]);
            expect(
                now.seen.codes.filter((c) => c !== "OK" && c !== "OVER_LIMIT"),
                "only decisions",
            ).to.deep.equal([]);
            expect(oks(now.seen.codes), "the key used twice").to.equal(1);
            expect(oks(now.fresh.codes), "a new key").to.equal(LIMIT);

            const before = await fullStoreCase(l, withPolicy("noeviction"));
            console.log(`      control (noeviction): ${fmt(before)}`);
            expect(Number(before.info.evicted_keys), "noeviction never evicts").to.equal(0);
            expect(before.counter, "the refused writes never count").to.equal("2");
            const codes = [...before.seen.codes, ...before.fresh.codes];
            if (denies) {
                expect(codes, "failing closed: every request refused with the error status, none decided").to.deep.equal(Array(10).fill("500"));
            } else {
                expect([...before.seen.failedOpen, ...before.fresh.failedOpen], "each call fails").to.have.length(10);
                expect(codes, "failing open: every request passes, the limit is off").to.deep.equal(Array(10).fill("OK"));
            }
        });
    }
});
