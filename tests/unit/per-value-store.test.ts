/**
 * The per-value store's own arguments (components/global-ratelimit/per-value-store.ts): its filter's timeout, failure
 * mode and error status, and its sizing, each refused at plan time with its field and a fix that
 * the plan then accepts; what reaches the rendered filter and Redis.
 */
import { expect } from "chai";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { ErrorStatus } from "../../builders/envoy-filters";
import { LimitUnit } from "../../builders/rule-args";
import { redisMemoryBytes } from "../../builders/failure-bounds";

const M = LimitUnit.Minute;
const BASE: GlobalRateLimitArgs = {
    domain: "shop",
    gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
    rules: [
        { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 1, unit: M },
        { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 3, unit: M },
    ],
};
const plan = (perValueStore: Record<string, unknown>, extra: Partial<GlobalRateLimitArgs> = {}) =>
    planGlobalRateLimit({ ...BASE, ...extra, perValueStore } as GlobalRateLimitArgs);
/** The typed_config of the per-value rate-limit filter. */
const pvFilter = (p: ReturnType<typeof plan>) => {
    const f = p.filters.find((x) => x.name.endsWith("-per-value"))!;
    return (f.spec as any).configPatches[0].patch.value.typed_config;
};
const problems = (p: ReturnType<typeof plan>) => p.problems.map((x) => [x.key, x.problem, x.fix]);

