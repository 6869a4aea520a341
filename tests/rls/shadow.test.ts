/**
 * Shadow mode (stack config `shadowMode=true`, service env SHADOW_MODE) on the REAL service and
 * Redis: an over-limit request is counted and reported but answered OK, so the gateway lets it
 * through; with Prometheus on (`ratelimitPrometheus=true`) the service reports each such answer.
 * Negative control: the same requests without shadow mode are refused.
 */
import { expect } from "chai";
import { World } from "./harness/fixture";
import { gatewayOutcome } from "./harness/client";
import { ensureWindow, minuteOf } from "./harness/window";
import { waitFor } from "./harness/ports";

/** The value of a Prometheus counter whose name contains `name` (summed over its label sets). */
function counter(text: string, name: RegExp): number {
    let sum = 0;
    for (const line of text.split("\n")) {
        if (line.startsWith("#") || !line.trim()) continue;
        const [metric, value] = line.split(/\s+/);
        if (name.test(metric)) sum += Number(value);
    }
    return sum;
}

describe("rls shadow mode: real service + Redis, rendered with shadowMode=true and ratelimitPrometheus=true", function () {
    let shadow: World;
    let enforcing: World;
    before(async () => {
        shadow = await World.start("A", 1, { shadowMode: "true", ratelimitPrometheus: "true" });
        enforcing = await World.start("A", 1, { ratelimitPrometheus: "true" });
    });
    after(async () => {
        await shadow?.stop();
        await enforcing?.stop();
    });

    it("the rendered service runs with SHADOW_MODE=true (and the enforcing render without it)", () => {
        expect(shadow.services[0].env.SHADOW_MODE).to.equal("true");
        expect(enforcing.services[0].env.SHADOW_MODE).to.equal(undefined);
    });

    it("over-limit requests are answered OK (the gateway passes them) while each descriptor status still says OVER_LIMIT; counted in Redis", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        const decisions = [];
        for (let i = 0; i < 6; i++) decisions.push((await shadow.send("/productpage"))!);
        expect(minuteOf(Date.now()), "the sequence crossed a minute boundary").to.equal(minuteOf(t0));
        expect(decisions.map((d) => d.overallCode)).to.deep.equal(Array(6).fill("OK"));
        expect(decisions.map((d) => gatewayOutcome(d))).to.deep.equal(Array(6).fill("allow"));
        // Reported per descriptor: the first is within the limit of 1, the other five over it.
        expect(decisions.map((d) => d.statuses[0].code)).to.deep.equal(["OK", ...Array(5).fill("OVER_LIMIT")]);
        // Counted: the key's counter in Redis went over the limit (later over-limit hits are answered
        // from the service's local over-limit cache and do not reach Redis).
        const keys = await shadow.redis.keys("*productpage*");
        expect(keys, "a counter key for /productpage").to.have.length(1);
        const c = await shadow.redis.client();
        try {
            expect(Number(await c.command("GET", keys[0]))).to.be.within(2, 6);
        } finally {
            c.close();
        }
    });

    it("the metrics endpoint reports the shadowed answers (global_shadow_mode and the key's over_limit counters)", async () => {
        // Counters reach the Prometheus sink at the service's stats flush (STATS_FLUSH_INTERVAL, 10 s).
        let text = "";
        await waitFor(
            "global_shadow_mode in the metrics",
            async () => counter((text = await shadow.services[0].metrics()), /global_shadow_mode/) > 0,
            25_000,
            500,
        );
        const shadowed = counter(text, /global_shadow_mode/);
        const overLimit = counter(text, /productpage.*over_limit(?!_with)|over_limit.*productpage/);
        expect(
            shadowed,
            `global_shadow_mode in:\n${text
                .split("\n")
                .filter((l) => /shadow|over_limit/.test(l))
                .join("\n")}`,
        ).to.be.at.least(5);
        expect(overLimit, "the /productpage key's over_limit counter").to.be.at.least(5);
    });

    it("negative control: without shadow mode the same requests are refused after the first", async () => {
        await ensureWindow(15);
        const codes: string[] = [];
        for (let i = 0; i < 4; i++) codes.push((await enforcing.send("/productpage"))!.overallCode);
        expect(codes).to.deep.equal(["OK", "OVER_LIMIT", "OVER_LIMIT", "OVER_LIMIT"]);
        // After a stats flush the enforcing service reports over_limit, and no shadowed answer.
        let text = "";
        await waitFor("over_limit in the metrics", async () => counter((text = await enforcing.services[0].metrics()), /over_limit/) > 0, 25_000, 500);
        expect(counter(text, /global_shadow_mode/)).to.equal(0);
    });
});
