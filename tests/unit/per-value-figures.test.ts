/**
 * Per-value stores (components/global-ratelimit/per-value-figures.ts, builders/store-figures.ts): every store that
 * holds a per-value counter evicts by use, each per-value rule's figures in its store, and the
 * preview's refusal of an unverified per-value rule over an hour or longer in a store nobody sized.
 *
 * The figures are computed here on their own: the counter key from the service's key format
 * (`<domain>_` then `<key>_<value>_` per entry of the rendered config's chain, then the window's
 * 10-digit start), values of `perValueStore.longestValueBytes` (1,024 bytes by default), and what a counter takes
 * in Redis as measured on redis-server 7.0.15 at 8mb, 32mb and 160mb (docs/proof/benchmarks.md): 100 B plus
 * 1.25 B per key byte, above the 1 MiB an empty server and its clients hold.
 */
import { expect } from "chai";
import { parse } from "yaml";
import { CounterStore } from "../../builders/counter-stores";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { COMPONENT_FIX } from "../../lib/field-checks";
import { G } from "./global-ratelimit-fixtures";

const MIB = 1024 * 1024;
const PER_KEY: RateLimitRuleArgs = { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 3, unit: LimitUnit.Day };
const FIXED: RateLimitRuleArgs = { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 1, unit: LimitUnit.Hour };
const PER_CLIENT: RateLimitRuleArgs = { name: "per-client", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Day };
/** The value length the store is sized for (`perValueStore.longestValueBytes`' documented default). */
const LONGEST_VALUE = 1024;

/** The longest key the service writes for the chain of `config.yaml` that ends in a limit, by the service's key format. */
function longestKey(configYaml: string): number {
    const doc = parse(configYaml) as { domain: string; descriptors: any[] };
    const chains: any[][] = [];
    const walk = (ds: any[], above: any[]) => ds.forEach((d) => (d.rate_limit ? chains.push([...above, d]) : walk(d.descriptors ?? [], [...above, d])));
    walk(doc.descriptors, []);
    // A client's address prefix is at most 43 bytes (eight groups of four hex digits and "/128").
    const valueBytes = (d: any) => (d.value !== undefined ? String(d.value).length : d.key === "masked_remote_address" ? 43 : LONGEST_VALUE);
    const entry = (d: any) => d.key.length + 2 + valueBytes(d);
    return Math.max(...chains.map((c) => doc.domain.length + 1 + c.reduce((n: number, d: any) => n + entry(d), 0) + 10));
}
const held = (maxMemoryMib: number, keyBytes: number) => Math.floor((maxMemoryMib * MIB - 1 * MIB) / Math.ceil(100 + 1.25 * keyBytes));

describe("per-value stores: every store that holds a per-value counter evicts by use", () => {
    const policy = (p: { service: { ratelimit: { redisEvictionPolicy: string } } }) => p.service.ratelimit.redisEvictionPolicy;
    const ok = { acceptEvictionRisk: true };

    it("GlobalRateLimit: a per-value rule alone, counterStore single with one, the split's per-value store: allkeys-lfu; a store of fixed counters only: volatile-ttl", () => {
        const alone = planGlobalRateLimit(G({ rules: [{ ...PER_KEY, ...ok }] }));
        const single = planGlobalRateLimit(G({ rules: [FIXED, { ...PER_KEY, ...ok }], counterStore: CounterStore.Single }));
        const split = planGlobalRateLimit(G({ rules: [FIXED, { ...PER_KEY, ...ok }] }));
        const fixedOnly = planGlobalRateLimit(G({ rules: [FIXED], counterStore: CounterStore.Single }));
        for (const p of [alone, single, split, fixedOnly]) expect(p.problems).to.deep.equal([]);
        expect([policy(alone), policy(single), policy(split), policy(split.perValue!), policy(fixedOnly)]).to.deep.equal([
            "allkeys-lfu",
            "allkeys-lfu",
            "volatile-ttl",
            "allkeys-lfu",
            "volatile-ttl",
        ]);
    });

    it("PlatformRateLimit: allkeys-lfu when its defaults or overrides hold a per-value rule or each path; volatile-ttl with fixed rules only", () => {
        const gateway = { selector: { istio: "ingressgateway" } };
        const of = (x: object) => policy(planPlatformRateLimit({ gateway, ...x }));
        expect(of({ defaults: { rules: [PER_CLIENT] } })).to.equal("allkeys-lfu");
        expect(of({ overrides: { perPath: { eachPath: { requestsPerUnit: 10, unit: LimitUnit.Minute } } } })).to.equal("allkeys-lfu");
        expect(of({ defaults: { rules: [FIXED] } })).to.equal("volatile-ttl");
    });
});

