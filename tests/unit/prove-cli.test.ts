/**
 * `mesh-ratelimit` as a subprocess, as a CI job runs it: all of its output reaches a pipe, through a
 * slow reader and through one that closes early; every exit status of the help's table, each on the
 * input that should give it; the gates judge the program being proposed. Negative controls: a
 * process that exits right after writing loses output through the same slow reader, and one without
 * an error handler dies with a stack trace when its reader closes early.
 */
import { expect } from "chai";
import { spawn, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EXIT, HELP } from "../../prove/cli-args";
import { loginLog } from "./prove-login-log";

const ROOT = path.join(__dirname, "..", "..");
const CLI = path.join(ROOT, "prove", "cli.ts");
const PROGRAM = path.join(ROOT, "examples", "login-limit");
const OFF = path.join(__dirname, "fixtures", "login-program-off");
const NODE = [process.execPath, "-r", "tsx/cjs"];

interface Run {
    code: number | null;
    stdout: Buffer;
    stderr: string;
}

/** Runs a script; reads its standard output slowly (a pause after each chunk), or closes it after `closeAfter` bytes. */
function runPiped(args: string[], opts: { pauseMs?: number; closeAfter?: number }): Promise<Run> {
    return new Promise((resolve) => {
        const p = spawn(NODE[0]!, [...NODE.slice(1), ...args], { cwd: ROOT });
        const chunks: Buffer[] = [];
        let got = 0;
        let stderr = "";
        p.stderr.on("data", (d) => (stderr += d));
        p.stdout.on("data", (d: Buffer) => {
            chunks.push(d);
            got += d.length;
            if (opts.closeAfter !== undefined && got >= opts.closeAfter) p.stdout.destroy();
            else if (opts.pauseMs) {
                p.stdout.pause();
                setTimeout(() => p.stdout.resume(), opts.pauseMs);
            }
        });
        p.on("close", (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
    });
}

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync(NODE[0]!, [...NODE.slice(1), CLI, ...args], { cwd: ROOT, encoding: "utf8", maxBuffer: 256 << 20 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "prove-cli-"));
const tmp = (name: string, content: string | Buffer) => {
    const f = path.join(TMP, name);
    fs.writeFileSync(f, content);
    return f;
};

/** A script writing `bytes` bytes as the CLI does (lib/process-output.ts), or with a bare write and exit (the control). */
function writer(bytes: number, how: "emit" | "exit-after-write" | "no-handler"): string {
    const body =
        how === "emit"
            ? `const o = require(${JSON.stringify(path.join(ROOT, "lib", "process-output.ts"))}); o.emit(big); o.finish(0);`
            : how === "exit-after-write"
              ? "process.stdout.write(big); process.exit(0);"
              : "process.stdout.write(big);";
    return tmp(`writer-${how}.ts`, `const big = ("x".repeat(99) + "\\n").repeat(${bytes / 100});\n${body}\n`);
}

const TEN_MB = 10_000_000;

describe("mesh-ratelimit as a subprocess: output through pipes", function () {
    this.timeout(240_000);

    it("10 MB reach a slow reader whole, exit 0; the control (process.exit right after writing) loses output", async () => {
        const ok = await runPiped([writer(TEN_MB, "emit")], { pauseMs: 5 });
        expect(ok.code).to.equal(0);
        expect(ok.stdout.length).to.equal(TEN_MB);
        const cut = await runPiped([writer(TEN_MB, "exit-after-write")], { pauseMs: 5 });
        expect(cut.stdout.length).to.be.below(TEN_MB);
    });

    it("a reader that closes early: no stack trace, the command's own status; the control without a handler crashes", async () => {
        const ok = await runPiped([writer(TEN_MB, "emit")], { closeAfter: 1 });
        expect(ok.code).to.equal(0);
        expect(ok.stderr).to.equal("");
        const crash = await runPiped([writer(TEN_MB, "no-handler")], { closeAfter: 1 });
        expect(crash.code).to.not.equal(0);
        expect(crash.stderr).to.match(/EPIPE/);
    });

    it("explain --json of 6,000 requests (over 10 MB) reaches a slow reader whole and parses; closed early, it exits 0 quietly", async () => {
        const paths = Array.from({ length: 6000 }, (_, i) => `/login?n=${i}`);
        const args = [CLI, "explain", "--program", PROGRAM, "--method", "POST", "--json", ...paths];
        const slow = await runPiped(args, { pauseMs: 2 });
        expect(slow.code, slow.stderr).to.equal(0);
        expect(slow.stdout.length).to.be.above(TEN_MB);
        const x = JSON.parse(slow.stdout.toString("utf8"));
        expect(x.decisions).to.have.length(6000);
        expect(x.decisions.filter((d: { allowed: boolean }) => !d.allowed)).to.have.length(5995);
        const early = await runPiped(args, { closeAfter: 1000 });
        expect(early.code).to.equal(0);
        expect(early.stderr).to.not.match(/\n\s+at /);
    });

    it("replay --json through a slow reader is whole, valid JSON", async () => {
        const log = tmp("pipe.log", loginLog(3000, { seed: 3 }).text);
        const r = await runPiped([CLI, "replay", "--program", PROGRAM, "--json", log], { pauseMs: 2 });
        expect(r.code, r.stderr).to.equal(0);
        expect(JSON.parse(r.stdout.toString("utf8")).requests).to.equal(3000);
    });
});

describe("mesh-ratelimit as a subprocess: exit statuses", function () {
    this.timeout(240_000);
    const log = tmp("access.log", loginLog(400, { seed: 5 }).text);

    it("the help prints the exit status table; --version the package's version", () => {
        for (const topic of ["main", "explain", "replay"] as const)
            for (const s of Object.values(EXIT)) expect(HELP[topic]).to.match(new RegExp(`\\n  ${s}  \\S`));
        const v = cli("--version");
        expect(v.code).to.equal(0);
        expect(v.stdout.trim()).to.equal(JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
    });

    it("usage errors exit 2: an empty threshold is not 0 %, a gate given twice differently, --max-new-refusals without --compare", () => {
        for (const [args, why] of [
            [["--max-refused", ""], /--max-refused was given an empty value/],
            [["--max-refused", "abc"], /--max-refused takes a percentage/],
            [["--max-refused", "1", "--max-refused", "2"], /given 2 different values/],
            [["--max-new-refusals", "0"], /give --compare <dir> too/],
        ] as [string[], RegExp][]) {
            const r = cli("replay", "--program", PROGRAM, ...args, log);
            expect(r.code, args.join(" ")).to.equal(EXIT.usage);
            expect(r.stderr).to.match(why);
        }
    });

    it("a missing program exits 1", () => {
        const r = cli("replay", "--program", path.join(TMP, "nowhere"), log);
        expect(r.code).to.equal(EXIT.program);
        expect(r.stderr).to.match(/no such folder/);
    });

    it("an unreadable log exits 4 naming why: missing, a folder, empty, binary, no line in a known format", () => {
        const cases: [string, RegExp][] = [
            [path.join(TMP, "missing.log"), /does not exist: give the path of a log file/],
            [TMP, /is a folder: give the log file inside it/],
            [tmp("empty.log", ""), /no request read from the access log .*: it is empty/],
            [tmp("blank.log", "\n  \n"), /it is empty \(2 blank lines\)/],
            [
                tmp("binary.log", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 10, 0, 0, 0])),
                /all 2 of its non-blank lines are bad \(line 1: the line holds a NUL byte/,
            ],
            [tmp("other.log", "hello\nworld\n"), /all 2 of its non-blank lines are bad \(line 1: neither a text access log line/],
        ];
        for (const [file, why] of cases) {
            const r = cli("replay", "--program", PROGRAM, "--max-refused", "100", file);
            expect(r.code, file).to.equal(EXIT.input);
            expect(r.stderr).to.match(why);
            expect(r.stderr).to.not.match(/\n\s+at /);
        }
    });

    it("--max-refused gates the program proposed with --compare, not the one deployed", () => {
        const on = JSON.parse(cli("replay", "--program", PROGRAM, "--json", log).stdout);
        expect(on.refusedPercent).to.be.above(1);
        const under = String(Math.floor(on.refusedPercent / 2));
        // Proposing the rule: the gate judges the proposal, which refuses more than the threshold.
        const propose = cli("replay", "--program", OFF, "--compare", PROGRAM, "--max-refused", under, log);
        expect(propose.code, propose.stderr).to.equal(EXIT.gate);
        expect(propose.stderr).to.match(/gate failed: the --compare program refuses [\d.]+ % of the requests, over --max-refused/);
        // Control: proposing the rule off passes the same gate (the deployed program, which refuses, is not judged).
        expect(cli("replay", "--program", PROGRAM, "--compare", OFF, "--max-refused", under, log).code).to.equal(EXIT.ok);
        expect(cli("replay", "--program", PROGRAM, "--max-refused", under, log).code).to.equal(EXIT.gate);
        expect(cli("replay", "--program", PROGRAM, "--max-refused", String(Math.ceil(on.refusedPercent)), log).code).to.equal(EXIT.ok);
    });

    it("--max-new-refusals gates the change: requests the deployed program allows and the proposed refuses", () => {
        const on = JSON.parse(cli("replay", "--program", PROGRAM, "--json", log).stdout);
        const more = cli("replay", "--program", OFF, "--compare", PROGRAM, "--max-new-refusals", String(on.refused - 1), log);
        expect(more.code).to.equal(EXIT.gate);
        expect(more.stderr).to.include(`refuses ${on.refused} requests the current one allows, over --max-new-refusals ${on.refused - 1}`);
        expect(cli("replay", "--program", OFF, "--compare", PROGRAM, "--max-new-refusals", String(on.refused), log).code).to.equal(EXIT.ok);
        expect(cli("replay", "--program", PROGRAM, "--compare", OFF, "--max-new-refusals", "0", log).code).to.equal(EXIT.ok);
    });
});
