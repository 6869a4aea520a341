/**
 * The repository explains itself: every relative link and every named `*.md` document in README.md
 * and every docs/ page (folders included) exists in the repository (and every `#anchor` names a heading of its target), and
 * no tracked file points at the project's private working notes, which users of the repository
 * never see.
 */
import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

const ROOT = path.resolve(__dirname, "../..");

/** The markdown files whose links and mentions are checked, relative to the root: README.md and docs/ with its folders. */
function docFiles(root: string): string[] {
    const docs: string[] = [];
    const walk = (rel: string) => {
        if (!fs.existsSync(path.join(root, rel))) return;
        for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
            if (e.isDirectory()) walk(`${rel}/${e.name}`);
            else if (e.name.endsWith(".md")) docs.push(`${rel}/${e.name}`);
        }
    };
    walk("docs");
    return ["README.md", ...docs.sort()];
}

/** The markdown files reachable from `start` by relative links (README.md's readers find every page). */
export function reachable(start: string, read: (rel: string) => string, exists: (rel: string) => boolean): Set<string> {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length) {
        const file = queue.shift()!;
        for (const { target } of linkTargets(read(file))) {
            if (EXTERNAL.test(target)) continue;
            const p = target.split("#")[0];
            if (p === "") continue;
            const rel = path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(p)));
            if (rel.endsWith(".md") && !seen.has(rel) && exists(rel)) {
                seen.add(rel);
                queue.push(rel);
            }
        }
    }
    return seen;
}

/** Tracked files (git), or every file outside .git and node_modules when there is no git checkout. */
function trackedFiles(root: string): string[] {
    try {
        return execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
            .split("\0")
            .filter((f) => f !== "" && fs.existsSync(path.join(root, f)));
    } catch {
        const out: string[] = [];
        const walk = (rel: string) => {
            for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
                const p = rel ? `${rel}/${e.name}` : e.name;
                if (e.isDirectory()) {
                    if (e.name !== ".git" && e.name !== "node_modules") walk(p);
                } else out.push(p);
            }
        };
        walk("");
        return out;
    }
}

/** Text outside fenced code blocks (``` or ~~~), line count preserved. */
export function withoutFences(text: string): string {
    let inFence = false;
    return text
        .split("\n")
        .map((line) => {
            if (/^\s*(```|~~~)/.test(line)) {
                inFence = !inFence;
                return "";
            }
            return inFence ? "" : line;
        })
        .join("\n");
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces to '-'. */
export function slug(heading: string): string {
    return heading
        .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link in a heading anchors on its text
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
        .replace(/ /g, "-");
}

/** Every anchor a markdown text defines: its ATX headings (duplicates get -1, -2, ...) and explicit ids. */
export function anchors(text: string): Set<string> {
    const seen = new Map<string, number>();
    const out = new Set<string>();
    for (const line of withoutFences(text).split("\n")) {
        const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
        if (!m) continue;
        const base = slug(m[1]);
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]);
    return out;
}

export interface Problem {
    file: string;
    line: number;
    ref: string;
    problem: string;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i; // http:, https:, mailto:, ...

/** Link targets of a markdown text: inline `[text](target)` and reference definitions `[id]: target`. */
export function linkTargets(text: string): { target: string; line: number }[] {
    const out: { target: string; line: number }[] = [];
    withoutFences(text)
        .split("\n")
        .forEach((l, i) => {
            const line = l.replace(/`[^`]*`/g, (code) => " ".repeat(code.length)); // `[x](y)` in code is not a link
            for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1], line: i + 1 });
            const ref = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$/.exec(line);
            if (ref) out.push({ target: ref[1], line: i + 1 });
        });
    return out;
}

/**
 * Names of `*.md` documents mentioned anywhere in a text (links, backticks or plain words). URLs,
 * and the text of a link to an external page (which names an upstream file), are left out.
 */
