/**
 * The rules' declarations (components/rules/rule-fields.ts): the defaults the resolvers fill in are the
 * declared ones, and the generated interfaces' docs state them. The expected values are written here
 * too, so a default changed in one place only (the declaration, or a literal back in a resolver) fails.
 */
import { expect } from "chai";
import { LimitUnit, MissingHeader, ValueCharset } from "../../builders/rule-args";
import { planGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { HEADER_MATCH_DEFAULTS, LIMIT_DEFAULTS, PER_PATH_DEFAULTS, QUERY_MATCH_DEFAULTS } from "../../components/rules/rule-fields";
import { generatedText } from "../../scripts/gen-arg-types";
import * as path from "path";

const M = LimitUnit.Minute;

describe("rule fields: a declared default is the one the resolver fills in", () => {
    const { plan, problems } = planGlobalLimits({
        rules: [
            { name: "h", header: { name: "x-key", perValue: true }, requestsPerUnit: 1, unit: M },
            { name: "q", query: { name: "key", perValue: true }, requestsPerUnit: 1, unit: M },
        ],
        perPath: { paths: [{ path: "/a", requestsPerUnit: 1, unit: M }], eachPath: { requestsPerUnit: 2, unit: M } },
    });

    it("the rules are valid (control)", () => expect(problems).to.deep.equal([]));

    it("a header's and a parameter's whenMissing and valueCharset", () => {
        expect(HEADER_MATCH_DEFAULTS).to.deep.include({ whenMissing: MissingHeader.SharedCounter, valueCharset: ValueCharset.Utf8 });
        expect(QUERY_MATCH_DEFAULTS).to.deep.include({ whenMissing: MissingHeader.SharedCounter, valueCharset: ValueCharset.Utf8 });
        const [h, q] = plan.rules;
        expect({ whenMissing: h.header?.whenMissing, valueCharset: h.header?.valueCharset }).to.deep.equal({
            whenMissing: HEADER_MATCH_DEFAULTS.whenMissing,
            valueCharset: HEADER_MATCH_DEFAULTS.valueCharset,
        });
        expect({ whenMissing: q.query?.whenMissing, valueCharset: q.query?.valueCharset }).to.deep.equal({
            whenMissing: QUERY_MATCH_DEFAULTS.whenMissing,
            valueCharset: QUERY_MATCH_DEFAULTS.valueCharset,
        });
    });

    it("a limit's shadow: a rule's, a named path's and every other path's", () => {
        expect(LIMIT_DEFAULTS.shadow).to.equal(false);
        expect([...plan.rules.map((r) => r.shadow), plan.perPath?.paths[0].shadow, plan.perPath?.eachPath?.shadow]).to.deep.equal(
            Array(4).fill(LIMIT_DEFAULTS.shadow),
        );
    });

    it("the per-path descriptor key", () => {
        expect(PER_PATH_DEFAULTS.descriptorKey).to.equal("PATH");
        expect(plan.perPath?.key).to.equal(PER_PATH_DEFAULTS.descriptorKey);
    });

    it("the generated interfaces state the defaults as their enum members", () => {
        // Its JSDoc lines joined, so a sentence wrapped over two reads as one.
        const text = generatedText(path.join(__dirname, "..", "..", "builders", "rule-types-args.generated.ts")).replace(/\n\s*\* /g, " ");
        expect(text).to.include("Defaults to `ValueCharset.Utf8`.");
        expect(text).to.include("Defaults to `MissingHeader.SharedCounter` (one counter per client");
        expect(text).to.include("Descriptor key the path is sent under. Defaults to `PATH`.");
    });
});
