/**
 * components/common/deferred-inputs.ts, without a Pulumi engine: which arguments may be outputs, the
 * placeholders the checks see in their place, and the refusal of an output where a plain value is
 * needed. (The values put back into the objects, the checks run once known and preview: the consumer
 * tier, tests/consumer/outputs.test.ts.)
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { PLACEHOLDER_PREFIX, deferInputs } from "../../components/common/deferred-inputs";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { LimitUnit } from "../../builders/rule-args";
import { RedisModeName } from "../../builders/redis-connection";

const base = (over: Partial<GlobalRateLimitArgs> = {}): GlobalRateLimitArgs => ({
    domain: "shop",
    namespace: "shop",
    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example:8080"] },
    rules: [{ name: "login", path: { exact: "/login" }, requestsPerUnit: 5, unit: LimitUnit.Minute }],
    ...over,
});

describe("deferred inputs: outputs where the checks can wait, placeholders the checks accept", () => {
    it("plain arguments come back as the same object, with nothing deferred", () => {
        const args = base();
        const d = deferInputs(args);
        expect(d.args).to.equal(args);
        expect(d.inputs).to.deep.equal([]);
        expect(d.problems).to.deep.equal([]);
    });

    it("the Redis addresses, the Secrets' names and the images may be outputs (or promises); each gets a placeholder the plan accepts", () => {
        const args = base({
            redis: {
                mode: RedisModeName.Sentinel,
                sentinelMaster: "mymaster",
                addresses: [pulumi.output("a:26379"), Promise.resolve("b:26379"), "c:26379"],
                passwordSecret: { name: pulumi.output("auth") },
                sentinelPasswordSecret: { name: pulumi.output("sentinel-auth") },
                tls: true,
                tlsCaSecret: pulumi.output("ca"),
            },
            service: { image: pulumi.output("registry.example/ratelimit:1") },
        });
        const d = deferInputs(args);
        expect(d.problems).to.deep.equal([]);
        expect(d.inputs.map((i) => i.path)).to.deep.equal([
            "redis.addresses[0]",
            "redis.addresses[1]",
            "redis.passwordSecret.name",
            "redis.sentinelPasswordSecret.name",
            "redis.tlsCaSecret",
            "service.image",
        ]);
        expect(new Set(d.inputs.map((i) => i.placeholder)).size).to.equal(6);
        expect(d.args.redis!.addresses![2]).to.equal("c:26379");
        expect(planGlobalRateLimit(d.args).problems).to.deep.equal([]);
        // The placeholders reach the objects (where the component's transformation replaces them).
        expect(JSON.stringify(planGlobalRateLimit(d.args).service)).to.include(PLACEHOLDER_PREFIX);
    });

    it("an output where a plain value is needed is refused with the field's path, the reason and the fields that take outputs", () => {
        const d = deferInputs(
            base({
                namespace: pulumi.output("shop") as unknown as string,
                rules: [{ name: pulumi.output("x") as unknown as string, requestsPerUnit: 5, unit: LimitUnit.Minute }],
            }),
        );
        expect(d.problems.map((p) => p.key)).to.deep.equal(["namespace", "rules[0].name"]);
        expect(d.problems[0].problem).to.include("must be a plain value: it decides which objects the component creates");
        expect(d.problems[0].fix).to.include("Redis addresses");
        expect(d.inputs).to.deep.equal([]);
    });

    it("negative control: without the placeholders, the plan refuses the outputs it cannot read", () => {
        const args = base({ redis: { mode: RedisModeName.External, addresses: ["not an address"] } });
        expect(planGlobalRateLimit(args).problems.map((p) => p.key)).to.include("redis.addresses");
        expect(() => planGlobalRateLimit(base({ service: { image: pulumi.output("x") } }))).to.throw(/an Input argument reached the plan/);
    });
});
