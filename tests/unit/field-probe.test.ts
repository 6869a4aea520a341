/**
 * scripts/field-probe.ts's parts that decide what it reports: the edit that declares the probe
 * field in a table (and only there), and the reader of mocha's JSON report. The probe's own control
 * (the field reached the generated interface and the schema) runs with it.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { DEFAULT_TABLES, failedTestsOf, withProbeField } from "../../scripts/field-probe";

const ROOT = path.join(__dirname, "..", "..");

describe("field-probe: declaring a field in a table", () => {
    const file = "components/rules/rule-fields.ts";
    const source = fs.readFileSync(path.join(ROOT, file), "utf8");

    it("adds the switch as the named table's first field, with imports relative to the file", () => {
        const out = withProbeField(source, "RULE_FIELDS", path.dirname(file));
        expect(out).to.be.a("string");
        const lines = (out as string).split("\n");
        const at = lines.findIndex((l) => l.startsWith("export const RULE_FIELDS"));
        expect(lines[at + 1])
            .to.contain("fieldProbe:")
            .and.to.contain("default: false");
        expect(lines[0]).to.contain('from "../../lib/field-decl"');
        expect(lines[1]).to.contain('from "../../lib/field-types"');
        // only that table grew: the other tables of the file keep their first line
        const other = lines.findIndex((l) => l.startsWith("export const LIMIT_FIELDS"));
        expect(lines[other + 1]).not.to.contain("fieldProbe");
    });

    it("control: a table the file does not declare is named, not silently skipped", () => {
        expect(withProbeField(source, "NO_SUCH_FIELDS", path.dirname(file))).to.deep.equal({ error: "no line `export const NO_SUCH_FIELDS = {` in the file" });
    });

    it("every default table is declared in its file", () => {
        for (const spec of DEFAULT_TABLES) {
            const [f, table] = spec.split(":");
            const out = withProbeField(fs.readFileSync(path.join(ROOT, f), "utf8"), table, path.dirname(f));
            expect(out, spec).to.be.a("string");
        }
    });
});

describe("field-probe: reading mocha's JSON report", () => {
    it("names each failure by file and title; a clean run names none", () => {
        const report = { stats: {}, failures: [{ file: "/x/tests/unit/a.test.ts", fullTitle: "a b" }], passes: [] };
        expect(failedTestsOf(JSON.stringify(report))).to.deep.equal(["/x/tests/unit/a.test.ts: a b"]);
        expect(failedTestsOf(JSON.stringify({ stats: {}, failures: [], passes: [{}] }))).to.deep.equal([]);
    });
});
