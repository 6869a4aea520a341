/**
 * A default Pulumi.yaml declares cannot be told from a value the user set (the Pulumi CLI merges the
 * declared defaults into the config a program reads): the program drops a key at its declared
 * default at its edge, so a rule about a field the user gave does not fire on it. The package
 * itself takes `undefined` as "not given" and any value, the default's included, as given.
 */
import { expect } from "chai";
import { argsOfConfig, planOfConfig } from "../../program/config-args";
import { planMeshRateLimit } from "../../mesh/mesh-plan";
import { InputError } from "../../lib/problems";

const DESCRIPTORS = [{ key: "PATH", value: "/productpage", unit: "minute", requestsPerUnit: 5 }] as const;

function problemsOf(f: () => unknown): string[] {
    try {
        f();
    } catch (e) {
        if (e instanceof InputError) return e.problems.map((p) => `${p.key}: ${p.problem}`);
        throw e;
    }
    return [];
}

describe("stack config: a key at the default Pulumi.yaml declares is not a value the user gave", () => {
    it("limitedPathLimit at its declared default (1) beside a descriptor list: accepted, the key is not mapped", () => {
        const raw = { managedApi: "false", limitedPathLimit: "1", descriptors: JSON.stringify(DESCRIPTORS) };
        expect(argsOfConfig(raw).args.limits).to.deep.equal({ descriptors: DESCRIPTORS });
        expect(problemsOf(() => planOfConfig(raw))).to.deep.equal([]);
    });

    it("limitedPathLimit set to another value beside a descriptor list: refused under its key", () => {
        const raw = { managedApi: "false", limitedPathLimit: "2", descriptors: JSON.stringify(DESCRIPTORS) };
        expect(problemsOf(() => planOfConfig(raw))).to.deep.equal(["limitedPathLimit: is ignored because 'descriptors' replaces the whole list"]);
    });

    it("the package: limits.limitedPath given as 1 (the default's value) beside a descriptor list is a value given, refused", () => {
        const args = { managedApi: { enabled: false }, limits: { limitedPath: 1, descriptors: [...DESCRIPTORS] } };
        expect(problemsOf(() => planMeshRateLimit(args))).to.deep.equal([
            "limits.limitedPath: is ignored because 'limits.descriptors' replaces the whole list",
        ]);
    });
});