describe("per-value stores: each per-value rule's figures in its store, for its own window", () => {
    it("a 3-a-day x-api-key rule in a 64mb store: counters of its key held, new values/s held over a day and the jitter, new values to evict a counter used once", () => {
        const plan = planGlobalRateLimit(G({ rules: [{ ...PER_KEY, acceptEvictionRisk: true }], redis: { maxMemory: "64mb" } }));
        expect(plan.problems).to.deep.equal([]);
        const keyBytes = longestKey(plan.configYaml);
        const life = 86_400 + plan.service.ratelimit.expirationJitterSeconds;
        const h = held(64, keyBytes);
        const [f] = plan.perValueFigures.figures;
        expect(f).to.include({ field: "rules[0]", keyBytes, countersHeld: h, toEvictUsedOnce: h, lifeSeconds: life, unverified: true, refused: false });
        expect(f!.newValuesPerSecondHeld).to.be.closeTo(h / life, 1e-9);
        const line = plan.perValueFigures.lines[0]!;
        expect(line).to.contain(`holds ${h.toLocaleString("en-US")} counters`);
        expect(line).to.contain(`k × ${h.toLocaleString("en-US")} requests for k up to 126`);
        // Redis's use counter stops at 255: from about 126 uses on, a counter is as hot as any, so 126 × the values reset it.
        expect(line).to.contain(`so ${(126 * h).toLocaleString("en-US")} requests (${h.toLocaleString("en-US")} values used 126 times) can reset any counter`);
        expect(line).to.contain("gives back up to 3 requests");
    });

    it("a spent counter's reset cost counts the over-limit cache: the issue's flood (45,000 200-byte values used 4 times, 180,000 requests) is below it in an 8mb store; control: with the 1 MiB cache of before it is above", () => {
        const of = (service: object) =>
            planGlobalRateLimit(
                G({ rules: [{ ...PER_KEY, acceptEvictionRisk: true }], redis: { maxMemory: "8mb" }, perValueStore: { longestValueBytes: 200 }, ...service }),
            );
        const sized = of({});
        expect(sized.problems).to.deep.equal([]);
        const f = sized.perValueFigures.figures[0]!;
        // Redis alone: as many values as the store holds, each used limit + 1 (4) times, as often as the spent counter was.
        const redisHalf = 4 * held(8, longestKey(sized.configYaml));
        expect(f.toResetSpent).to.be.at.least(redisHalf);
        expect(f.toResetSpent).to.be.greaterThan(180_000);
        expect(sized.perValueFigures.lines.join("\n")).to.contain(`comes back only after ${f.toResetSpent!.toLocaleString("en-US")} requests`);
        const before = of({ service: { localCacheSizeInBytes: MIB } }).perValueFigures.figures[0]!;
        expect(before.toResetSpent).to.be.lessThan(180_000);
        expect(before.toResetSpent).to.be.lessThan(f.toResetSpent!);
    });

    it("the same store holds fewer new values a second the longer the window (a minute against a day, same key), and a cost rule's reset gives back cost units", () => {
        const of = (unit: LimitUnit, extra: object = {}) =>
            planGlobalRateLimit(
                G({ rules: [{ ...PER_KEY, unit, acceptEvictionRisk: true, ...extra }], redis: { maxMemory: "64mb" }, filterLayout: "per-instance" }),
            ).perValueFigures;
        const minute = of(LimitUnit.Minute).figures[0]!;
        const day = of(LimitUnit.Day).figures[0]!;
        expect(minute.countersHeld).to.equal(day.countersHeld);
        expect(minute.newValuesPerSecondHeld! / day.newValuesPerSecondHeld!).to.be.greaterThan(500);
        expect(of(LimitUnit.Day, { cost: { fixed: 5 } }).lines.find((l) => l.startsWith("per-value limit"))).to.contain("gives back up to 3 cost units");
    });

    it("the split layout's figures are the per-value store's (its maxMemory and jitter), none for a fixed rule", () => {
        const plan = planGlobalRateLimit(G({ rules: [FIXED, { ...PER_KEY, acceptEvictionRisk: true }], perValueStore: { redis: { maxMemory: "32mb" } } }));
        expect(plan.problems).to.deep.equal([]);
        expect(plan.perValueFigures.figures.map((f) => f.name)).to.deep.equal(["per-key"]);
        expect(plan.perValueFigures.figures[0]!.countersHeld).to.equal(held(32, longestKey(plan.perValue!.configYaml)));
        expect(plan.perValueFigures.figures[0]!.lifeSeconds).to.equal(86_400 + plan.perValue!.sizing.jitterSeconds);
    });

    it("perValueStore.newValuesPerSecond sizes the one store of a per-value rule alone: it then holds at least that rate for a counter's life", () => {
        const plan = planGlobalRateLimit(G({ rules: [PER_KEY], perValueStore: { newValuesPerSecond: 1 } }));
        expect(plan.problems).to.deep.equal([]);
        const f = plan.perValueFigures.figures[0]!;
        expect(f.newValuesPerSecondHeld).to.be.at.least(1);
        expect(plan.service.ratelimit.redisMaxMemory).to.not.equal("160mb");
    });
});

