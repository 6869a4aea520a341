/**
 * How bad input is raised: every refusal is Pulumi's `InputPropertiesError` with one entry per
 * problem (its property path, and the value, what is wrong and the fix as the reason), and the
 * Pulumi CLI still prints a program's refusal without a stack trace (the `RunError` marker).
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { planMeshRateLimit } from "../../mesh/mesh-plan";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LocalRateLimit } from "../../components/local-ratelimit/component";
import { configError, configProblem } from "../../program/config-problems";
import { planOfConfig } from "../../program/config-args";
import { InputError } from "../../lib/problems";
import { argsError } from "../../components/common/arg-checks";
const GATEWAY = { selector: { istio: "shop-gateway" }, virtualHosts: ["shop.example:8080"] };

function thrown(f: () => unknown): unknown {
    try {
        f();
    } catch (e) {
        return e;
    }
    throw new Error("nothing was thrown");
}

/** What a caller sees of an InputPropertiesError, checked the way Pulumi's own provider checks it. */
function propertyErrors(e: unknown): { propertyPath: string; reason: string }[] {
    expect(pulumi.InputPropertiesError.isInstance(e), "an InputPropertiesError").to.equal(true);
    return (e as pulumi.InputPropertiesError).errors;
}

describe("refusals are InputPropertiesErrors, one entry per property", () => {
    it("MeshRateLimit: each problem under its field path (a child component's field under the field holding it)", () => {
        const e = thrown(() =>
            planMeshRateLimit({ managedApi: { enabled: false }, limits: { catchAll: 0 }, global: { timeout: "ten", service: { replicas: 0 } } }),
        );
        const errors = propertyErrors(e);
        expect(errors.map((x) => x.propertyPath)).to.deep.equal(["limits.catchAll", "global.timeout", "global.service.replicas"]);
        // The reason holds today's words: the value, what is wrong, the fix for the arguments.
        expect(errors[2].reason).to.equal("0: must be between 1 and 100; fix: set global.service.replicas: 1 in MeshRateLimit's args");
        // One readable message over all of them, as before.
        expect((e as Error).message).to.match(/^MeshRateLimit: invalid arguments \(3 problems\); nothing was created:\n {2}- limits\.catchAll = /);
    });

    it("a component on its own (GlobalRateLimit's arguments error, LocalRateLimit's constructor): its own field paths", () => {
        const g = argsError("GlobalRateLimit edge", planGlobalRateLimit({ domain: "", namespace: "shop", gateway: GATEWAY } as never).problems);
        expect(propertyErrors(g).map((x) => x.propertyPath)).to.include("domain");
        const l = thrown(() => new LocalRateLimit("orders", { selector: {}, port: 8080, bucket: 5, namespace: "shop" } as never));
        expect(propertyErrors(l).map((x) => x.propertyPath)).to.deep.equal(["selector"]);
    });

    it("stack config: each problem under `<project>:<key>`, its fix a `pulumi config` command", () => {
        const e = thrown(() => planOfConfig({ managedApi: "false", localBucket: "0", rateLimitTimeout: "ten" }));
        const errors = propertyErrors(e);
        expect(errors.map((x) => x.propertyPath)).to.have.members(["mesh-ratelimit:localBucket", "mesh-ratelimit:rateLimitTimeout"]);
        expect(errors.find((x) => x.propertyPath === "mesh-ratelimit:localBucket")!.reason).to.match(/^"0": .*; fix: pulumi config set localBucket /);
    });

    it("the CLI prints only the message (no stack trace): the RunError marker, and the message is the formatted problems", () => {
        const err = configError([configProblem("unit", "weeks", "bad unit", (s) => s.set("unit", "minute"))]);
        expect(pulumi.RunError.isInstance(err)).to.equal(true);
        expect(err).to.be.instanceOf(InputError).and.instanceOf(Error);
        expect(err.name).to.equal("InputError");
        expect(err.message).to.equal(
            `invalid stack configuration (1 problem); nothing was created:\n  - mesh-ratelimit:unit = "weeks": bad unit\n    fix: pulumi config set unit minute`,
        );
    });

    it("negative control: a RunError with the same message carries no property (what a caller got before)", () => {
        const e = thrown(() => planMeshRateLimit({ managedApi: { enabled: false }, limits: { catchAll: 0 } }));
        const plain = new pulumi.RunError((e as Error).message);
        expect(pulumi.InputPropertiesError.isInstance(plain)).to.equal(false);
        expect(() => propertyErrors(plain)).to.throw(/an InputPropertiesError/);
    });
});
