/**
 * No rendered object carries an empty `annotations` or `labels` map: the API server does not keep
 * one, so the stored object would differ from its render (the e2e tier compares them field by field).
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";

const OUT = path.join(__dirname, "..", "golden", "out");
const EMPTY = /^\s*(annotations|labels): \{\}\s*$/m;

function yamlFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = path.join(dir, e.name);
        return e.isDirectory() ? yamlFiles(p) : p.endsWith(".yaml") ? [p] : [];
    });
}

describe("rendered objects hold no empty annotations or labels map (tests/golden/out)", () => {
    it("none in any golden case's render; control: the scan finds one", () => {
        const files = yamlFiles(OUT);
        expect(files.length).to.be.greaterThan(100);
        expect(files.filter((f) => EMPTY.test(fs.readFileSync(f, "utf8"))).map((f) => path.relative(OUT, f))).to.deep.equal([]);
        expect(EMPTY.test("spec:\n  template:\n    metadata:\n      annotations: {}\n      labels:\n        app: redis\n")).to.equal(true);
    });
});
