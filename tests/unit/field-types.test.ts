/**
 * Structured field types (lib/field-types.ts): the interface text each writes, and the compiler's
 * refusal of a default or a rule of another type. field-types.typecheck.ts is compiled by the
 * typecheck tier; here it is compiled again with its `@ts-expect-error` lines stripped, so each
 * refused declaration is shown to fail (the control that the directives guard something), while
 * its right-typed twin compiles.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { TEXTS } from "./field-types.typecheck";

const FILE = path.join(__dirname, "field-types.typecheck.ts");

/** The errors of `FILE` compiled with `text` in its place, by line (1-based). */
function errorLines(text: string): number[] {
    const parsed = ts.getParsedCommandLineOfConfigFile(
        path.join(__dirname, "..", "..", "tsconfig.json"),
        {},
        { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    const options = { ...parsed!.options, noEmit: true };
    const host = ts.createCompilerHost(options);
    const read = host.getSourceFile.bind(host);
    host.getSourceFile = (name, lang, ...rest) => (path.resolve(name) === FILE ? ts.createSourceFile(name, text, lang) : read(name, lang, ...rest));
    const program = ts.createProgram([FILE], options, host);
    const source = program.getSourceFile(FILE)!;
    return ts
        .getPreEmitDiagnostics(program, source)
        .filter((d) => d.file?.fileName !== undefined && path.resolve(d.file.fileName) === FILE)
        .map((d) => source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1);
}

describe("structured field types", () => {
    it("each type writes its interface text", () => {
        for (const [type, text] of TEXTS) expect(type.text).to.equal(text);
    });

    it("a default or rule of another type than the declared one does not compile; control: the same file with its directives compiles", () => {
        const text = fs.readFileSync(FILE, "utf8");
        const directives = text.split("\n").flatMap((l, i) => (l.includes("// @ts-expect-error") ? [i + 2] : []));
        expect(directives).to.have.length(6);
        expect(errorLines(text), "as committed").to.deep.equal([]);
        const stripped = text.replace(/\/\/ @ts-expect-error.*/g, "");
        expect(errorLines(stripped), "each refused declaration, once").to.deep.equal(directives);
    });
});
