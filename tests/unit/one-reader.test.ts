/**
 * One reader of rendered configuration and one window calculation, checked on the code itself:
 * prove/ (the `mesh-ratelimit` command's simulation and replay) reads no rendered Envoy or Istio
 * field and parses no duration, token bucket or upstream name on its own, it asks gateway-model/;
 * no file of gateway-model/, program/ or prove/ walks an EnvoyFilter's patches, spells a field
 * both ways or parses the service's config.yaml itself, builders/rendered-config.ts does, into
 * the writer's types; and only gateway-model/fixed-window.ts rounds a time down to a window. Each
 * scan has a negative control: the forms it looks for, written as the code wrote them before, are found.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { fixedWindowStart, windowStartOfUnit } from "../../gateway-model/fixed-window";
import { field, patchesOf, rateLimitFilterOf, readServiceConfig } from "../../builders/rendered-config";
import { RateLimitServiceConfig, configYaml } from "../../builders/ratelimit-config";

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

/** The one reader (builders/rendered-config.ts), the only file these scans allow to parse rendered objects. */
const READER = "builders/rendered-config.ts";

/**
 * A parser of rendered configuration of its own: a walk over an EnvoyFilter's `configPatches`, the
 * raw parts of a patch read by path (`match.listener`, `patch.value`, ...), a spelling converter
 * (camelCase ⇄ snake_case), or the service's `config.yaml` read off a ConfigMap.
 */
