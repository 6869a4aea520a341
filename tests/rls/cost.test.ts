/**
 * Rule costs and the longer windows on the REAL envoyproxy/ratelimit service and Redis. The shop's
 * GlobalRateLimit is rendered under Pulumi's mocks; the Envoy side is the gateway MODEL's: it turns
 * each request into the descriptors and the per-descriptor `hits_addend` Envoy would send (the
 * request-path call, and for a response cost the call Envoy makes when the stream is done, with the
 * cost the backend's response header carried). The service side is real: it counts what it receives.
 *
 * Every counter here is an hour's, a day's or a month's, so a test never straddles a window (an
 * hour-long rule first makes sure 2 minutes of the hour are left), and every rule has counters of
 * its own (the service caches an over-limit key in the process until its window ends).
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { useShop } from "./harness/shop";
import { ensureWindowOf } from "./harness/window";
import { fixedWindowStart } from "../../gateway-model/fixed-window";
import type { K8sObject } from "../../lib/k8s-object";

const H = LimitUnit.Hour;
/** The cap the negative control's rule is rendered with, then taken out. */
const UNCAPPED_CAP = 100;
const RULES: RateLimitRuleArgs[] = [
    // A shared counter: the preview asks for maxCost (at most the budget); 100 keeps every cost these tests send.
    { name: "search-cost", path: { prefix: "/search" }, requestsPerUnit: 100, unit: H, cost: { requestHeader: "x-cost", maxCost: 100 } },
    // The negative control: the same rule without a cost.
    { name: "report-plain", path: { prefix: "/report" }, requestsPerUnit: 100, unit: H },
    { name: "escape", path: { prefix: "/escape" }, requestsPerUnit: 100, unit: H, cost: { requestHeader: "x-cost", maxCost: 100 } },
    { name: "bulk", path: { prefix: "/bulk" }, requestsPerUnit: 100, unit: H, cost: { fixed: 40 } },
    {
        name: "llm-tokens",
        path: { prefix: "/llm" },
        header: { name: "x-api-key", perValue: true },
        requestsPerUnit: 100,
        unit: LimitUnit.Day,
        cost: { responseHeader: "x-tokens-used" },
        acceptEvictionRisk: true,
    },
    { name: "monthly", path: { prefix: "/monthly" }, requestsPerUnit: 1000, unit: LimitUnit.Month },
    // One shared counter each (no per-client part): with maxCost, and the negative control, rendered with a cap
    // that is then taken out of the rendered filters (uncapped below): the preview refuses the rule without maxCost.
    { name: "capped", path: { prefix: "/capped" }, requestsPerUnit: 100, unit: H, cost: { requestHeader: "x-cost", maxCost: 10 } },
    { name: "uncapped", path: { prefix: "/uncapped" }, requestsPerUnit: 100, unit: H, cost: { requestHeader: "x-cost", maxCost: UNCAPPED_CAP } },
];

/**
 * The rendered objects with `rule`'s cap taken out, as if the preview had let it through without
 * maxCost: its entry for a number over the cap (`hits_addend: {number: cap}`) sends the header's
 * value instead, as the entry for a number within the cap does. Returns how many entries changed.
 */
function uncapped(objects: K8sObject[], rule: string, cap: number): { objects: K8sObject[]; changed: number } {
    let changed = 0;
    const walk = (v: any): any => {
        if (Array.isArray(v)) return v.map(walk);
        if (v === null || typeof v !== "object") return v;
        const named = v.actions?.[0]?.header_value_match?.descriptor_value === rule;
        if (named && v.hits_addend?.number === cap) {
            changed++;
            return { ...v, hits_addend: { format: "%REQ(x-cost)%" } };
        }
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    };
    return { objects: objects.map(walk), changed };
}

const MONTH = 30 * 24 * 3600;

