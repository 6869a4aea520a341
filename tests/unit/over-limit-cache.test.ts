/**
 * The over-limit cache sized from the store (builders/over-limit-cache.ts) and where it is rendered.
 * Facts of the pinned service's freecache (coocood/freecache v1.2.4, written here, not taken from
 * the code): 256 segments, each `size / 256` bytes; an entry takes a 24-byte header, its key and a
 * value capacity of at least 1 byte; a segment's ring drops its oldest entry when full.
 */
import { expect } from "chai";
import { countersHeld } from "../../builders/failure-bounds";
import { overLimitCacheBytes, overLimitKeysKept, spentCounterAttackRequests } from "../../builders/over-limit-cache";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";
import { renderComponent } from "../rls/harness/shop";
import { renderedRatelimits } from "../rls/harness/rendered";

const MiB = 1024 * 1024;
/** Entries of `key` bytes one of freecache's 256 segments of a cache of `bytes` holds. */
const perSegment = (bytes: number, key: number) => Math.floor(bytes / 256 / (24 + key + 1));

describe("the over-limit cache sized from the store that holds per-value counters", () => {
    it("every segment holds more than 4 times its share of the store's counters (8mb, 1,063-byte keys); control: the 1 MiB rendered before holds 3", () => {
        const held = countersHeld(8 * MiB, 1063);
        const bytes = overLimitCacheBytes(held, 1063);
        expect(bytes % MiB, "whole MiB").to.equal(0);
        expect(perSegment(bytes, 1063)).to.be.greaterThan((4 * held) / 256);
        expect(perSegment(MiB, 1063), "control: 1 MiB").to.equal(3);
        expect(perSegment(MiB, 1063)).to.be.below((4 * held) / 256);
    });

    it("at least 1 MiB for a tiny store, at most 64 MiB for the 160mb default", () => {
        expect(overLimitCacheBytes(1, 40)).to.equal(MiB);
        expect(overLimitCacheBytes(countersHeld(160 * MiB, 1063), 1063)).to.equal(64 * MiB);
    });

    it("the keys a random flood may create while the cache keeps a refused key fit every segment with 4 standard deviations to spare; one segment's more do not", () => {
        const bytes = 27 * MiB;
        const kept = overLimitKeysKept(bytes, 1063);
        const mean = kept / 256;
        expect(mean + 4 * Math.sqrt(mean)).to.be.at.most(perSegment(bytes, 1063) - 1);
        const more = (kept + 2 * 256) / 256;
        expect(more + 4 * Math.sqrt(more)).to.be.greaterThan(perSegment(bytes, 1063) - 1);
    });

    it("the attack cost of a spent counter is the larger of the Redis half and the cache half", () => {
        const held = 15_000;
        const small = spentCounterAttackRequests({ limit: 3, cheapestLimit: 3, countersHeld: held, cacheBytes: MiB, keyBytes: 230 });
        expect(small, "a 1 MiB cache: the Redis half, 4 uses of as many values as the store holds").to.equal(4 * held);
        const big = spentCounterAttackRequests({ limit: 3, cheapestLimit: 3, countersHeld: held, cacheBytes: 27 * MiB, keyBytes: 230 });
        expect(big).to.equal(4 * (overLimitKeysKept(27 * MiB, 230) + 1));
        // The case first reported: 45,000 200-byte values used 4 times into an 8mb store is below it.
        expect(big).to.be.greaterThan(45_000 * 4);
    });

    it("rendered: the per-value service of the split layout, one store with a per-value rule, and no per-value rule (control: 1 MiB); a size given by hand wins", async function () {
        this.timeout(60_000);
        const perKey: RateLimitRuleArgs = {
            name: "k",
            header: { name: "x-api-key", perValue: true },
            requestsPerUnit: 3,
            unit: LimitUnit.Day,
            acceptEvictionRisk: true,
        };
        const fixed: RateLimitRuleArgs = { name: "c", path: { exact: "/checkout" }, requestsPerUnit: 1, unit: LimitUnit.Day };
        const cache = async (rules: RateLimitRuleArgs[], x: object) =>
            renderedRatelimits(await renderComponent(rules, x)).map((r) => Number(r.env.find((e) => e.name === "LOCAL_CACHE_SIZE_IN_BYTES")!.value));
        const [fixedSide, perValueSide] = await cache([fixed, perKey], { perValueStore: { redis: { maxMemory: "8mb" } } });
        expect(fixedSide, "the fixed side keeps 1 MiB").to.equal(MiB);
        expect(perValueSide).to.be.greaterThan(MiB);
        expect(await cache([fixed, perKey], { counterStore: CounterStore.Single, redis: { maxMemory: "8mb" } })).to.deep.equal([perValueSide]);
        expect(await cache([fixed], {}), "control: fixed counters only").to.deep.equal([MiB]);
        expect(await cache([perKey], { redis: { maxMemory: "8mb" }, service: { localCacheSizeInBytes: 2 * MiB } })).to.deep.equal([2 * MiB]);
    });
});