const OWN_PARSER: RegExp[] = [
    /spec\??\.configPatches|\.configPatches\s*\?\?/,
    /\b(match|patch)\??\.(listener|routeConfiguration|route_configuration|context|value|operation)\b/,
    /\.replace\(\s*\/(_\(\[a-z\]\)|\[A-Z\])\/g/,
    /\.data\??\.?\[\s*("config\.yaml"|'config\.yaml'|CONFIG_FILE_KEY)\s*\]/,
];

/** A line reading one field under both of its spellings (`x.typed_config ?? x.typedConfig`): a second spelling reader. */
function readsBothSpellings(line: string): boolean {
    const accessed = new Set([...line.matchAll(/\??\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
    const snake = [...accessed].filter((k) => /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(k));
    return snake.some((k) => accessed.has(k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())));
}

/** `file:line: text` of every line of `files` that parses rendered configuration itself (comments skipped). */
function ownParsers(files: string[]): string[] {
    const out: string[] = [];
    for (const f of files)
        fs.readFileSync(path.join(ROOT, f), "utf8")
            .split("\n")
            .forEach((line, i) => {
                if (/^\s*(\*|\/\/|\/\*\*)/.test(line)) return;
                if (matches(line, OWN_PARSER) || readsBothSpellings(line)) out.push(`${f}:${i + 1}: ${line.trim()}`);
            });
    return out;
}

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

describe("one reader of EnvoyFilter patches and the service's config.yaml (builders/rendered-config.ts)", () => {
    const readers = ["gateway-model", "program", "prove"].flatMap(filesUnder);

    it("no file of gateway-model/, program/ or prove/ walks patches, spells a field both ways or parses config.yaml itself", () => {
        expect(readers.length).to.be.greaterThan(40);
        expect(ownParsers(readers)).to.deep.equal([]);
    });

    it("control: the scan finds the parsers gateway-model/ and program/ had before, and the reader itself", () => {
        for (const line of [
            "for (const p of f.spec?.configPatches ?? []) {",
            "const patches: any[] = f.spec?.configPatches ?? [];",
            "const port = p.match?.listener?.portNumber;",
            "const value = p.patch?.value ?? {};",
            "const vhMatch = p.match?.routeConfiguration?.vhost;",
            "const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());",
            "return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));",
            'const config = parse(cm.data["config.yaml"]);',
            "const text = o.data?.[CONFIG_FILE_KEY];",
        ])
            expect(matches(line, OWN_PARSER), line).to.equal(true);
        for (const line of [
            "const tc = value?.typed_config ?? value?.typedConfig;",
            "const vhs = routeConfiguration?.virtualHosts ?? routeConfiguration?.virtual_hosts ?? [];",
        ])
            expect(readsBothSpellings(line), line).to.equal(true);
        for (const line of [
            "for (const p of patchesOf(f)) {",
            'const per = field(q.typedPerFilterConfig[name], "rate_limits");',
            "if (p.rateLimits) s.rateLimits.push(...p.rateLimits);",
        ])
            expect(matches(line, OWN_PARSER) || readsBothSpellings(line), line).to.equal(false);
        expect(ownParsers([READER]).length).to.be.greaterThan(3);
    });

    it("a field written in both spellings reads as Istio's decoder takes it, the lowerCamelCase one (control: either alone reads as written)", () => {
        expect(field({ typed_config: "snake", typedConfig: "camel" }, "typed_config")).to.equal("camel");
        expect(field({ typed_config: "snake" }, "typed_config")).to.equal("snake");
        expect(field({ typedConfig: "camel" }, "typed_config")).to.equal("camel");
        expect(field({ typed_config: false, typedConfig: undefined }, "typed_config")).to.equal(false);
    });

    it("reads a patch the same in either spelling (control: a patch for another port reads another port)", () => {
        const snake = {
            metadata: { name: "f" },
            spec: {
                configPatches: [
                    {
                        apply_to: "HTTP_FILTER",
                        match: { context: "GATEWAY", listener: { port_number: 8080, filter_chain: { filter: { sub_filter: { name: "r" } } } } },
                        patch: {
                            operation: "INSERT_BEFORE",
                            value: {
                                name: "envoy.filters.http.ratelimit",
                                typed_config: { domain: "d", stage: 3, failure_mode_deny: true, enable_x_ratelimit_headers: "DRAFT_VERSION_03" },
                            },
                        },
                    },
                ],
            },
        };
        const camel = {
            metadata: { name: "f" },
            spec: {
                configPatches: [
                    {
                        applyTo: "HTTP_FILTER",
                        match: { context: "GATEWAY", listener: { portNumber: 8080, filterChain: { filter: { subFilter: { name: "r" } } } } },
                        patch: {
                            operation: "INSERT_BEFORE",
                            value: {
                                name: "envoy.filters.http.ratelimit",
                                typedConfig: { domain: "d", stage: 3, failureModeDeny: true, enableXRatelimitHeaders: 1 },
                            },
                        },
                    },
                ],
            },
        };
        const read = (f: any) => patchesOf(f).map((p) => ({ port: p.port, subFilter: p.subFilter, filter: rateLimitFilterOf(p) }));
        expect(read(camel)).to.deep.equal(read(snake));
        expect(read(snake)[0]).to.deep.include({ port: 8080, subFilter: "r" });
        expect(read(snake)[0]!.filter).to.deep.include({ domain: "d", stage: 3, failureModeDeny: true, rateLimitHeaders: true });
        const other = {
            ...camel,
            spec: { configPatches: [{ ...camel.spec.configPatches[0], match: { context: "GATEWAY", listener: { portNumber: 9090 } } }] },
        };
        expect(read(other)[0]!.port).to.equal(9090);
    });

    it("reads config.yaml back into the writer's type; a field the writer does not write is refused, naming it", () => {
        const written: RateLimitServiceConfig = {
            domain: "d",
            descriptors: [
                {
                    key: "rule",
                    value: "a",
                    rate_limit: { unit: "minute", requests_per_unit: 5 },
                    descriptors: [{ key: "client", shadow_mode: true, detailed_metric: true }],
                },
            ],
        };
        expect(readServiceConfig(configYaml(written.domain, written.descriptors), "here")).to.deep.equal(written);
        expect(() => readServiceConfig("domain: d\ndescriptors:\n  - key: k\n    value_to_metric: true\n", "ConfigMap x")).to.throw(
            "ConfigMap x descriptors[0] (key k) has value_to_metric, which the model does not read",
        );
        expect(() => readServiceConfig("descriptors: []\n", "ConfigMap x")).to.throw("ConfigMap x has no domain");
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