export function documentMentions(text: string): { name: string; line: number }[] {
    const out: { name: string; line: number }[] = [];
    text.split("\n").forEach((l, i) => {
        const line = l.replace(/\[[^\]]*\]\(\s*<?[a-z][a-z0-9+.-]*:[^)]*\)/gi, " ").replace(/[a-z][a-z0-9+.-]*:\/\/[^\s)>\]`"']+/gi, " ");
        for (const m of line.matchAll(/(?<![\w./-])((?:\.{1,2}\/)*[\w][\w./-]*\.md)(?![\w-])/g)) out.push({ name: m[1], line: i + 1 });
    });
    return out;
}

/**
 * Checks one markdown file of a repository laid out under `root`. `read` and `exists` are passed in
 * so the checker itself can be tested on made-up files.
 */
export function checkDoc(file: string, read: (rel: string) => string, exists: (rel: string) => boolean): Problem[] {
    const problems: Problem[] = [];
    const text = read(file);
    const dir = path.posix.dirname(file);
    const inRepo = (rel: string) => rel !== ".." && !rel.startsWith("../") && !path.posix.isAbsolute(rel);

    for (const { target, line } of linkTargets(text)) {
        if (EXTERNAL.test(target)) continue;
        const [rawPath, anchor] = target.split("#", 2);
        const rel = rawPath === "" ? file : path.posix.normalize(path.posix.join(dir, decodeURIComponent(rawPath)));
        if (!inRepo(rel)) {
            problems.push({ file, line, ref: target, problem: "points outside the repository" });
            continue;
        }
        if (!exists(rel)) {
            problems.push({ file, line, ref: target, problem: `no such file: ${rel}` });
            continue;
        }
        if (anchor !== undefined && anchor !== "" && rel.endsWith(".md")) {
            if (!anchors(read(rel)).has(decodeURIComponent(anchor))) {
                problems.push({ file, line, ref: target, problem: `${rel} has no heading with anchor #${anchor}` });
            }
        }
    }

    for (const { name, line } of documentMentions(text)) {
        const candidates = [path.posix.normalize(path.posix.join(dir, name)), path.posix.normalize(name)];
        if (!candidates.some((c) => inRepo(c) && exists(c))) {
            problems.push({
                file,
                line,
                ref: name,
                problem: `names a document that is not in the repository (looked for ${[...new Set(candidates)].join(", ")})`,
            });
        }
    }
    return problems;
}

function format(ps: Problem[]): string {
    return ps.map((p) => `${p.file}:${p.line}: ${p.ref}: ${p.problem}`).join("\n");
}

/**
 * Strings no tracked file may contain: the private notes the project was built from. Assembled
 * from pieces so that this file does not contain them itself.
 */
const PRIVATE_NAMES = [
    ["spec", "mapping"],
    ["upstream", "facts"],
    ["real", "tools"],
].map((p) => `${p.join("-")}.md`);
const PRIVATE_PATHS = [["..", "shared"].join("/"), ["", "work", "shared"].join("/")];

describe("documentation links and named documents", () => {
    const files = docFiles(ROOT);
    const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), "utf8");
    const exists = (rel: string) => fs.existsSync(path.join(ROOT, rel)) && fs.statSync(path.join(ROOT, rel)).isFile();

    it("checks README.md, the user's guide and the docs that explain the specification, its names, upstream and the tools", () => {
        for (const f of [
            "README.md",
            "docs/guide/README.md",
            "docs/specification.md",
            "docs/proof/names.md",
            "docs/proof/upstream.md",
            "docs/proof/tools.md",
        ]) {
            expect(files, f).to.include(f);
        }
    });

    for (const f of files) {
        it(`${f}: every relative link, #anchor and named .md document exists`, () => {
            const problems = checkDoc(f, read, exists);
            expect(problems, format(problems)).to.deep.equal([]);
        });
    }

    it("the README is a front door of fewer than 350 lines (tiers and timings live in docs/proof/testing.md, deviations in docs/specification.md)", () => {
        const lines = read("README.md").split("\n").length - 1;
        expect(lines).to.be.below(350);
        expect(read("README.md")).to.match(/^# mesh-ratelimit\n[\s\S]*?\n## Try it offline\n/);
        expect(read("docs/specification.md")).to.include("## Where the stack departs from the text");
        expect(read("docs/proof/testing.md")).to.include("| tier | what it shows |");
    });

    it("the README links the user's guide and the proof folder's index, and every page in docs/ is reachable from it by links", () => {
        const linked = new Set(linkTargets(read("README.md")).map((l) => path.posix.normalize(l.target.split("#")[0])));
        expect([...linked]).to.include.members(["docs/guide/README.md", "docs/proof/README.md"]);
        const seen = reachable("README.md", read, exists);
        const missing = files.filter((f) => !seen.has(f));
        expect(missing, `not reachable from README.md: ${missing.join(", ")}`).to.deep.equal([]);
    });

    it("no tracked file refers to the private notes or the shared folder outside the repository", () => {
        const hits: string[] = [];
        for (const f of trackedFiles(ROOT)) {
            const st = fs.statSync(path.join(ROOT, f));
            if (!st.isFile() || st.size > 5_000_000) continue;
            read(f)
                .split("\n")
                .forEach((line, i) => {
                    for (const s of [...PRIVATE_NAMES, ...PRIVATE_PATHS]) {
                        if (line.includes(s)) hits.push(`${f}:${i + 1}: ${s}`);
                    }
                });
        }
        expect(hits, hits.join("\n")).to.deep.equal([]);
    });
});

