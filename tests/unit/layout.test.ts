/**
 * The folder layout of docs/proof/architecture.md, checked against the code's own imports: every source
 * file belongs to a folder of the layout table; a folder's floor is one above the highest floor of
 * the folders it imports from (0 when it imports none), so each folder imports only from folders
 * below it (no import circle, no import back up); no two files import each other, however far
 * round; and the table's floor and imports columns are exactly what the import statements say.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

const ROOT = path.join(__dirname, "..", "..");
const ARCHITECTURE = path.join(ROOT, "docs", "proof", "architecture.md");
/** Folders outside the layout: the tests and the scripts (tool builds, generators, the runner). */
const OUTSIDE = ["tests/", "scripts/", "node_modules/", "dist/", "bin/", "reports/", ".stryker-tmp/"];

/** The layout's folders, most specific first (a nested folder before the folder holding it). */
function folderOf(file: string, folders: string[]): string | undefined {
    return [...folders].sort((a, b) => b.length - a.length).find((f) => (f.endsWith("/") ? file.startsWith(f) : file === f));
}

/** Every TypeScript source of the repository outside tests and scripts, relative to the root. */
function sourceFiles(dir = ""): string[] {
    const out: string[] = [];
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.name.startsWith(".") || OUTSIDE.some((o) => `${rel}/`.startsWith(o))) continue;
        if (e.isDirectory()) out.push(...sourceFiles(rel));
        else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(rel);
    }
    return out;
}

/** The project files a source imports (import, export ... from, require(), import()), relative to the root. */
function importsOf(file: string): string[] {
    const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
    return info.importedFiles
        .map((i) => i.fileName)
        .filter((s) => s.startsWith("."))
        .map((s) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), s)))
        .map((t) => (fs.existsSync(path.join(ROOT, `${t}.ts`)) ? `${t}.ts` : fs.existsSync(path.join(ROOT, t, "index.ts")) ? `${t}/index.ts` : t));
}

interface LayoutRow {
    floor: number;
    folder: string;
    imports: string[];
}

/** The layout table of docs/proof/architecture.md: `| floor | folder | role | imports |`. */
function documentedLayout(): LayoutRow[] {
    const text = fs.readFileSync(ARCHITECTURE, "utf8");
    const section = text.split(/^## Layout$/m)[1]?.split(/^## /m)[0] ?? "";
    return section
        .split("\n")
        .filter((l) => /^\| \d+ \|/.test(l))
        .map((l) => {
            const cells = l.split("|").map((c) => c.trim());
            const ticked = (c: string) => [...c.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
            return { floor: Number(cells[1]), folder: ticked(cells[2])[0], imports: ticked(cells[4]).sort() };
        });
}

/** Folder → the layout folders it imports from (itself excluded), from the import statements. */
function folderImports(folders: string[]): { edges: Map<string, Set<string>>; unplaced: string[] } {
    const edges = new Map<string, Set<string>>(folders.map((f) => [f, new Set<string>()]));
    const unplaced: string[] = [];
    for (const file of sourceFiles()) {
        const from = folderOf(file, folders);
        if (!from) {
            unplaced.push(file);
            continue;
        }
        for (const target of importsOf(file)) {
            const to = folderOf(target, folders);
            if (!to) unplaced.push(`${target} (imported by ${file})`);
            else if (to !== from) edges.get(from)!.add(to);
        }
    }
    return { edges, unplaced };
}

/** Floor of each folder from its imports; throws on an import circle, naming it. */
function floorsOf(edges: Map<string, Set<string>>): Map<string, number> {
    const floors = new Map<string, number>();
    const visit = (f: string, trail: string[]): number => {
        if (trail.includes(f)) throw new Error(`import circle: ${[...trail.slice(trail.indexOf(f)), f].join(" -> ")}`);
        if (!floors.has(f)) floors.set(f, Math.max(-1, ...[...edges.get(f)!].map((t) => visit(t, [...trail, f]))) + 1);
        return floors.get(f)!;
    };
    for (const f of edges.keys()) visit(f, []);
    return floors;
}

describe("folder layout (docs/proof/architecture.md) against the code's imports", () => {
    const rows = documentedLayout();
    const folders = rows.map((r) => r.folder);
    const { edges, unplaced } = folderImports(folders);

    it("the layout table lists each folder once", () => {
        expect(rows.length).to.be.greaterThan(5);
        expect(new Set(folders).size, folders.join(", ")).to.equal(folders.length);
    });

    it("every source file outside tests/ and scripts/ (and everything it imports) is in a folder of the table", () => {
        expect(unplaced).to.deep.equal([]);
    });

    it("no import circle; each folder's documented floor is one above the highest floor it imports from", () => {
        const floors = floorsOf(edges);
        expect(rows.map((r) => `${r.folder} ${r.floor}`)).to.deep.equal(rows.map((r) => `${r.folder} ${floors.get(r.folder)}`));
    });

    it("each folder's documented imports are the folders its import statements name", () => {
        expect(rows.map((r) => `${r.folder}: ${r.imports.join(", ")}`)).to.deep.equal(
            rows.map((r) => `${r.folder}: ${[...edges.get(r.folder)!].sort().join(", ")}`),
        );
    });

    it("no import circle between files either (type-only imports included)", () => {
        const files = sourceFiles().filter((f) => folderOf(f, folders));
        const edges = new Map(files.map((f) => [f, new Set(importsOf(f).filter((t) => t !== f && files.includes(t)))]));
        expect(() => floorsOf(edges)).to.not.throw();
        // Negative control: one import back from a file to a file that imports it is found and named.
        const [from, to] = [...edges].flatMap(([f, targets]) => [...targets].map((t) => [f, t]))[0]!;
        edges.get(to)!.add(from);
        expect(() => floorsOf(edges)).to.throw(/^import circle: /);
    });

    it("so every import goes down: no folder imports from its own floor or above", () => {
        const floor = new Map(rows.map((r) => [r.folder, r.floor]));
        const up = rows.flatMap((r) => [...edges.get(r.folder)!].filter((t) => floor.get(t)! >= r.floor).map((t) => `${r.folder} -> ${t}`));
        expect(up).to.deep.equal([]);
    });

    it("one role per file: no hand-written source file over 400 lines, the stack's key table included (generated files aside)", () => {
        // Generated files (their first line says so) are as long as what they are generated from.
        const generatedFile = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8").startsWith("// Generated by");
        const sources = (dir: string): string[] =>
            fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
                const rel = dir ? `${dir}/${e.name}` : e.name;
                if (e.isDirectory()) return OUTSIDE.some((o) => `${rel}/`.startsWith(o)) || e.name.startsWith(".") ? [] : sources(rel);
                return /\.ts$/.test(e.name) && !e.name.endsWith(".d.ts") ? [rel] : [];
            });
        const long = sources("")
            .filter((f) => !generatedFile(f))
            .map((f) => `${f} ${fs.readFileSync(path.join(ROOT, f), "utf8").split("\n").length - 1}`)
            .filter((x) => Number(x.split(" ")[1]) > 400);
        expect(long).to.deep.equal([]);
        expect(sources("").length).to.be.greaterThan(60);
    });

    it("unit test files no larger than 800 lines (each named after what it tests)", () => {
        const dir = path.join(ROOT, "tests", "unit");
        const long = fs
            .readdirSync(dir)
            .filter((f) => f.endsWith(".ts"))
            .map((f) => `${f} ${fs.readFileSync(path.join(dir, f), "utf8").split("\n").length - 1}`)
            .filter((x) => Number(x.split(" ")[1]) > 800);
        expect(long).to.deep.equal([]);
    });
});
