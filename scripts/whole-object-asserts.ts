// Counts deep-equal assertions in tests/unit whose expected value is written out as an object literal
// (or a list holding one): those a new field of the compared object breaks. Descriptor entries
// ({ key, value }) and problems ({ key, value, problem, fix }) have a fixed shape and are left out
// unless --all is given. Prints file:line and a count: npx tsx scripts/whole-object-asserts.ts [dir] [--all]
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
const dir = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? "tests/unit";
/** Every object literal of an expected value (at any depth) and its own keys. */
function literalKeys(n: ts.Node, out: string[][] = []): string[][] {
    if (ts.isObjectLiteralExpression(n))
        out.push(n.properties.map((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : "...")));
    ts.forEachChild(n, (c) => void literalKeys(c, out));
    return out;
}
/** Shapes that no rule or component field grows: descriptor entries and problems. */
const FIXED_SHAPES = [new Set(["key", "value"]), new Set(["key", "value", "problem", "fix", "fixWith", "path"])];
const fixedShape = (n: ts.Node) => literalKeys(n).every((keys) => keys.length > 0 && FIXED_SHAPES.some((s) => keys.every((k) => s.has(k))));
const hasObjectLiteral = (n: ts.Node): boolean =>
    ts.isObjectLiteralExpression(n) ||
    (ts.isArrayLiteralExpression(n) && n.elements.some(hasObjectLiteral)) ||
    (ts.isAsExpression(n) && hasObjectLiteral(n.expression));
const out: string[] = [];
for (const f of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .sort()) {
    const file = path.join(dir, f);
    const src = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node) => {
        if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
            const name = n.expression.name.text;
            const chain = n.expression.expression.getText(src);
            let expected: ts.Node | undefined;
            if ((name === "equal" || name === "equals") && /\.deep$/.test(chain)) expected = n.arguments[0];
            else if (name === "eql") expected = n.arguments[0];
            else if ((name === "deepStrictEqual" || name === "deepEqual") && /assert$/.test(chain)) expected = n.arguments[1];
            if (expected && hasObjectLiteral(expected) && (process.argv.includes("--all") || !fixedShape(expected))) {
                const { line } = src.getLineAndCharacterOfPosition(n.getStart(src));
                const actual = n.expression.expression.getText(src).replace(/\s+/g, " ");
                out.push(`${file}:${line + 1}: ${actual.slice(0, 110)}`);
            }
        }
        ts.forEachChild(n, visit);
    };
    visit(src);
}
console.log(out.join("\n"));
console.log(`${out.length} deep-equal assertions with an object literal expected`);
