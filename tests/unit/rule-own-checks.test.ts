/**
 * Every field of a rule is checked: by validateRule's own code with its siblings (the named set), or
 * by its declared rule alone (ownRuleFields), so a field added to RULE_FIELDS is refused on a bad
 * value with no other change.
 */
import { expect } from "chai";
import { RULE_FIELDS } from "../../components/rules/rule-fields";
import { RULE_FIELDS_CHECKED_WITH_SIBLINGS, ownRuleFields, validateRule } from "../../components/rules/rule-checks";
import { booleanRule, field } from "../../lib/field-decl";
import { t } from "../../lib/field-types";
import { Problem } from "../../lib/problems";

describe("a rule's fields are each checked (components/rules/rule-checks.ts)", () => {
    it("the fields checked with their siblings are declared fields of the rule, none stale", () => {
        expect([...RULE_FIELDS_CHECKED_WITH_SIBLINGS].filter((k) => !(k in RULE_FIELDS))).to.deep.equal([]);
    });

    it("every other declared field is checked by its own rule; control: a field added to the table is picked up and its bad value refused", () => {
        const own = ownRuleFields().map(([k]) => k);
        expect(Object.keys(RULE_FIELDS).filter((k) => !RULE_FIELDS_CHECKED_WITH_SIBLINGS.has(k) && !own.includes(k))).to.deep.equal([]);
        const extra = field({ doc: "x", type: t.boolean(), default: false, rule: booleanRule(), goesTo: { object: "nowhere" } });
        const withExtra = ownRuleFields({ ...RULE_FIELDS, extraSwitch: extra });
        expect(withExtra.map(([k]) => k)).to.include("extraSwitch");
        const [, d] = withExtra.find(([k]) => k === "extraSwitch")!;
        expect(d.rule.problems("rules[0].extraSwitch", "yes", false).map((p) => p.key)).to.deep.equal(["rules[0].extraSwitch"]);
    });

    it("a valid rule has no problem (control for the loop: it refuses nothing that is right)", () => {
        const problems: Problem[] = [];
        expect(validateRule({ name: "a", requestsPerUnit: 5, unit: "minute" }, 0, new Set(), problems), JSON.stringify(problems)).to.equal(true);
    });
});
