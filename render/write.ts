/**
 * Writes a render into a folder without ever deleting what the renderer did not write itself.
 *
 * The folder gets a manifest, `.mesh-ratelimit-render.json`, listing the files this renderer wrote.
 * A later render into the same folder removes only files named in that manifest that the new
 * render no longer writes. A folder that is not empty and has no manifest is refused, and so are
 * targets no render belongs in: `/`, the home directory, a folder holding `.git` or this
 * repository's package.json, the repository root, and any folder that contains the current
 * working directory or the repository.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const MANIFEST = ".mesh-ratelimit-render.json";
const GENERATOR = "mesh-ratelimit render";
const REPO_ROOT = path.resolve(__dirname, "..");

/** The out folder cannot be used; the message says why and what to do instead. */
export class OutDirError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "OutDirError";
    }
}

interface Manifest {
    generator: string;
    files: string[];
}

/** Follows symlinks of the longest existing prefix, so `a/link/../b` and `link` compare as the folder they name. */
function realish(p: string): string {
    const abs = path.resolve(p);
    let head = abs;
    const tail: string[] = [];
    while (!fs.existsSync(head)) {
        const parent = path.dirname(head);
        if (parent === head) break;
        tail.unshift(path.basename(head));
        head = parent;
    }
    return path.join(fs.realpathSync(head), ...tail);
}

/** True when `inner` is `outer` or lies below it. */
function within(inner: string, outer: string): boolean {
    const rel = path.relative(outer, inner);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function isThisRepo(dir: string): boolean {
    try {
        const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
        return pkg?.name === "mesh-ratelimit";
    } catch {
        return false;
    }
}

/**
 * Why `dir` must never be a render target, or undefined when it may be one (subject to the
 * manifest rule). `cwd` and `home` are parameters so tests can pass their own.
 */
export function dangerousTarget(dir: string, cwd = process.cwd(), home = os.homedir()): string | undefined {
    const d = realish(dir);
    const root = path.parse(d).root;
    if (d === root) return `${d} is the file-system root`;
    if (home && d === realish(home)) return `${d} is your home directory`;
    if (within(realish(REPO_ROOT), d)) return `${d} ${d === realish(REPO_ROOT) ? "is" : "contains"} this repository (${REPO_ROOT})`;
    if (fs.existsSync(path.join(d, ".git"))) return `${d} holds a .git folder (a repository root)`;
    if (isThisRepo(d)) return `${d} holds this repository's package.json`;
    const c = realish(cwd);
    if (c !== d && within(c, d)) return `${d} contains the current directory (${c})`;
    return undefined;
}

function readManifest(dir: string): Manifest | undefined {
    const file = path.join(dir, MANIFEST);
    if (!fs.existsSync(file)) return undefined;
    let m: unknown;
    try {
        m = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new OutDirError(`${file} is not valid JSON (${(e as Error).message}): this folder's files cannot be told apart; choose another --out folder`);
    }
    const files = (m as Manifest)?.files;
    if ((m as Manifest)?.generator !== GENERATOR || !Array.isArray(files) || !files.every((f) => typeof f === "string")) {
        throw new OutDirError(`${file} is not a manifest written by this renderer; choose another --out folder`);
    }
    return { generator: GENERATOR, files };
}

/** A manifest entry is a plain relative path inside the folder (never `..`, never absolute). */
function safeEntry(f: string): boolean {
    return f !== "" && !path.isAbsolute(f) && !f.split(/[\\/]/).some((s) => s === ".." || s === "." || s === "") && f !== MANIFEST;
}

function writeManifest(dir: string, files: string[]): void {
    const m: Manifest = { generator: GENERATOR, files: [...files].sort() };
    const tmp = path.join(dir, `${MANIFEST}.tmp`);
    fs.writeFileSync(tmp, `${JSON.stringify(m, null, 1)}\n`);
    fs.renameSync(tmp, path.join(dir, MANIFEST));
}

export interface WriteResult {
    dir: string;
    written: string[];
    /** Files of an earlier render that this one no longer writes, now removed. */
    removed: string[];
}

/**
 * Writes `files` (relative path → content) into `dir` under the rules in the header. Throws
 * `OutDirError` before touching anything when the folder may not be used.
 */
export function writeFilesSafely(dir: string, files: Map<string, string>, opts: { cwd?: string; home?: string } = {}): WriteResult {
    const target = path.resolve(dir);
    const danger = dangerousTarget(target, opts.cwd, opts.home);
    if (danger) throw new OutDirError(`refusing to render into ${target}: ${danger}. Use a new or empty folder, e.g. --out rendered`);
    if (fs.existsSync(target) && !fs.statSync(target).isDirectory()) {
        throw new OutDirError(`refusing to render into ${target}: it exists and is not a folder`);
    }
    for (const f of files.keys()) if (!safeEntry(f)) throw new Error(`internal: bad render file name '${f}'`);

    const existing = fs.existsSync(target) ? fs.readdirSync(target) : [];
    const old = existing.length ? readManifest(target) : undefined;
    if (existing.length && !old) {
        const shown = existing.slice(0, 5).join(", ") + (existing.length > 5 ? `, ... (${existing.length} entries)` : "");
        throw new OutDirError(
            `refusing to render into ${target}: the folder is not empty (${shown}) and has no ${MANIFEST}, so it was not written by this renderer and nothing in it may be replaced or removed. Use a new or empty folder, e.g. --out rendered`,
        );
    }
    const own = new Set((old?.files ?? []).filter(safeEntry));
    // A file of the same name that the renderer did not write is someone else's: never overwrite it.
    const foreign = [...files.keys()].filter((f) => !own.has(f) && fs.existsSync(path.join(target, f)));
    if (foreign.length) {
        throw new OutDirError(
            `refusing to render into ${target}: ${foreign.join(", ")} already exist${foreign.length === 1 ? "s" : ""} there but ${foreign.length === 1 ? "was" : "were"} not written by this renderer (not in ${MANIFEST})`,
        );
    }

    fs.mkdirSync(target, { recursive: true });
    // The manifest lists old and new files while writing, so an interrupted run leaves nothing unlisted.
    writeManifest(target, [...new Set([...own, ...files.keys()])]);
    for (const [f, text] of files) {
        const p = path.join(target, f);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text);
    }
    const removed: string[] = [];
    for (const f of own) {
        if (files.has(f)) continue;
        const p = path.join(target, f);
        let st: fs.Stats | undefined;
        try {
            st = fs.lstatSync(p);
        } catch {
            continue; // already gone
        }
        if (!st.isFile()) continue; // replaced by a folder or link since: not ours any more
        fs.unlinkSync(p);
        removed.push(f);
        // Remove sub-folders the render created once they are empty (rmdir refuses non-empty ones).
        for (let d = path.dirname(f); d !== "."; d = path.dirname(d)) {
            try {
                fs.rmdirSync(path.join(target, d));
            } catch {
                break;
            }
        }
    }
    writeManifest(target, [...files.keys()]);
    return { dir: target, written: [...files.keys()], removed };
}
