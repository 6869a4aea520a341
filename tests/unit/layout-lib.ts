/**
 * What the layout tests read: the repository's TypeScript sources, the project files each imports,
 * a layout table of docs/proof/architecture.md, and floors computed from import edges.
 */
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";

export const ROOT = path.join(__dirname, "..", "..");
export const ARCHITECTURE = path.join(ROOT, "docs", "proof", "architecture.md");
/** Folders outside the layout: the tests and the scripts (tool builds, generators, the runner). */
export const OUTSIDE = ["tests/", "scripts/", "node_modules/", "dist/", "bin/", "reports/", ".stryker-tmp/"];

/** The layout's folders, most specific first (a nested folder before the folder holding it). */
export function folderOf(file: string, folders: string[]): string | undefined {
    return [...folders].sort((a, b) => b.length - a.length).find((f) => (f.endsWith("/") ? file.startsWith(f) : file === f));
}

/** Every TypeScript source of the repository outside tests and scripts, relative to the root. */
export function sourceFiles(dir = ""): string[] {
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
export function importsOf(file: string): string[] {
    const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
    return info.importedFiles
        .map((i) => i.fileName)
        .filter((s) => s.startsWith("."))
        .map((s) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), s)))
        .map((t) => (fs.existsSync(path.join(ROOT, `${t}.ts`)) ? `${t}.ts` : fs.existsSync(path.join(ROOT, t, "index.ts")) ? `${t}/index.ts` : t));
}

export interface LayoutRow {
    floor: number;
    folder: string;
    imports: string[];
}

/** The layout table of docs/proof/architecture.md: `| floor | folder | role | imports |`. */
export function documentedLayout(section = "Layout"): LayoutRow[] {
    const text = fs.readFileSync(ARCHITECTURE, "utf8");
    const body = text.split(new RegExp(`^## ${section}$`, "m"))[1]?.split(/^## /m)[0] ?? "";
    return body
        .split("\n")
        .filter((l) => /^\| \d+ \|/.test(l))
        .map((l) => {
            const cells = l.split("|").map((c) => c.trim());
            const ticked = (c: string) => [...c.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
            return { floor: Number(cells[1]), folder: ticked(cells[2])[0], imports: ticked(cells[4]).sort() };
        });
}

/** Folder → the layout folders it imports from (itself excluded), from the import statements. */
export function folderImports(folders: string[]): { edges: Map<string, Set<string>>; unplaced: string[] } {
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
export function floorsOf(edges: Map<string, Set<string>>): Map<string, number> {
    const floors = new Map<string, number>();
    const visit = (f: string, trail: string[]): number => {
        if (trail.includes(f)) throw new Error(`import circle: ${[...trail.slice(trail.indexOf(f)), f].join(" -> ")}`);
        if (!floors.has(f)) floors.set(f, Math.max(-1, ...[...edges.get(f)!].map((t) => visit(t, [...trail, f]))) + 1);
        return floors.get(f)!;
    };
    for (const f of edges.keys()) visit(f, []);
    return floors;
}
