/**
 * A client over its own limit must not use up a limit it shares with everyone: the REAL service with
 * `service.stopCountingWhenOverLimit` (`STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`), a shop gateway via
 * the gateway MODEL, a per-client rule and a shared rule asked in one call (`counterStore: single`).
 * The control is the same rules without the option: the service then counts every refused request
 * against the shared limit too, and the other clients are refused.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { useShop } from "./harness/shop";
import { ensureWindow, minuteOf } from "./harness/window";

const M = LimitUnit.Minute;
const PER_CLIENT = 2;
const SHARED = 10;
const RULES: RateLimitRuleArgs[] = [
    { name: "per-client", path: { prefix: "/api" }, perClientAddress: true, requestsPerUnit: PER_CLIENT, unit: M },
    { name: "shared", path: { prefix: "/api" }, requestsPerUnit: SHARED, unit: M },
];
const ONE_CALL: Partial<GlobalRateLimitArgs> = { counterStore: "single" };
const ATTACKER = "198.51.100.66";
const FLOOD = 30;

/** The attacker's flood, then one request from each of `SHARED` other clients: how many of each were let through. */
async function floodThenOthers(shop: ReturnType<typeof useShop>): Promise<{ attacker: number; others: number; sharedCalls: number }> {
    await ensureWindow(20);
    const t0 = Date.now();
    const first = await shop.send("/api/items", { clientAddress: ATTACKER });
    // Both rules in the one call, or the option could not apply.
    const sharedCalls = first.x.calls.filter((c) => c.descriptors.length === 2).length;
    let attacker = first.d?.overallCode === "OK" ? 1 : 0;
    attacker += await shop.okCount(
        FLOOD - 1,
        () => "/api/items",
        () => ({ clientAddress: ATTACKER }),
    );
    const others = await shop.okCount(
        SHARED,
        () => "/api/items",
        (i) => ({ clientAddress: `203.0.113.${i + 1}` }),
    );
    expect(minuteOf(Date.now()), "the case stayed in one window").to.equal(minuteOf(t0));
    return { attacker, others, sharedCalls };
}

describe("rls: a client over its own limit does not use up the shared one (stopCountingWhenOverLimit), real service", function () {
    this.timeout(120_000);
    const shop = useShop(RULES, { ...ONE_CALL, service: { stopCountingWhenOverLimit: true } });

    it(`the attacker gets its ${PER_CLIENT}; the shared limit keeps ${SHARED - PER_CLIENT} for the others`, async () => {
        const r = await floodThenOthers(shop);
        expect(r.sharedCalls).to.equal(1);
        expect(r.attacker).to.equal(PER_CLIENT);
        expect(r.others).to.equal(SHARED - PER_CLIENT);
    });
});

describe("rls: control, the same rules without the option: the refused flood uses up the shared limit", function () {
    this.timeout(120_000);
    const shop = useShop(RULES, ONE_CALL);

    it("the attacker still gets only its own; every other client is refused", async () => {
        const r = await floodThenOthers(shop);
        expect(r.sharedCalls).to.equal(1);
        expect(r.attacker).to.equal(PER_CLIENT);
        expect(r.others).to.equal(0);
    });
});
