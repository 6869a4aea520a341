/**
 * `npm run fn-lengths -- [--over N] [--top N] [--all] [--json]`
 *
 * Measures the hand-written TypeScript with the compiler's own parser (no type checking):
 *  - the length in lines of every function (declarations, methods, constructors, accessors,
 *    function expressions and arrow functions with a block body), from its first line (after its
 *    comment) to its last, both counted; a nested function counts on its own and inside its outer;
 *  - the functions longer than N lines (default 80), longest first, and the longest of all;
 *  - the exported type aliases that only rename another type (`export type A = B;`: the right side
 *    is a bare type name, no type arguments, no union, no construction).
 * Scope: the code's folders (everything but tests/, scripts/ and generated or installed folders);
 * `--all` adds tests/ and scripts/.
 */
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

const ROOT = path.resolve(__dirname, "..");
const NEVER = ["node_modules", "dist", "bin", "reports", ".stryker-tmp", ".git", "rendered", "out"];
const NOT_CODE = ["tests", "scripts"];

export interface FunctionLength {
    name: string;
    file: string;
    /** First and last line, 1-based. */
    start: number;
    end: number;
    lines: number;
}

export interface RenameAlias {
    name: string;
    renames: string;
    file: string;
    line: number;
}

/** The TypeScript files under ROOT (relative paths, sorted); tests and scripts only with `all`. */
export function sourceFiles(all = false, dir = ""): string[] {
    const out: string[] = [];
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (NEVER.includes(e.name) || (!dir && !all && NOT_CODE.includes(e.name))) continue;
        if (e.isDirectory()) out.push(...sourceFiles(all, rel));
        else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(rel);
    }
    return out.sort();
}

/** A readable name for a function node: `name`, `Class.method`, `Class constructor`, or where an anonymous one sits. */
function nameOf(node: ts.Node, outer: string | undefined): string {
    const cls = (n: ts.Node) => (ts.isClassLike(n.parent) && n.parent.name ? `${n.parent.name.text}.` : "");
    if (ts.isConstructorDeclaration(node)) return `${ts.isClassLike(node.parent) && node.parent.name ? node.parent.name.text : "<class>"} constructor`;
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) && node.name)
        return `${cls(node)}${node.name.getText()}`;
    const p = node.parent;
    if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
    if (ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return `${ts.isPropertyDeclaration(p) ? cls(p) : ""}${p.name.getText()}`;
    if ((ts.isFunctionExpression(node) || ts.isArrowFunction(node)) && ts.isCallExpression(p)) {
        const callee = p.expression.getText().split("\n")[0];
        return `<callback of ${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}>${outer ? ` in ${outer}` : ""}`;
    }
    return `<anonymous>${outer ? ` in ${outer}` : ""}`;
}

function isMeasured(node: ts.Node): node is ts.FunctionLikeDeclaration {
    if (ts.isArrowFunction(node)) return ts.isBlock(node.body);
    return (
        (ts.isFunctionDeclaration(node) ||
            ts.isMethodDeclaration(node) ||
            ts.isConstructorDeclaration(node) ||
            ts.isGetAccessor(node) ||
            ts.isSetAccessor(node) ||
            ts.isFunctionExpression(node)) &&
        !!(node as ts.FunctionLikeDeclaration).body
    );
}

/** Every function of one file with its length. */
export function functionLengths(file: string): FunctionLength[] {
    const text = fs.readFileSync(path.join(ROOT, file), "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const out: FunctionLength[] = [];
    const visit = (node: ts.Node, outer: string | undefined) => {
        let here = outer;
        if (isMeasured(node)) {
            const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
            const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
            here = nameOf(node, outer);
            out.push({ name: here, file, start, end, lines: end - start + 1 });
        }
        ts.forEachChild(node, (c) => visit(c, here));
    };
    visit(sf, undefined);
    return out;
}

/** Exported type aliases whose right side is a bare type name: a second name for one type. */
export function renameAliases(file: string): RenameAlias[] {
    const sf = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
    return sf.statements
        .filter(ts.isTypeAliasDeclaration)
        .filter((s) => s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
        .filter((s) => ts.isTypeReferenceNode(s.type) && !s.type.typeArguments && !s.typeParameters)
        .map((s) => ({ name: s.name.text, renames: s.type.getText(sf), file, line: sf.getLineAndCharacterOfPosition(s.getStart(sf)).line + 1 }));
}

function main(argv: string[]) {
    const num = (flag: string, dflt: number) => {
        const i = argv.indexOf(flag);
        const v = i >= 0 ? Number(argv[i + 1]) : dflt;
        if (!Number.isInteger(v) || v < 0) throw new Error(`${flag} needs a whole number`);
        return v;
    };
    const over = num("--over", 80);
    const top = num("--top", 10);
    const files = sourceFiles(argv.includes("--all"));
    const fns = files.flatMap(functionLengths).sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.start - b.start);
    const aliases = files.flatMap(renameAliases);
    const long = fns.filter((f) => f.lines > over);
    if (argv.includes("--json")) {
        console.log(JSON.stringify({ files: files.length, functions: fns.length, over, long, top: fns.slice(0, top), renameAliases: aliases }, null, 2));
        return;
    }
    const row = (f: FunctionLength) => `${String(f.lines).padStart(5)}  ${f.name}  ${f.file}:${f.start}-${f.end}`;
    console.log(
        `${fns.length} functions in ${files.length} files${argv.includes("--all") ? " (with tests/ and scripts/)" : " (tests/ and scripts/ left out; --all adds them)"}`,
    );
    console.log(`longest: ${fns[0] ? row(fns[0]).trim() : "none"}`);
    console.log(`\nover ${over} lines: ${long.length}`);
    for (const f of long) console.log(row(f));
    if (!long.length) console.log("  none");
    console.log(`\nlongest ${top}:`);
    for (const f of fns.slice(0, top)) console.log(row(f));
    console.log(`\nexported type aliases that only rename another type: ${aliases.length}`);
    for (const a of aliases) console.log(`  ${a.name} = ${a.renames}  ${a.file}:${a.line}`);
}

if (require.main === module) {
    // A reader that stops early (`| head`) has what it asked for: no crash on the closed pipe.
    process.stdout.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "EPIPE") process.exit(0);
        throw e;
    });
    try {
        main(process.argv.slice(2));
    } catch (e) {
        console.error(e instanceof Error ? e.message : e);
        process.exit(2);
    }
}