describe("the documentation checker itself", () => {
    const repo: Record<string, string> = {
        "README.md": "# Title\n\n## Section two: the (real) one\n\nSee [a](docs/a.md#part-b) and `docs/a.md`.\n",
        "docs/a.md": "# A\n\n## Part B\n\n## Part B\n\nBack to [the top](../README.md#section-two-the-real-one).\n",
    };
    const read = (rel: string) => repo[rel];
    const exists = (rel: string) => rel in repo;

    it("GitHub-style anchors: punctuation dropped, spaces to '-', duplicates numbered", () => {
        expect(slug("Where this deviates from the specification, and why")).to.equal("where-this-deviates-from-the-specification-and-why");
        expect(slug("Tool builds (`$CACHE/timings.log`)")).to.equal("tool-builds-cachetimingslog");
        expect(slug("2.6 Route-level action (variant A)")).to.equal("26-route-level-action-variant-a");
        expect([...anchors(repo["docs/a.md"])]).to.deep.equal(["a", "part-b", "part-b-1"]);
    });

    it("accepts links, anchors and mentions that resolve", () => {
        expect(checkDoc("README.md", read, exists)).to.deep.equal([]);
        expect(checkDoc("docs/a.md", read, exists)).to.deep.equal([]);
    });

    it("reports a missing file, a missing anchor, a path outside the repository and a named document that is absent", () => {
        const broken: Record<string, string> = {
            ...repo,
            "README.md": [
                "[gone](docs/gone.md)",
                "[bad anchor](docs/a.md#part-c)",
                "[outside](../elsewhere/notes.md)",
                "Read `notes.md` first.",
                "External [ok](https://example.com/x.md), [`upstream/notes.md`](https://example.com/z.md) and `https://example.com/y.md` are not checked.",
                "```",
                "[in a fence](not/a/link.md)",
                "```",
            ].join("\n"),
        };
        const ps = checkDoc(
            "README.md",
            (r) => broken[r],
            (r) => r in broken,
        );
        expect(ps.map((p) => [p.line, p.ref])).to.deep.equal([
            [1, "docs/gone.md"],
            [2, "docs/a.md#part-c"],
            [3, "../elsewhere/notes.md"],
            [1, "docs/gone.md"],
            [3, "../elsewhere/notes.md"],
            [4, "notes.md"],
            [7, "not/a/link.md"],
        ]);
    });

    it("reachability follows links through folders; a page nothing links is not reached (negative control)", () => {
        const tree: Record<string, string> = {
            ...repo,
            "docs/a.md": "# A\n\nNext: [b](guide/b.md).\n",
            "docs/guide/b.md": "# B\n\nBack [up](../a.md), on to [c](../proof/c.md#x).\n",
            "docs/proof/c.md": "# C\n",
            "docs/proof/orphan.md": "# Orphan\n\nLinks [out](c.md) but nothing links it.\n",
        };
        const seen = reachable(
            "README.md",
            (r) => tree[r],
            (r) => r in tree,
        );
        expect([...seen].sort()).to.deep.equal(["README.md", "docs/a.md", "docs/guide/b.md", "docs/proof/c.md"]);
    });
});
