/**
 * The rendered objects of every case of tests/golden/in/ equal the committed files of
 * tests/golden/out/<case>/ (tests/golden/golden.ts). A change of behaviour shows up as a diff of
 * those files: `npm run golden:update` rewrites them, and the reviewer reads the diff.
 */
import { expect } from "chai";
import { REDACTED } from "../../render/render";
import * as fs from "fs";
import * as path from "path";
import { ERROR_FILE, IN_DIR, caseFiles, committedFiles, differences, goldenCases, isRefusedCase, renderCase, UPDATE_COMMAND } from "../golden/golden";

describe("golden files: the rendered objects of each case (tests/golden/)", function () {
    this.timeout(120_000);
    const cases = goldenCases();

    it("has the cases: A/B × current/seed, and a GlobalRateLimit with typed rules and client CIDRs", () => {
        expect(cases.map((c) => c.name)).to.include.members(["A-current", "A-seed", "B-current", "B-seed", "shop-rules-client-cidr"]);
    });

    it("one case per rule feature, named after the behaviour it shows (a `# Behaviour:` line, and only the objects that feature shapes)", () => {
        const behaviours = [
            "rule-path-exact",
            "rule-path-prefix",
            "rule-path-regex",
            "rule-header-value",
            "rule-header-invert",
            "rule-header-per-value",
            "rule-value-charset",
            "rule-query-per-value",
            "rule-methods",
            "rule-per-client-address",
            "rule-client-prefix",
            "rule-client-cidr",
            "rule-route",
            "rule-shadow",
            "pre-limit",
            "layout-shared",
            "layout-per-instance",
            "gateway-api-target",
            "counter-store-split",
            "local-all-routes",
            "local-single-route",
        ];
        expect(cases.map((c) => c.name)).to.include.members(behaviours);
        for (const name of behaviours) {
            const text = fs.readFileSync(path.join(IN_DIR, `${name}.yaml`), "utf8");
            expect(text, name).to.match(/^# Behaviour: /);
            const files = [...committedFiles(cases.find((c) => c.name === name)!).keys()];
            expect(files.length, name).to.be.within(1, 6);
            expect(
                files.filter((f) => !/^(envoyfilter|configmap)_/.test(f)),
                name,
            ).to.deep.equal([]);
        }
        // Each behaviour's objects differ from every other's: no case repeats another.
        const outputs = behaviours.map((n) => JSON.stringify([...committedFiles(cases.find((c) => c.name === n)!).values()]));
        expect(new Set(outputs).size).to.equal(behaviours.length);
    });

    for (const c of cases) {
        it(`${c.name}: tests/golden/out/${c.name}/ is the render of tests/golden/in/${c.name}.yaml`, async () => {
            const rendered = await caseFiles(c);
            const diff = differences(c, rendered, committedFiles(c));
            if (diff.length)
                expect.fail(
                    `${diff.length} golden file(s) disagree with the render:\n  ${diff.join("\n  ")}\n` +
                        `If the change is intended, run ${UPDATE_COMMAND} and review git diff tests/golden/out.`,
                );
        });
    }

    it("refused input: each refused-* case has a `# Behaviour:` line, and its error names every problem's field, value and fix", () => {
        const refused = cases.filter(isRefusedCase);
        expect(refused.map((c) => c.name)).to.include.members([
            "refused-rule-fields",
            "refused-service-options",
            "refused-local-bucket",
            "refused-mesh-args",
            "refused-stack-config",
        ]);
        for (const c of refused) {
            expect(fs.readFileSync(path.join(IN_DIR, `${c.name}.yaml`), "utf8"), c.name).to.match(/^# Behaviour: /);
            const text = committedFiles(c).get(ERROR_FILE) ?? "";
            expect(text, c.name).to.match(/nothing was created:\n/);
            const items = text.split("\n  - ").slice(1);
            expect(items.length, c.name).to.be.above(0);
            // Each problem: `<field> = <value>: <problem>` and a fix line.
            for (const item of items) expect(item, c.name).to.match(/^\S+ = .+: .+\n {4}fix: \S/);
        }
    });

    it("no golden file holds a secret value: every Secret's values are the render's placeholder", async () => {
        for (const c of cases.filter((x) => !isRefusedCase(x))) {
            for (const o of await renderCase(c)) {
                if (o.kind !== "Secret") continue;
                for (const field of ["data", "stringData"])
                    for (const [k, v] of Object.entries((o[field] ?? {}) as Record<string, unknown>))
                        expect(v, `${c.name}: Secret ${o.metadata.name} ${field}.${k}`).to.equal(REDACTED);
            }
        }
    });
});
