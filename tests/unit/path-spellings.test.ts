/**
 * Every spelling of a limited path (issue 62's second part): the README's login rule (POST /login
 * at 5 a minute per client, examples/login-limit) through `mesh-ratelimit explain`'s typed API,
 * where a client that has used its five tries sends the same request under another spelling; the
 * same rule with `spellings: PathSpellings.Exact` as the negative control (those spellings get
 * through); the gateway model's path normalization under each of Istio's `pathNormalization`
 * settings, each expectation reasoned from Envoy's source (docs/security.md); and the matcher of
 * every spelling on the C++ RE2 library Envoy uses, against the JavaScript RE2 the model runs.
 *
 * The RE2 part needs g++ and libre2-dev (scripts/tools/install-debian.sh installs them).
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { explainProgram } from "../../prove/api";
import { formatExplanation } from "../../prove/format";
import { normalizePath } from "../../gateway-model/evaluate";
import { explainWith } from "../../gateway-model/explain";
import { bookinfoModel } from "./gateway-model-fixtures";
import { PathNormalization } from "../../gateway-model/model";
import { MAX_SPELLED_PATH, exactSpellingsRegex, prefixSpellingsRegex } from "../../builders/path-spellings";
import { compileFullMatch } from "../../lib/formats";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { LimitUnit, PathSpellings, RateLimitRuleArgs } from "../../builders/rule-args";
import { probe, re2FullMatch, re2ProgramSizes } from "../re2/probe";

const PROGRAM = path.join(__dirname, "..", "..", "examples", "login-limit");
const NOW = Date.UTC(2026, 11, 2, 1, 0, 5);

/** The spellings of /login, each reaching a login handler on some common backend. */
const SPELLINGS = [
    "/login/",
    "/LOGIN",
    "/Login",
    "/login;jsessionid=x",
    "//login",
    "/logi%6E",
    "/logi%6e",
    "/login%2e",
    "/login.",
    "/login.json",
    "/login//",
    "/LOGIN/;a=b",
];