describe("rls: rule costs (request header, fixed, response at stream done) and the month window on the real service", function () {
    const { shop, send, ruleOf, counters, sendAfterResponse } = useShop(RULES);
    before(() => {
        const u = uncapped(shop.objects, "uncapped", UNCAPPED_CAP);
        expect(u.changed, "the uncapped rule's capped entries, rewritten").to.be.greaterThan(0);
        shop.objects = u.objects;
    });
    beforeEach(async () => {
        await ensureWindowOf(3600, 120);
    });

    /** A counter's value and TTL, from whichever side's Redis holds it (a per-value rule's counters are on the per-value side). */
    const redisGet = async (key: string) => {
        for (const side of shop.sides) {
            const c = await side.redis.client();
            try {
                const value = await c.command("GET", key);
                if (value !== null) return { value, ttl: Number(await c.command("TTL", key)) };
            } finally {
                c.close();
            }
        }
        return { value: null, ttl: -2 };
    };

    it("a cost of 40 from a request header takes 40 from a budget of 100: the third request is refused", async () => {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await send("/search", { headers: { "x-cost": "40" } }));
        expect(answers.map((a) => ruleOf(a, "search-cost")!.status.code)).to.deep.equal(["OK", "OK", "OVER_LIMIT"]);
        expect(answers.map((a) => ruleOf(a, "search-cost")!.status.limitRemaining)).to.deep.equal([60, 20, 0]);
        expect(answers[0]!.x.descriptors.find((d) => d.entries[0]!.value === "search-cost")!.hitsAddend).to.equal(40);
        const keys = await counters("search-cost");
        expect(keys).to.have.length(1);
        expect((await redisGet(keys[0]!)).value).to.equal("120");
    });

    it("negative control: the same requests on a rule without cost count 1 each", async () => {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await send("/report", { headers: { "x-cost": "40" } }));
        expect(answers.map((a) => ruleOf(a, "report-plain")!.status.limitRemaining)).to.deep.equal([99, 98, 97]);
        expect(answers[0]!.x.descriptors[0]!.hitsAddend).to.equal(undefined);
    });

    it("a client cannot get a request counted for less by leaving the header out or sending what Envoy cannot read: each costs 1", async () => {
        const tries: Record<string, string | string[]>[] = [
            {},
            { "x-cost": "-5" },
            { "x-cost": "1e3" },
            { "x-cost": "0x10" },
            { "x-cost": ["40", "40"] },
            { "x-cost": "1000000000" },
        ];
        const remaining = [];
        for (const headers of tries) {
            const a = await send("/escape", { headers });
            remaining.push(ruleOf(a, "escape")!.status.limitRemaining);
        }
        expect(remaining).to.deep.equal([99, 98, 97, 96, 95, 94]);
        // And 0 is a cost Envoy reads: the request is checked, not counted (who sets the header chooses the cost).
        const zero = await send("/escape", { headers: { "x-cost": "0" } });
        expect(ruleOf(zero, "escape")!.status.limitRemaining).to.equal(94);
    });

    it("a fixed cost of 40: the third request is refused", async () => {
        const codes = [];
        for (let i = 0; i < 3; i++) codes.push(ruleOf(await send("/bulk", {}), "bulk")!.status.code);
        expect(codes).to.deep.equal(["OK", "OK", "OVER_LIMIT"]);
    });

    it("a response cost counts when the stream is done: the request that goes over is served, the next one refused", async () => {
        const key = { "x-api-key": "k-tokens" };
        const first = await send("/llm", { headers: key });
        // On the request path the rule's descriptor is checked (addend 0): nothing is taken yet.
        expect(ruleOf(first, "llm-tokens")!.status.code).to.equal("OK");
        expect(ruleOf(first, "llm-tokens")!.status.limitRemaining).to.equal(100);
        expect(first.x.afterResponse?.[0]?.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","))).to.deep.equal([
            "rule=llm-tokens,x-api-key=k-tokens",
        ]);
        const [done1] = await sendAfterResponse(first.x, 70);
        expect(done1!.statuses[0]!.limitRemaining).to.equal(30);
        const second = await send("/llm", { headers: key });
        expect(ruleOf(second, "llm-tokens")!.status.code, "70 of 100 used: served").to.equal("OK");
        const [done2] = await sendAfterResponse(second.x, 50);
        // The service receives 50 more at stream done: 120 of 100, reported over limit but not enforced on that request.
        expect(done2!.overallCode).to.equal("OVER_LIMIT");
        const third = await send("/llm", { headers: key });
        expect(ruleOf(third, "llm-tokens")!.status.code).to.equal("OVER_LIMIT");
        const keys = await counters("llm-tokens");
        expect(keys).to.have.length(1);
        expect((await redisGet(keys[0]!)).value).to.equal("120");
        // Another key has its own budget.
        expect(ruleOf(await send("/llm", { headers: { "x-api-key": "k-other" } }), "llm-tokens")!.status.code).to.equal("OK");
    });

    it("negative control: without the stream-done call the same responses take nothing from the budget", async () => {
        const key = { "x-api-key": "k-no-done" };
        for (let i = 0; i < 3; i++) expect(ruleOf(await send("/llm", { headers: key }), "llm-tokens")!.status.limitRemaining).to.equal(100);
    });

    it("a month window: the key holds the window start of 30-day windows from the Unix epoch, and expires with it", async () => {
        const before = Math.floor(Date.now() / 1000);
        const a = await send("/monthly", {});
        const status = ruleOf(a, "monthly")!.status;
        expect(status.currentLimit!.unit).to.equal("MONTH");
        const start = fixedWindowStart(MONTH, before * 1000);
        const keys = await counters("monthly");
        expect(keys).to.deep.equal([`shop_rule_monthly_${start}`]);
        expect(status.durationUntilResetSeconds).to.be.within(start + MONTH - before - 2, start + MONTH - before);
        // The service sets EXPIRE to the whole unit (plus its jitter), not to the window's end.
        const jitter = Number(shop.sides[0]!.service.env.EXPIRATION_JITTER_MAX_SECONDS ?? 0);
        const { ttl } = await redisGet(keys[0]!);
        expect(ttl).to.be.within(MONTH - 5, MONTH + jitter);
    });

    it("negative control (the preview's check taken out): without maxCost one refused request of cost 999,999,999 still adds it to the shared counter, and every other client is refused", async () => {
        const big = await send("/uncapped", { headers: { "x-cost": "999999999", "x-client": "greedy" } });
        expect(ruleOf(big, "uncapped")!.status.code).to.equal("OVER_LIMIT");
        const keys = await counters("uncapped");
        expect((await redisGet(keys[0]!)).value, "added although refused").to.equal("999999999");
        const other = await send("/uncapped", { headers: { "x-client": "someone-else", "x-cost": "1" } });
        expect(ruleOf(other, "uncapped")!.status.code).to.equal("OVER_LIMIT");
        // A client sending no header (missingCost 1) is refused as well.
        expect(ruleOf(await send("/uncapped", {}), "uncapped")!.status.code).to.equal("OVER_LIMIT");
    });

    it("maxCost 10: a request asking for 1,000,000 (or any number over 10, zero-padded or not) costs 10, and another client keeps the rest of the budget", async () => {
        const big = await send("/capped", { headers: { "x-cost": "1000000", "x-client": "greedy" } });
        expect(ruleOf(big, "capped")!.status.code).to.equal("OK");
        expect(ruleOf(big, "capped")!.status.limitRemaining).to.equal(90);
        expect(big.x.descriptors.find((d) => d.entries[0]!.value === "capped")!.hitsAddend).to.equal(10);
        const remaining = [];
        for (const cost of ["10", "11", "0010", "000000011", "999999999", "3"]) {
            remaining.push(ruleOf(await send("/capped", { headers: { "x-cost": cost } }), "capped")!.status.limitRemaining);
        }
        expect(remaining).to.deep.equal([80, 70, 60, 50, 40, 37]);
        // A request without the header still costs missingCost (1): leaving it out gains nothing either.
        const other = await send("/capped", { headers: { "x-client": "someone-else" } });
        expect(ruleOf(other, "capped")!.status.code).to.equal("OK");
        expect(ruleOf(other, "capped")!.status.limitRemaining).to.equal(36);
        const keys = await counters("capped");
        expect((await redisGet(keys[0]!)).value).to.equal("64");
        // And the greedy client's next try takes at most 10 again: the others are still served after it.
        await send("/capped", { headers: { "x-cost": "999999999", "x-client": "greedy" } });
        const served = [];
        for (let i = 0; i < 5; i++) served.push(ruleOf(await send("/capped", { headers: { "x-client": `c${i}` } }), "capped")!.status.code);
        expect(served).to.deep.equal(["OK", "OK", "OK", "OK", "OK"]);
    });
});