describe("per-value stores: an unverified per-value rule over an hour or longer in a store nobody sized is refused at preview", () => {
    it("refused with the rule's path, what a flood resets and three fixes; the fix it suggests makes the plan valid", () => {
        const plan = planGlobalRateLimit(G({ rules: [PER_KEY] }));
        const p = plan.problems.find((x) => x.key === "rules[0]");
        expect(p, JSON.stringify(plan.problems)).to.not.equal(undefined);
        expect(p!.problem).to.contain("header x-api-key, a value any client writes, over a day");
        expect(p!.problem).to.contain("gets its 3 back");
        expect(p!.fix)
            .to.contain("perValueStore.newValuesPerSecond")
            .and.to.contain("redis.maxMemory")
            .and.to.contain("set rules[0].acceptEvictionRisk to true");
        const suggested = Number(/set perValueStore\.newValuesPerSecond to (\d+)/.exec(p!.fix)![1]);
        expect(planGlobalRateLimit(G({ rules: [PER_KEY], perValueStore: { newValuesPerSecond: suggested } })).problems).to.deep.equal([]);
    });

    it("a maxMemory alone sizes nothing: 64mb without a declared rate is refused as the default store is; with a rate it holds, accepted", () => {
        const keys = (x: Record<string, unknown>) => planGlobalRateLimit(G(x)).problems.map((p) => p.key);
        expect(keys({ rules: [PER_KEY], redis: { maxMemory: "64mb" } })).to.deep.equal(["rules[0]"]);
        expect(keys({ rules: [PER_KEY], redis: { maxMemory: "192mb" }, perValueStore: { newValuesPerSecond: 1 } }), "control").to.deep.equal([]);
    });

    it("a maxMemory that cannot hold the declared newValuesPerSecond for the window is refused under redis.maxMemory, its fix the maxMemory that holds it", () => {
        const args = { rules: [PER_KEY], redis: { maxMemory: "8mb" }, perValueStore: { newValuesPerSecond: 1 } };
        const p = planGlobalRateLimit(G(args)).problems.find((x) => x.key === "redis.maxMemory");
        expect(p, JSON.stringify(planGlobalRateLimit(G(args)).problems)).to.not.equal(undefined);
        expect(p!.problem).to.contain("below what perValueStore.newValuesPerSecond (1/s) needs");
        // The need computed here: 1/s over a day plus the jitter, each counter of the longest key, plus the base.
        const plan = planGlobalRateLimit(G({ ...args, rules: [{ ...PER_KEY, acceptEvictionRisk: true }], redis: { maxMemory: "192mb" } }));
        const life = 86_400 + plan.service.ratelimit.expirationJitterSeconds;
        const need = Math.ceil((1 * MIB + life * Math.ceil(100 + 1.25 * longestKey(plan.configYaml))) / MIB);
        expect(p!.fix).to.contain(`set redis.maxMemory to "${need}mb"`);
        expect(planGlobalRateLimit(G({ ...args, redis: { maxMemory: `${need}mb` } })).problems, "the fix").to.deep.equal([]);
        expect(
            planGlobalRateLimit(G({ ...args, redis: { maxMemory: `${need - 1}mb` } })).problems.map((x) => x.key),
            "1mb under it",
        ).to.include("redis.maxMemory");
        // A rate no deployed Redis holds is refused at the rate, with a rate that fits (never a maxMemory over the bound).
        const huge = planGlobalRateLimit(G({ ...args, perValueStore: { newValuesPerSecond: 1000 } })).problems;
        expect(huge.map((x) => x.key)).to.deep.equal(["perValueStore.newValuesPerSecond"]);
    });

    it("the split layout names the per-value store's maxMemory", () => {
        const p = planGlobalRateLimit(G({ rules: [FIXED, PER_KEY] })).problems.find((x) => x.key === "rules[1]");
        expect(p?.fix).to.contain("perValueStore.redis.maxMemory");
    });

    it("negative controls: accepted, sized (newValuesPerSecond, maxMemory, an existing Redis), a minute window, a client address, a query value under an hour: not refused", () => {
        const q: RateLimitRuleArgs = { name: "per-q", query: { name: "k", perValue: true }, requestsPerUnit: 3, unit: LimitUnit.Hour };
        const refused = (x: Record<string, unknown>) => planGlobalRateLimit(G(x)).problems.filter((p) => /^rules\[\d+\]$/.test(p.key));
        expect(refused({ rules: [q] }), "a query value over an hour").to.have.length(1);
        expect(refused({ rules: [{ ...PER_KEY, acceptEvictionRisk: true }] })).to.deep.equal([]);
        expect(refused({ rules: [PER_KEY], perValueStore: { newValuesPerSecond: 1 } })).to.deep.equal([]);
        expect(refused({ rules: [PER_KEY], redis: { maxMemory: "192mb" }, perValueStore: { newValuesPerSecond: 1 } })).to.deep.equal([]);
        expect(refused({ rules: [PER_KEY], redis: { mode: "external", addresses: ["redis.cache:6379"] } })).to.deep.equal([]);
        expect(refused({ rules: [{ ...PER_KEY, unit: LimitUnit.Minute }] })).to.deep.equal([]);
        expect(refused({ rules: [PER_CLIENT] })).to.deep.equal([]);
    });

    it("acceptEvictionRisk: a boolean, only on a per-value rule", () => {
        const problems = (r: object) => planGlobalRateLimit(G({ rules: [r] })).problems.map((p) => `${p.key}: ${p.fix}`);
        expect(problems({ ...PER_KEY, acceptEvictionRisk: "yes" })).to.include(
            `rules[0].acceptEvictionRisk: ${COMPONENT_FIX.set("rules[0].acceptEvictionRisk", "true")}`,
        );
        expect(problems({ ...FIXED, acceptEvictionRisk: true })).to.include("rules[0].acceptEvictionRisk: remove rules[0].acceptEvictionRisk");
    });
});