/** A copy of the login program with the rule's path match replaced. */
function loginProgramWith(pathMatch: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "login-spellings-"));
    const entry = path.join(__dirname, "..", "..", "index");
    const src = fs.readFileSync(path.join(PROGRAM, "index.ts"), "utf8").replace('"../../index"', JSON.stringify(entry));
    fs.writeFileSync(path.join(dir, "index.ts"), src.replace('path: { exact: "/login" }', `path: ${pathMatch}`));
    fs.copyFileSync(path.join(PROGRAM, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
    return dir;
}

describe("path spellings: a limited path counts every spelling a backend routes to the same handler", function () {
    this.timeout(120_000);
    const post = (p: string) => ({ method: "POST", path: p, clientAddress: "203.0.113.7" });

    it("the README's login rule: after five POST /login, every other spelling of /login is refused too, on the same counter", async () => {
        const x = await explainProgram(PROGRAM, [...Array.from({ length: 5 }, () => post("/login")), ...SPELLINGS.map(post)], { nowMs: NOW });
        const d = x.decisions;
        expect(d.slice(0, 5).every((v) => v.allowed)).to.equal(true);
        SPELLINGS.forEach((p, i) => {
            const v = d[5 + i]!;
            expect(v.allowed, p).to.equal(false);
            expect(v.refusedBy, p).to.deep.include({ by: "service", rule: "login" });
            expect(v.descriptors[0]!.count, p).to.equal(6 + i);
        });
    });

    it("negative control: with spellings Exact the same spellings get through uncounted, and /login itself is still refused", async () => {
        const dir = loginProgramWith('{ exact: "/login", spellings: PathSpellings.Exact }');
        fs.writeFileSync(
            path.join(dir, "index.ts"),
            fs.readFileSync(path.join(dir, "index.ts"), "utf8").replace("{ GlobalRateLimit, LimitUnit }", "{ GlobalRateLimit, LimitUnit, PathSpellings }"),
        );
        const x = await explainProgram(dir, [...Array.from({ length: 5 }, () => post("/login")), ...SPELLINGS.map(post), post("/login")], { nowMs: NOW });
        const d = x.decisions;
        SPELLINGS.forEach((p, i) => {
            expect(d[5 + i]!.allowed, p).to.equal(true);
            expect(d[5 + i]!.descriptors, p).to.deep.equal([]);
        });
        expect(d.at(-1)!.allowed).to.equal(false);
        expect(d.at(-1)!.descriptors[0]!.count).to.equal(6);
    });

    it("explain's output says which normalization it assumes and which spellings a path rule counts", async () => {
        const x = await explainProgram(PROGRAM, [post("/LOGIN")], { nowMs: NOW });
        const text = formatExplanation(x);
        expect(text).to.contain("Paths: normalized as Istio's pathNormalization BASE does (assumed");
        expect(text).to.match(
            /path rule counts every spelling of its path: letter case, %XX escapes, repeated and trailing slashes, ;parameters, a \. suffix, unless its spellings is exact/,
        );
        expect(text).to.contain("descriptor rule=login, masked_remote_address=203.0.113.7/32 -> rule login");
    });

    it("other paths are not counted: /logout, /loginx, /x/login, /login/x, /log", async () => {
        const others = ["/logout", "/loginx", "/x/login", "/login/x", "/log", "/logi%6Ex"];
        const x = await explainProgram(PROGRAM, others.map(post), { nowMs: NOW });
        others.forEach((p, i) => expect(x.decisions[i]!.descriptors, p).to.deep.equal([]));
    });
});

describe("path spellings: the gateway model's normalization under each of Istio's pathNormalization settings", () => {
    // Reasoned from Envoy's source: Chromium's path canonicalizer copies a valid escape as it is
    // (only %2E is read as a dot), keeps case and `;`; merge_slashes; UNESCAPE_AND_FORWARD of %2F/%5C.
    const table: [string, Record<PathNormalization, string>][] = [
        ["/LOGIN", { NONE: "/LOGIN", BASE: "/LOGIN", MERGE_SLASHES: "/LOGIN", DECODE_AND_MERGE_SLASHES: "/LOGIN" }],
        ["/login/", { NONE: "/login/", BASE: "/login/", MERGE_SLASHES: "/login/", DECODE_AND_MERGE_SLASHES: "/login/" }],
        [
            "/login;jsessionid=x",
            { NONE: "/login;jsessionid=x", BASE: "/login;jsessionid=x", MERGE_SLASHES: "/login;jsessionid=x", DECODE_AND_MERGE_SLASHES: "/login;jsessionid=x" },
        ],
        ["//login", { NONE: "//login", BASE: "//login", MERGE_SLASHES: "/login", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["/login//", { NONE: "/login//", BASE: "/login//", MERGE_SLASHES: "/login/", DECODE_AND_MERGE_SLASHES: "/login/" }],
        ["/logi%6E", { NONE: "/logi%6E", BASE: "/logi%6E", MERGE_SLASHES: "/logi%6E", DECODE_AND_MERGE_SLASHES: "/logi%6E" }],
        ["/login%2e", { NONE: "/login%2e", BASE: "/login.", MERGE_SLASHES: "/login.", DECODE_AND_MERGE_SLASHES: "/login." }],
        ["/x/%2e%2e/login", { NONE: "/x/%2e%2e/login", BASE: "/login", MERGE_SLASHES: "/login", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["/x/..;a=b/login", { NONE: "/x/..;a=b/login", BASE: "/login", MERGE_SLASHES: "/login", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["/%2Flogin", { NONE: "/%2Flogin", BASE: "/%2Flogin", MERGE_SLASHES: "/%2Flogin", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["/x%2F..%2Flogin", { NONE: "/x%2F..%2Flogin", BASE: "/x%2F..%2Flogin", MERGE_SLASHES: "/x%2F..%2Flogin", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["/x%5C..%5Clogin", { NONE: "/x%5C..%5Clogin", BASE: "/x%5C..%5Clogin", MERGE_SLASHES: "/x%5C..%5Clogin", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["\\login", { NONE: "\\login", BASE: "/login", MERGE_SLASHES: "/login", DECODE_AND_MERGE_SLASHES: "/login" }],
        ["//login?a=//b", { NONE: "//login?a=//b", BASE: "//login?a=//b", MERGE_SLASHES: "/login?a=//b", DECODE_AND_MERGE_SLASHES: "/login?a=//b" }],
    ];
    for (const setting of ["NONE", "BASE", "MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"] as const) {
        it(`${setting}: each spelling as Envoy leaves it`, () => {
            for (const [input, want] of table) expect(normalizePath(input, setting), `${setting} ${input}`).to.equal(want[setting]);
        });
    }

    it("BASE is the default the model assumes (Istio's default)", () => {
        for (const [input, want] of table) expect(normalizePath(input), input).to.equal(want.BASE);
    });

    it("a model declaring MERGE_SLASHES routes //productpage to the exact route; the default BASE model answers 404 (the control)", () => {
        const merged = explainWith({ ...bookinfoModel(), pathNormalization: "MERGE_SLASHES" }, "//productpage");
        expect(merged.normalizedPath).to.equal("/productpage");
        expect(merged.route?.name).to.equal("pages");
        const base = explainWith(bookinfoModel(), "//productpage");
        expect(base.normalizedPath).to.equal("//productpage");
        expect(base.route).to.equal(undefined);
    });
});

describe("path spellings: the matcher of every spelling, on the C++ RE2 library Envoy uses and on the model's", function () {
    this.timeout(60_000);
    let bin: string;
    before(() => {
        bin = probe();
    });

    // Every spelling that survives any of the four settings, and paths that are not /login.
    const yes = [...SPELLINGS, "/login", "/login?x=1", "/%6C%6F%67%69%6E", "/LoGiN;a;b/", "/login%2E", "/login%2F", "/%2Flogin", "/login.;x", "/login/?a"];
    const no = [
        "/logout",
        "/loginx",
        "/logins",
        "/x/login",
        "/login/x",
        "/log",
        "/logi%6Ex",
        "/login%2Fx",
        "login",
        "/login#x",
        "/l%6Fgin2",
        "/lo%67in/%2e%2e",
    ];

    it("exact /login: C++ RE2 and the model match every spelling and no other path", () => {
        const regex = exactSpellingsRegex("/login");
        const model = compileFullMatch(regex);
        const cpp = re2FullMatch(
            bin,
            regex,
            [...yes, ...no].map((s) => Buffer.from(s)),
        );
        yes.forEach((p, i) => {
            expect(cpp[i], `C++ ${p}`).to.equal(true);
            expect(model.test(p), `model ${p}`).to.equal(true);
        });
        no.forEach((p, i) => {
            expect(cpp[yes.length + i], `C++ ${p}`).to.equal(false);
            expect(model.test(p), `model ${p}`).to.equal(false);
        });
    });

    it("prefix /api: its spellings and anything below them, not /apiv2", () => {
        const regex = prefixSpellingsRegex("/api");
        const cases: [string, boolean][] = [
            ["/api", true],
            ["/API/v1", true],
            ["//api//v1", true],
            ["/a%70i/x", true],
            ["/api;v=1/x", true],
            ["/api?x", true],
            ["/api.json", true],
            ["/apiv2", false],
            ["/ap", false],
            ["/x/api", false],
        ];
        const cpp = re2FullMatch(
            bin,
            regex,
            cases.map(([p]) => Buffer.from(p)),
        );
        const model = compileFullMatch(regex);
        cases.forEach(([p, want], i) => {
            expect(cpp[i], `C++ ${p}`).to.equal(want);
            expect(model.test(p), `model ${p}`).to.equal(want);
        });
    });

    it(`the longest path a rule takes (${MAX_SPELLED_PATH} characters) stays under Istio's RE2 program size limit of 32,768, whatever the characters`, () => {
        const longest = (unit: string) => `/${unit.repeat(Math.floor((MAX_SPELLED_PATH - 1) / unit.length))}`;
        const paths = [longest("a"), longest("."), longest("%41"), longest("a/"), longest("~"), longest("%C3")];
        const sizes = re2ProgramSizes(bin, [...paths.map(exactSpellingsRegex), ...paths.map(prefixSpellingsRegex)]);
        for (const s of sizes) {
            expect(s).to.be.greaterThan(0);
            expect(s).to.be.lessThan(32_768);
        }
    });
});

describe("path spellings: path.spellings refused where it cannot hold, before anything is built", () => {
    const rule = (path: object) => ({ name: "login", path, requestsPerUnit: 5, unit: LimitUnit.Minute }) as RateLimitRuleArgs;

    it("with regex, an unknown value, or an exact path over 1,024 characters with every spelling: one problem each, with its field and fix", () => {
        const problems = (path: object) => compileGlobalLimits({ rules: [rule(path)] }).problems.map((p) => [p.key, p.problem, p.fix]);
        expect(problems({ regex: "/login", spellings: PathSpellings.Exact })).to.deep.equal([
            [
                "rules[0].path.spellings",
                "applies to exact and prefix only: a regex is matched as written",
                "remove spellings, and write the spellings the regex should count into it (e.g. [lL][oO][gG][iI][nN] for letter case)",
            ],
        ]);
        const bad = problems({ exact: "/login", spellings: "any" });
        expect(bad.map(([k]) => k)).to.deep.equal(["rules[0].path.spellings"]);
        expect(bad[0]![1]).to.match(/equivalent.*exact/);
        const long = `/${"a".repeat(MAX_SPELLED_PATH)}`;
        expect(problems({ exact: long }).map(([k, p]) => [k, p])).to.deep.equal([
            [
                "rules[0].path.exact",
                "is longer than 1024 characters: the matcher of all its spellings would near the RE2 program size the gateway's Envoy accepts",
            ],
        ]);
    });

    it("negative controls: the same paths are taken with exact or prefix, and the long one with spellings Exact", () => {
        for (const path of [
            { exact: "/login", spellings: PathSpellings.Exact },
            { prefix: "/api", spellings: PathSpellings.Equivalent },
            { regex: "/login" },
            { exact: `/${"a".repeat(MAX_SPELLED_PATH)}`, spellings: PathSpellings.Exact },
            { exact: `/${"a".repeat(MAX_SPELLED_PATH - 1)}` },
        ])
            expect(compileGlobalLimits({ rules: [rule(path)] }).problems, JSON.stringify(path).slice(0, 60)).to.deep.equal([]);
    });
});
