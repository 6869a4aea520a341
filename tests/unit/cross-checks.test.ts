/**
 * Cross-field checks (lib/cross-checks.ts): a field judged with its siblings names one check,
 * declared beside its table; every check a declaration names is bound to code, and lists the field.
 * Controls: an unbound check and a field the check does not list are found; a check bound twice
 * in two places is refused.
 */
import { expect } from "chai";
import "../../components/global-ratelimit/component";
import "../../components/platform-ratelimit/component";
import "../../mesh/mesh-ratelimit";
import { COMPONENT_ARG_INTERFACES } from "../../components/all/arg-types";
import { ArgInterface, CrossCheck, FieldDecl } from "../../lib/field-decl";
import { bindCrossCheck, boundCrossChecks, checkedWith, crossCheck } from "../../lib/cross-checks";
import { MESH_ARG_INTERFACES } from "../../mesh/mesh-arg-interfaces";

const ALL: readonly ArgInterface[] = [...COMPONENT_ARG_INTERFACES, ...MESH_ARG_INTERFACES];

/** Each declaration that names a cross-field check: `Interface.field` and its check. */
function namedChecks(interfaces: readonly ArgInterface[]): [string, string, CrossCheck][] {
    return interfaces.flatMap((i) =>
        Object.entries(i.fields).flatMap(([k, d]) => {
            const check = "rule" in d ? (d as FieldDecl<unknown>).rule.crossCheck : undefined;
            return check ? [[`${i.name}.${k}`, k, check] as [string, string, CrossCheck]] : [];
        }),
    );
}

/** What is wrong with the checks the declarations name: unbound, or not listing the field that names them. */
function faults(named: [string, string, CrossCheck][], bound: ReadonlyMap<CrossCheck, string>): string[] {
    return named.flatMap(([at, k, c]) => [
        ...(bound.has(c) ? [] : [`${at}: check "${c.name}" is bound to no code`]),
        ...(c.fields.includes(k) ? [] : [`${at}: check "${c.name}" does not list ${k}`]),
    ]);
}

describe("cross-field checks, named beside the declarations", () => {
    const named = namedChecks(ALL);

    it("every check a declaration names is bound to code and lists the field; control: an unbound check, a field not listed", () => {
        expect(named.length).to.be.greaterThan(40);
        expect(faults(named, boundCrossChecks())).to.deep.equal([]);
        const stray = crossCheck("stray", ["other"], "nothing");
        expect(faults([["X.f", "f", stray]], boundCrossChecks())).to.deep.equal([
            'X.f: check "stray" is bound to no code',
            'X.f: check "stray" does not list f',
        ]);
    });

    it("no declaration's rule points elsewhere in words (a file or a check named in its text); control: such a text is found", () => {
        const pointing = (text: string) => /\.ts\b|checked with|checks (it|them)\b/.test(text);
        const texts = ALL.flatMap((i) => Object.entries(i.fields).flatMap(([k, d]) => ("rule" in d ? [[`${i.name}.${k}`, d.rule.text] as const] : [])));
        expect(texts.length).to.be.greaterThan(150);
        expect(texts.filter(([, text]) => pointing(text))).to.deep.equal([]);
        expect(pointing("a path (checked with its siblings, rule-checks.ts checkRulePath)")).to.equal(true);
    });

    it("the rule a check names keeps the field's own check and says what the check asks", () => {
        const c = crossCheck("pair", ["a", "b"], "a and b together");
        const own = {
            text: "a number",
            problems: (p: string, v: unknown) => (typeof v === "number" ? [] : [{ key: p, value: v, problem: "must be a number", fix: "give 1" }]),
        };
        const r = checkedWith(c, own);
        expect(r.crossCheck).to.equal(c);
        expect(r.text).to.equal("a number; with its siblings: a and b together");
        expect(r.problems("a", 1, undefined)).to.deep.equal([]);
        expect(r.problems("a", "x", undefined)).to.have.length(1);
        expect(checkedWith(c, "a text").problems("a", "anything", undefined)).to.deep.equal([]);
    });

    it("a check is bound once; control: a second place is refused", () => {
        const c = crossCheck("once", ["a"], "once");
        const code = () => [];
        expect(bindCrossCheck(c, "here.ts f", code)).to.equal(code);
        expect(() => bindCrossCheck(c, "here.ts f", code)).to.not.throw();
        expect(() => bindCrossCheck(c, "there.ts g", code)).to.throw(/bound twice/);
    });
});