describe("per-value store arguments: timeout, failing closed, sizing", () => {
    it("the per-value filter has its own timeout (0.1s by default, the fixed filter keeps 10s) and fails open by default", () => {
        const p = plan({});
        expect(p.problems).to.deep.equal([]);
        expect(pvFilter(p).timeout).to.equal("1s");
        expect(pvFilter(p).failure_mode_deny).to.equal(false);
        expect((p.filters[0]!.spec as any).configPatches[0].patch.value.typed_config.timeout).to.equal("10s");
        expect(pvFilter(plan({ timeout: "0.25s" })).timeout).to.equal("0.25s");
    });

    it("failing closed: failureModeDeny true with its own statusOnError, or GlobalRateLimit's; a status without it is refused with both fixes", () => {
        const closed = plan({ failureModeDeny: true, statusOnError: ErrorStatus.TooManyRequests }, { failureModeDeny: false });
        expect(closed.problems).to.deep.equal([]);
        expect([pvFilter(closed).failure_mode_deny, pvFilter(closed).status_on_error]).to.deep.equal([true, { code: "TooManyRequests" }]);
        expect(pvFilter(plan({ failureModeDeny: true }, { statusOnError: ErrorStatus.ServiceUnavailable })).status_on_error).to.deep.equal({
            code: "ServiceUnavailable",
        });
        const p = plan({ statusOnError: ErrorStatus.ServiceUnavailable });
        expect(problems(p)).to.have.length(1);
        expect(p.problems[0]!.key).to.equal("perValueStore.statusOnError");
        expect(p.problems[0]!.fix).to.equal("remove perValueStore.statusOnError, or set perValueStore.failureModeDeny to true");
        expect(p.problems[0]!.problem).to.equal(
            "has no effect unless perValueStore.failureModeDeny is true (the request passes when the service cannot answer)",
        );
        expect(plan({ statusOnError: ErrorStatus.ServiceUnavailable, failureModeDeny: false }).problems.map((q) => q.key)).to.deep.equal([
            "perValueStore.statusOnError",
        ]);
    });

    it("statusOnError without failing closed: GlobalRateLimit's refusal and the per-value store's are one rule, one wording, under their own paths", () => {
        const own = plan({}, { statusOnError: ErrorStatus.ServiceUnavailable, failureModeDeny: false }).problems;
        const perValue = plan({ statusOnError: ErrorStatus.ServiceUnavailable }).problems;
        expect(own.map((q) => q.key)).to.deep.equal(["statusOnError"]);
        expect(perValue.map((q) => q.key)).to.deep.equal(["perValueStore.statusOnError"]);
        const unprefixed = (q: { problem: string; fix: string }) => [q.problem, q.fix].map((t) => t.replaceAll("perValueStore.", ""));
        expect(unprefixed(perValue[0]!)).to.deep.equal(unprefixed(own[0]!));
        // failing closed, neither is refused
        expect(
            plan({ statusOnError: ErrorStatus.ServiceUnavailable, failureModeDeny: true }, { statusOnError: ErrorStatus.ServiceUnavailable }).problems,
        ).to.deep.equal([]);
    });

    it("bad values are refused under their field with a fix the plan accepts", () => {
        const cases: [Record<string, unknown>, string][] = [
            [{ timeout: "100ms" }, "perValueStore.timeout"],
            [{ timeout: "0s" }, "perValueStore.timeout"],
            [{ failureModeDeny: "yes" }, "perValueStore.failureModeDeny"],
            [{ statusOnError: "503", failureModeDeny: true }, "perValueStore.statusOnError"],
            [{ newValuesPerSecond: 1.5 }, "perValueStore.newValuesPerSecond"],
            [{ newValuesPerSecond: -1 }, "perValueStore.newValuesPerSecond"],
            [{ longestValueBytes: 2048 }, "perValueStore.longestValueBytes"],
        ];
        for (const [given, key] of cases) {
            const p = plan(given);
            expect(
                p.problems.map((x) => x.key),
                JSON.stringify(given),
            ).to.deep.equal([key]);
            expect(p.problems[0]!.fix, JSON.stringify(given)).to.match(/^set perValueStore\.\w+ to /);
        }
    });

    it("maxmemory sized from the rate: rate × (60 s + 6 s jitter) × counter bytes + 1 MiB; the jitter reaches the per-value service", () => {
        const small = plan({ newValuesPerSecond: 10, longestValueBytes: 256 });
        expect(small.problems).to.deep.equal([]);
        const z = small.perValue!.sizing;
        expect(z.jitterSeconds).to.equal(6);
        expect(z.lifeSeconds).to.equal(66);
        // shop_rule_per-key_x-api-key_<256 bytes>_<10 digits>: the key the service writes.
        expect(z.keyBytes).to.equal("shop_".length + "rule_per-key_".length + "x-api-key_".length + 256 + 1 + 10);
        expect(redisMemoryBytes(z.maxMemory)!).to.be.at.least(1 * 1024 * 1024 + 10 * 66 * z.counterBytes);
        expect(small.perValue!.service.ratelimit.redisMaxMemory).to.equal(z.maxMemory);
        expect(small.perValue!.service.ratelimit.expirationJitterSeconds).to.equal(6);
        // Without a rate: the fixed side's maxMemory, and what it holds reported.
        const none = plan({});
        expect(none.perValue!.sizing.maxMemory).to.equal("160mb");
        expect(none.perValue!.sizing.countersHeld).to.be.greaterThan(100_000);
    });

    it("a rate whose store would pass 192mb is refused with a rate that fits; a given maxMemory below the need with the need", () => {
        const big = plan({ newValuesPerSecond: 5000 });
        expect(big.problems.map((x) => x.key)).to.deep.equal(["perValueStore.newValuesPerSecond"]);
        expect(big.problems[0]!.problem).to.match(
            /needs 5000\/s × \(60 s window \+ 6 s jitter\) × \d+ B per counter .* more than the per-value Redis may hold/,
        );
        const suggested = Number(/set perValueStore\.newValuesPerSecond to "?(\d+)"?/.exec(big.problems[0]!.fix)![1]);
        expect(plan({ newValuesPerSecond: suggested }).problems).to.deep.equal([]);
        expect(plan({ newValuesPerSecond: suggested + 1 }).problems.map((x) => x.key)).to.deep.equal(["perValueStore.newValuesPerSecond"]);
        const low = plan({ newValuesPerSecond: 100, redis: { maxMemory: "2mb" } });
        expect(low.problems.map((x) => x.key)).to.deep.equal(["perValueStore.redis.maxMemory"]);
        const need = /set perValueStore\.redis\.maxMemory to "(\d+mb)"/.exec(low.problems[0]!.fix)![1]!;
        expect(plan({ newValuesPerSecond: 100, redis: { maxMemory: need } }).problems).to.deep.equal([]);
    });

    it("the per-value Redis's own problems are reported under perValueStore.redis, their fixes naming that field (not the fixed side's redis)", () => {
        const p = plan({ redis: { maxMemory: "300mb", tls: true } });
        expect(p.problems.map((x) => [x.key, x.fix])).to.deep.equal([
            ["perValueStore.redis.maxMemory", 'set perValueStore.redis.maxMemory to "160mb"'],
            ["perValueStore.redis.tls", 'remove perValueStore.redis.tls, or set perValueStore.redis.mode to "external"'],
        ]);
    });
});
