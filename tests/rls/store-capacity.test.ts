/**
 * The counters a per-value store holds, as the preview prints them, against the REAL service and a
 * REAL Redis started exactly as rendered (its `maxmemory`, `allkeys-lfu` and LFU settings): the store
 * is filled through the service (each new `x-api-key` value one real decision from the project's Go
 * load generator, so every counter is written by the service's own INCRBY + EXPIRE, in its own key
 * format), well past the point where Redis evicts, then the keys Redis still holds are counted.
 *
 * Filled through the service rather than by writing keys into Redis: the service is what a client
 * reaches, and its connections' buffers count in `used_memory` as well. Two sizes (8mb, 32mb).
 * The printed figure must be within 25 % of what Redis held; the control is the figure of the earlier
 * per-counter estimate (2 MiB of base and 128 B + 1.25 B per key byte), which is outside it at 8mb.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { renderedRatelimits } from "./harness/rendered";
import { CPUS, Side, countedWorkloadArgs, startSide, stopSide } from "./harness/flood";
import { runLoadgenWorkload } from "./harness/loadgen";
import { explain } from "../../gateway-model/explain";
import type { K8sObject } from "../../lib/k8s-object";
import { redisInfo } from "./harness/counters";

/**
 * Every flood value is this long, and the store is sized for values of this length: long enough that
 * the rule's longest key (what the preview counts) is the x-api-key chain's (119 bytes), not its
 * fallback per client address's (117 bytes).
 */
const VALUE_BYTES = 80;
const RULE: RateLimitRuleArgs = {
    name: "per-key",
    header: { name: "x-api-key", perValue: true },
    requestsPerUnit: 5,
    unit: LimitUnit.Hour,
    acceptEvictionRisk: true,
};
const value = (i: number) => `k${String(i).padStart(VALUE_BYTES - 1, "0")}`;

/**
 * `n` real decisions, one per new value from `from` on, from the project's Go load generator (64 in
 * flight): the descriptors are the model's call for value 0 (gateway-model/explain.ts), with the
 * value replaced (every request of the flood is the same but for it).
 */
async function newValues(objects: K8sObject[], side: Side, from: number, n: number): Promise<any> {
    const call = explain(objects, "/", { headers: { "x-api-key": value(0) } }).calls[0]!;
    const entries = call.descriptors.map((d) => d.entries);
    expect(JSON.stringify(entries)).to.contain(value(0));
    const requests = Array.from({ length: n }, (_, i) => JSON.parse(JSON.stringify(entries).replace(value(0), value(from + i))));
    const args = countedWorkloadArgs(side.svc.grpcAddress, n);
    return runLoadgenWorkload(call.domain, requests, args, CPUS?.perValue);
}

function argsOf(maxMemory: string): Partial<GlobalRateLimitArgs> {
    return { redis: { maxMemory }, perValueStore: { longestValueBytes: VALUE_BYTES } };
}

/** The counters-held figure the preview prints for the rule in a store of `maxMemory`. */
function printedHeld(maxMemory: string): { held: number; line: string; keyBytes: number } {
    const plan = planGlobalRateLimit({
        domain: "shop",
        gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
        namespace: "shop",
        rules: [RULE],
        ...argsOf(maxMemory),
    });
    expect(plan.problems).to.deep.equal([]);
    const f = plan.perValueFigures.figures[0]!;
    return { held: f.countersHeld!, line: plan.perValueFigures.lines[0]!, keyBytes: f.keyBytes };
}

/** The earlier estimate, the control: 2 MiB of base, 128 B + 1.25 B per key byte a counter. */
const earlierHeld = (bytes: number, keyBytes: number) => Math.floor((bytes - 2 * 1024 * 1024) / Math.ceil(128 + 1.25 * keyBytes));

describe("rls: the counters a per-value store holds, printed at preview, against a real Redis filled through the real service", function () {
    this.timeout(900_000);
    for (const [maxMemory, mib] of [
        ["8mb", 8],
        ["32mb", 32],
    ] as const) {
        it(`${maxMemory}: the printed counters held is within 25 % of the keys Redis holds once it evicts`, async () => {
            const printed = printedHeld(maxMemory);
            const objects = [...USER_OBJECTS, ...(await renderComponent([RULE], argsOf(maxMemory)))];
            const [rendered] = renderedRatelimits(objects);
            let side: Side | undefined;
            try {
                side = await startSide(objects, rendered!);
                const args = side.redis.rendered!.args;
                expect(args.join(" ")).to.contain(`--maxmemory ${maxMemory} --maxmemory-policy allkeys-lfu --lfu-log-factor 0 --lfu-decay-time 0`);
                // Well past full: about twice what the printed figure says fits, in rounds until Redis has evicted.
                let sent = 0;
                let info: Record<string, string> = {};
                while (sent < 2 * printed.held || Number(info.evicted_keys ?? 0) === 0) {
                    const n = Math.ceil(printed.held / 2);
                    const report = await newValues(objects, side, sent, n);
                    expect(report.errors, JSON.stringify(report).slice(0, 400)).to.equal(0);
                    expect(report.ok, "each new value is one decision the service allows").to.equal(n);
                    sent += n;
                    info = await redisInfo(side.redis);
                }
                const held = Number(/keys=(\d+)/.exec(info.db0 ?? "")![1]);
                const c = await side.redis.client();
                const sample = String((await c.command("RANDOMKEY")) ?? "");
                c.close();
                expect(sample.length, `a counter key (${sample}) as long as the preview counts`).to.equal(printed.keyBytes);
                console.log(
                    `      ${maxMemory}: sent ${sent} new values, Redis holds ${held} counters (used_memory ${info.used_memory}, evicted ${info.evicted_keys}); printed ${printed.held}; earlier estimate ${earlierHeld(mib * 1024 * 1024, printed.keyBytes)}`,
                );
                expect(printed.held / held).to.be.within(0.75, 1.25);
                if (mib === 8) expect(earlierHeld(mib * 1024 * 1024, printed.keyBytes) / held, "control: the earlier estimate").to.not.be.within(0.75, 1.25);
            } finally {
                await stopSide(side);
            }
        });
    }
});