describe("per-value stores: a PlatformRateLimit's per-value rules, figured and refused as GlobalRateLimit's", () => {
    const gateway = { selector: { istio: "ingressgateway" } };

    it("a day rule on x-api-key in its defaults: refused under defaults.rules[0] naming redis.maxMemory and acceptEvictionRisk; controls: sized or accepted, figures printed", () => {
        const plan = planPlatformRateLimit({ gateway, defaults: { rules: [PER_KEY] } });
        const p = plan.problems.find((x) => x.key === "defaults.rules[0]");
        expect(p, JSON.stringify(plan.problems)).to.not.equal(undefined);
        expect(p!.fix)
            .to.contain("an existing Redis sized by its owner (redis.mode)")
            .and.to.contain("set defaults.rules[0].acceptEvictionRisk to true")
            .and.not.to.contain("newValuesPerSecond");
        // A maxMemory alone sizes nothing: the platform's store has no declared rate to hold.
        expect(planPlatformRateLimit({ gateway, defaults: { rules: [PER_KEY] }, redis: { maxMemory: "64mb" } }).problems.map((x) => x.key)).to.deep.equal([
            "defaults.rules[0]",
        ]);
        const sized = planPlatformRateLimit({ gateway, defaults: { rules: [{ ...PER_KEY, acceptEvictionRisk: true }] }, redis: { maxMemory: "64mb" } });
        const accepted = planPlatformRateLimit({ gateway, overrides: { rules: [{ ...PER_KEY, acceptEvictionRisk: true }] } });
        expect(sized.problems).to.deep.equal([]);
        expect(accepted.problems).to.deep.equal([]);
        expect(sized.perValueFigures.figures[0]).to.include({ field: "defaults.rules[0]", refused: false });
        expect(sized.perValueFigures.lines[0]).to.contain("(64mb, evicting the least used)");
        expect(accepted.perValueFigures.figures.map((f) => f.field)).to.deep.equal(["overrides.rules[0]"]);
    });
});
