/**
 * One reader of rendered configuration and one window calculation, checked on the code itself:
 * prove/ (the `mesh-ratelimit` command's simulation and replay) reads no rendered Envoy or Istio
 * field and parses no duration, token bucket or upstream name on its own, it asks gateway-model/;
 * and only gateway-model/fixed-window.ts rounds a time down to a window. Each scan has a negative
 * control: the forms it looks for, written as the code wrote them before, are found.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { fixedWindowStart, windowStartOfUnit } from "../../gateway-model/fixed-window";

const ROOT = path.join(__dirname, "..", "..");

/** Rendered-configuration reading: Envoy/Istio field names, protobuf durations, Istio cluster names. */
const READS_RENDERED: RegExp[] = [
    /\bfield\(/,
    /\b(token_bucket|fill_interval|max_tokens|tokens_per_fill|typed_config|port_number|apply_to|route_configuration|v4_prefix_mask_len|filter_enforced)\b/,
    /configPatches|workloadSelector/,
    /\\d\+\(\?:\\\.\\d\+\)\?\)s\$/,
    /outbound\\\|/,
];

/** A time rounded down to a window: `Math.floor(t / unit) * unit`, or `Math.floor(ms / 60_000)`-style window numbers. */
const WINDOW_MATH: RegExp[] = [
    /Math\.floor\(\s*[\w.]+(\(\))?(\s*\/\s*[\w.]+)+\s*\)\s*\*\s*\w/,
    /Math\.floor\(\s*[\w.]+(\(\))?\s*\/\s*(\(\s*\w+\s*\*\s*1000\s*\)|60_?000|WINDOW\w*)\s*\)/,
];

function filesUnder(dir: string): string[] {
    const out: string[] = [];
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) out.push(...filesUnder(rel));
        else if (e.name.endsWith(".ts")) out.push(rel);
    }
    return out;
}

/** `file:line: text` for every line matching one of `patterns` (comments skipped). */
function hits(files: string[], patterns: RegExp[]): string[] {
    const out: string[] = [];
    for (const f of files)
        fs.readFileSync(path.join(ROOT, f), "utf8")
            .split("\n")
            .forEach((line, i) => {
                if (/^\s*(\*|\/\/|\/\*\*)/.test(line)) return;
                if (patterns.some((p) => p.test(line))) out.push(`${f}:${i + 1}: ${line.trim()}`);
            });
    return out;
}

const matches = (line: string, patterns: RegExp[]) => patterns.some((p) => p.test(line));

describe("one reader of rendered configuration (gateway-model/), used by prove/", () => {
    it("no file of prove/ reads a rendered field, a duration, a token bucket or an upstream name itself", () => {
        expect(hits(filesUnder("prove"), READS_RENDERED)).to.deep.equal([]);
    });

    it("control: the scan finds the parsing prove/ used to do itself", () => {
        for (const line of [
            "const m = /^(\\d+(?:\\.\\d+)?)s$/.exec(String(d));",
            'fillSeconds: seconds(field(tb, "fill_interval")),',
            "const istio = /^outbound\\|(\\d+)\\|[^|]*\\|([^.]+)\\.([^.]+)(\\..*)?$/.exec(s);",
            "for (const p of f.spec?.configPatches ?? []) {",
            "return maskedActions(objects).every((a) => (a.v4_prefix_mask_len ?? 32) === 32);",
        ])
            expect(matches(line, READS_RENDERED), line).to.equal(true);
        expect(matches("const sim = new Simulator(objects);", READS_RENDERED)).to.equal(false);
    });

    it("gateway-model/ holds the readers prove/ uses (the scan is not empty there)", () => {
        expect(
            hits(["gateway-model/workload-buckets.ts", "gateway-model/filter-sites.ts", "gateway-model/pre-limit-model.ts"], READS_RENDERED).length,
        ).to.be.greaterThan(5);
    });
});

describe("one window calculation (gateway-model/fixed-window.ts)", () => {
    it("no other source, harness or test rounds a time down to a window", () => {
        const files = ["prove", "gateway-model", "builders", "render", "components", "mesh", "program", "lib", "tests"].flatMap(filesUnder);
        expect(
            hits(files, WINDOW_MATH).filter((h) => !h.startsWith("gateway-model/fixed-window.ts:") && !h.startsWith("tests/unit/one-reader.test.ts:")),
        ).to.deep.equal([]);
    });

    it("control: the scan finds the window calculations as they were written (the counter model, explain, the rls harness, two rls tests)", () => {
        for (const line of [
            "return Math.floor(nowSeconds / unitSeconds) * unitSeconds;",
            "return Math.floor(nowMs / 1000 / d) * d;",
            "return Math.floor(ms / (unitSeconds * 1000));",
            "return Math.floor(ms / 60_000);",
            "const windowOf = (ms: number) => Math.floor(ms / WINDOW_MS);",
            "const start = Math.floor(before / MONTH) * MONTH;",
            "const key = `bench_PATH_/static/asset-${i % 90}.js_${Math.floor(Date.now() / 60000) * 60}`;",
        ])
            expect(matches(line, WINDOW_MATH), line).to.equal(true);
        for (const line of ["const now = Math.floor(nowMs / 1000);", "return sorted[Math.floor((p / 100) * sorted.length)];"])
            expect(matches(line, WINDOW_MATH), line).to.equal(false);
    });

    it("a window starts on a whole multiple of its unit since the epoch, and the next starts one unit later", () => {
        // 2026-11-28T18:59:59.999Z and the millisecond after it, worked by hand from the date.
        const last = Date.UTC(2026, 10, 28, 18, 59, 59, 999);
        expect(fixedWindowStart(60, last)).to.equal(Date.UTC(2026, 10, 28, 18, 59) / 1000);
        expect(fixedWindowStart(60, last + 1)).to.equal(Date.UTC(2026, 10, 28, 19, 0) / 1000);
        expect(fixedWindowStart(3600, last)).to.equal(Date.UTC(2026, 10, 28, 18) / 1000);
        expect(fixedWindowStart(86_400, last)).to.equal(Date.UTC(2026, 10, 28) / 1000);
        expect(windowStartOfUnit("hour", last + 1)).to.equal(Date.UTC(2026, 10, 28, 19) / 1000);
    });

    it("refuses a window of no length and a unit with no fixed window, saying which", () => {
        expect(() => fixedWindowStart(0, 0)).to.throw("a fixed window needs a length of at least one second, got 0");
        expect(() => windowStartOfUnit("fortnight", 0)).to.throw("unit fortnight has no fixed window length in this model");
    });
});
