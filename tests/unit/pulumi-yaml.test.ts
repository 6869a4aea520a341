/**
 * Pulumi.yaml's declarations match the types the README documents: integers are `type: integer`
 * with a number as default, booleans `type: boolean`; the keys that cannot be declared are named.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { CONFIG_KEYS, PROJECT } from "../../program/config-keys";

const text = fs.readFileSync(path.join(__dirname, "..", "..", "Pulumi.yaml"), "utf8");
const config: Record<string, { type: string; default: unknown }> = parse(text).config;

describe("Pulumi.yaml declarations", () => {
    it("every declared key has the type the schema (and the README table) gives it, and a default of that type", () => {
        let checked = 0;
        for (const k of CONFIG_KEYS) {
            const d = config[`${PROJECT}:${k.key}`];
            if (!d) continue;
            checked++;
            const want = k.kind === "json" ? "string" : k.kind;
            expect(d.type, k.key).to.equal(want);
            expect(typeof d.default, `${k.key} default`).to.equal(want === "integer" ? "number" : want);
        }
        expect(checked).to.be.greaterThan(40);
    });

    it("only the variant-dependent integers are left undeclared, and the file says why", () => {
        const undeclared = CONFIG_KEYS.filter((k) => !config[`${PROJECT}:${k.key}`]).map((k) => k.key);
        expect(undeclared.sort()).to.deep.equal(["apiLimit", "localBucket"]);
        expect(text).to.match(/# Read and validated by the program but not declared above: apiLimit, localBucket\./);
    });

    it("kubernetes:enableConfigMapMutable is set and the configuration reference explains it", () => {
        expect((parse(text).config as Record<string, unknown>)["kubernetes:enableConfigMapMutable"]).to.equal(true);
        const readme = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "configuration.md"), "utf8");
        expect(readme).to.match(/`kubernetes:enableConfigMapMutable: true`[^\n]*\n[^\n]*in place/);
    });

    it("the program is main.ts (Pulumi.yaml main), not the package entry that package.json names", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
        expect(parse(text).main).to.equal("main.ts");
        expect(fs.existsSync(path.join(__dirname, "..", "..", "main.ts"))).to.equal(true);
        // Without main, Pulumi's Node.js runner runs package.json's exports/main: the package entry, an empty stack.
        expect(pkg.main).to.not.match(/main/);
        expect(fs.readFileSync(path.join(__dirname, "..", "..", "main.ts"), "utf8")).to.match(/buildProgram\(pulumi\.runtime\.allConfig\(\)/);
    });
});
