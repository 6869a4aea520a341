/**
 * The render and explain commands explain themselves: `--help` describes every flag they take
 * (one line each, with an example that parses) and exits 0; `--stack NAME` reads Pulumi.NAME.yaml;
 * the config's sources are printed to stderr, in the order they apply.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { configSources, parseCli, UsageError } from "../../render/args";
import { EXPLAIN_FLAGS, helpText, RENDER_FLAGS, SHARED_FLAGS } from "../../render/cli-help";
import { parseArgs } from "../../render/cli";
import { parseExplainArgs } from "../../render/stack-explain";
import { programConfig } from "../../render/render";

const ROOT = path.join(__dirname, "..", "..");
const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
const run = (script: string, args: string[]) => spawnSync(tsx, [path.join(ROOT, "render", script), ...args], { cwd: ROOT, encoding: "utf8" });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-cli-help-"));

/** The flags a usage line names (`[--variant A|B]` → `--variant`). */
const usageFlags = (text: string) => [...new Set([...text.matchAll(/\[(--[a-z-]+)/g)].map((m) => m[1]))];

/** What a help text lacks: each flag of its usage line without exactly one line ending in an example, and lines for flags the usage does not name. */
function helpGaps(help: string): string[] {
    const usage = help.split("\n").find((l) => l.startsWith("usage:"))!;
    const named = [...usageFlags(usage), "--help"];
    const lines = help.split("\n").filter((l) => /^ {2}--/.test(l));
    const gaps = named.filter((f) => lines.filter((l) => l.trim().split(" ")[0] === f && /\(e\.g\. .+\)$/.test(l)).length !== 1);
    return [
        ...gaps,
        ...lines
            .map((l) => l.trim().split(" ")[0])
            .filter((f) => !named.includes(f))
            .map((f) => `${f} (not in the usage)`),
    ];
}

/** The usage error of `fn` (it must throw one). */
function usageError(fn: () => unknown): string {
    try {
        fn();
    } catch (e) {
        expect(e).to.be.instanceOf(UsageError);
        return (e as Error).message;
    }
    throw new Error("accepted");
}

describe("the CLIs explain themselves (render/cli-help.ts, render/args.ts)", function () {
    this.timeout(120_000);
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    for (const [script, flags, parse] of [
        ["cli.ts", RENDER_FLAGS, (argv: string[]) => parseArgs(argv)],
        ["explain-cli.ts", EXPLAIN_FLAGS, (argv: string[]) => parseExplainArgs([...argv, "/productpage"])],
    ] as const) {
        it(`${script} --help: exits 0 and gives every flag of its usage one line with an example`, () => {
            const r = run(script, ["--help"]);
            expect(r.status, r.stderr).to.equal(0);
            expect(usageFlags(r.stdout).length).to.be.greaterThan(6);
            expect(helpGaps(r.stdout)).to.deep.equal([]);
            // Negative control: the same help without one flag's line, or with one flag too many.
            const without = r.stdout.replace(/^ {2}--config .*\n/m, "");
            expect(helpGaps(without)).to.deep.equal(["--config"]);
            expect(helpGaps(`${r.stdout}  --bogus X  a flag it lacks (e.g. --bogus 1)\n`)).to.deep.equal(["--bogus (not in the usage)"]);
        });

        it(`${script}: each flag's example parses as written (the help never shows what the parser refuses)`, () => {
            for (const f of [...flags, ...SHARED_FLAGS]) {
                if (f.flag === "--help" || f.flag === "--stack" || f.flag === "--config") continue;
                const argv = f.example.match(/"[^"]*"|\S+/g)!.map((t) => t.replace(/^"|"$/g, ""));
                expect(() => parse(argv), f.example).not.to.throw();
            }
        });
    }

    it("a usage error still exits 2 and ends with the usage line, --help or not", () => {
        for (const script of ["cli.ts", "explain-cli.ts"]) {
            const r = run(script, ["--no-such-flag"]);
            expect(r.status, script).to.equal(2);
            expect(r.stderr, script).to.match(/unknown argument '--no-such-flag'[^\n]*\nusage: (npm run|mesh-ratelimit explain) /);
            expect(r.stdout, script).not.to.contain("flags:");
        }
    });

    it("the help text lists the command's own flags first, then the shared ones, and ends with --help", () => {
        const text = helpText("About.", "usage: x", [{ flag: "--one", value: "V", text: "one thing", example: "--one 1" }]);
        const flagLines = text.split("\n").filter((l) => l.startsWith("  --"));
        expect(flagLines[0]).to.match(/^ {2}--one V +one thing \(e\.g\. --one 1\)$/);
        expect(flagLines.at(-1)).to.match(/^ {2}--help +prints this help/);
        expect(flagLines).to.have.length(1 + SHARED_FLAGS.length);
    });

    describe("--stack NAME reads Pulumi.NAME.yaml", () => {
        const stackDir = path.join(dir, "program");
        fs.mkdirSync(stackDir);
        const write = (name: string, config: Record<string, unknown>) => fs.writeFileSync(path.join(stackDir, `Pulumi.${name}.yaml`), stringify({ config }));
        write("team", {
            "mesh-ratelimit:variant": "B",
            "mesh-ratelimit:catchAllLimit": 50,
            "mesh-ratelimit:gatewayHosts": ["a.example", "b.example"],
            "kubernetes:context": "prod-cluster",
        });
        write("secretive", { "mesh-ratelimit:catchAllLimit": 50, "mesh-ratelimit:redisPassword": { secure: "AAAB" } });
        const parse = (argv: string[]) => parseCli(argv, { usage: "usage: u", programDir: stackDir });

        it("its keys become the base config, under the flags; another project's keys (the CLI's own) are left to it", () => {
            const a = parse(["--stack", "team", "--set", "catchAllLimit=60"]);
            expect(a.stack).to.equal("team");
            expect(a.base).to.deep.equal({ variant: "B", catchAllLimit: "50", gatewayHosts: "a.example,b.example" });
            const config = programConfig({ base: a.base, overrides: a.overrides });
            expect(config["mesh-ratelimit:variant"]).to.equal("B");
            expect(config["mesh-ratelimit:catchAllLimit"]).to.equal("60");
            // Negative control: without --stack the dev stack's file is the base (variant A).
            expect(programConfig({ overrides: {} })["mesh-ratelimit:variant"]).to.equal("A");
        });

        it("a missing file: the error names the file, the folder, the stack files there and the fix", () => {
            const m = usageError(() => parse(["--stack", "prod"]));
            expect(m).to.contain(`--stack prod: there is no stack config file Pulumi.prod.yaml in ${stackDir}`);
            expect(m).to.contain("stack files here: Pulumi.secretive.yaml, Pulumi.team.yaml");
            expect(m).to.contain("pulumi stack init prod");
            expect(usageError(() => parse(["--stack", "../x"]))).to.contain("--stack needs a stack name");
        });

        it("a secret in it needs a stand-in (offline nothing decrypts it); a --set anywhere on the line gives one", () => {
            expect(usageError(() => parse(["--stack", "secretive"]))).to.contain(
                "--stack secretive: mesh-ratelimit:redisPassword is a secret, which the offline render cannot decrypt: give a stand-in with --set redisPassword=...",
            );
            expect(parse(["--set", "redisPassword=stand-in", "--stack", "secretive"]).base).to.deep.equal({ catchAllLimit: "50" });
        });

        it("the render, run for real: a missing stack file exits 2 naming the file, and writes nothing", () => {
            const missing = run("cli.ts", ["--stack", "nosuchstack", "--out", path.join(dir, "never")]);
            expect(missing.status).to.equal(2);
            expect(missing.stderr).to.contain("Pulumi.nosuchstack.yaml");
            expect(fs.existsSync(path.join(dir, "never"))).to.equal(false);
        });
    });

    describe("where the config came from, printed to stderr in the order it applies", () => {
        it("Pulumi.yaml's defaults, the stack's file, then --config files, --set keys and flags as typed", () => {
            const f = path.join(dir, "team.yaml");
            fs.writeFileSync(f, stringify({ config: { "mesh-ratelimit:catchAllLimit": 50 } }));
            expect(configSources(parseCli([], { usage: "u" }))).to.equal("config: Pulumi.yaml defaults, then Pulumi.dev.yaml");
            expect(configSources(parseCli(["--set", "unit=hour", "--config", f, "--variant", "B"], { usage: "u" }))).to.equal(
                `config: Pulumi.yaml defaults, then Pulumi.dev.yaml, then --set unit, then ${f}, then --variant`,
            );
        });

        it("explain, run for real, prints them to stderr and keeps stdout for the answer (--json stays JSON)", () => {
            const f = path.join(dir, "limits.yaml");
            fs.writeFileSync(f, stringify({ config: { "mesh-ratelimit:managedApi": false } }));
            const r = run("explain-cli.ts", ["--config", f, "--json", "/productpage"]);
            expect(r.status, r.stderr).to.equal(0);
            expect(r.stderr).to.contain(`config: Pulumi.yaml defaults, then Pulumi.dev.yaml, then ${f}\n`);
            expect(JSON.parse(r.stdout)[0].path).to.equal("/productpage");
        });
    });
});
