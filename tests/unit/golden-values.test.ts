/**
 * Golden values (tests/golden/values.ts): a test's whole computed value against its committed JSON,
 * so a new field is a golden diff (`npm run golden:update`), not an edited test. The comparison
 * fails on a changed or added field (the controls) and passes on the committed value.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { VALUES_DIR, expectGolden, goldenFile, goldenText, goldenValueTests } from "../golden/values";

/** The golden value names a test file's source passes to expectGolden. */
const namesIn = (text: string) => [...text.matchAll(/expectGolden\(\s*"([^"]+)"/g)].map((m) => m[1]!);

/** Every committed golden value, by name. */
function committedNames(dir = VALUES_DIR, prefix = ""): string[] {
    return fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? committedNames(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name.replace(/\.json$/, "")}`]));
}

describe("golden values: whole values compared with tests/golden/values/", () => {
    const name = "explain/one-request";
    const committed = () => JSON.parse(fs.readFileSync(goldenFile(name), "utf8"));
    // While npm run golden:update rewrites the golden values, these controls would write theirs: they wait.
    before(function () {
        if (process.env.MESH_RL_GOLDEN_UPDATE === "1") this.skip();
    });

    it("the committed value passes; control: a changed field and an added field each fail, naming the file and the command", () => {
        expect(() => expectGolden(name, committed())).not.to.throw();
        const changed = committed();
        changed.limited = false;
        expect(() => expectGolden(name, changed)).to.throw("explain/one-request.json differs (npm run golden:update rewrites it");
        expect(() => expectGolden(name, { ...committed(), aNewField: 1 })).to.throw("differs");
    });

    it("keys are written sorted, at every depth, so only a changed value is a diff (control: the values differ)", () => {
        expect(goldenText({ b: 1, a: { d: [{ f: 1, e: 2 }], c: 2 } })).to.equal(goldenText({ a: { c: 2, d: [{ e: 2, f: 1 }] }, b: 1 }));
        expect(goldenText({ a: 1 })).not.to.equal(goldenText({ a: 2 }));
    });

    it("a missing golden file fails, naming the command that writes it; a bad name is refused", () => {
        expect(() => expectGolden("no-such/value", 1)).to.throw("no golden file tests/golden/values/no-such/value.json: npm run golden:update writes it");
        expect(() => goldenFile("../x")).to.throw('golden value name "../x": use lower-case words');
    });

    it("every committed golden value is one a test compares (no file left by a removed test); control: the scan reads names", () => {
        const named = new Set(goldenValueTests().flatMap((f) => namesIn(fs.readFileSync(f, "utf8"))));
        expect(committedNames().filter((n) => !named.has(n))).to.deep.equal([]);
        expect(committedNames().length).to.be.greaterThan(10);
        expect(namesIn('expectGolden("a/b", x);\nexpectGolden( "c", y)')).to.deep.equal(["a/b", "c"]);
    });

    it("npm run golden:update runs the unit files that hold golden values", () => {
        expect(goldenValueTests().map((f) => f.split("/").pop())).to.include.members(["gateway-model-explain.test.ts", "global-ratelimit-plan.test.ts"]);
    });
});
