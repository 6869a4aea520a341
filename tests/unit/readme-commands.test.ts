/**
 * Every command README.md shows runs from a fresh clone: the repository's committed state is cloned
 * into an empty folder (the installed dependencies linked in, as `npm ci` would have put them), and
 * each offline command is run there and must exit 0. The commands that need a cluster, the Pulumi
 * CLI or the network are named with the reason they are not run here; a command in neither list
 * fails the test, so a new README command must be placed. The replay of the committed sample log
 * is checked against an independent oracle of its rule.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { expectedLoginRefusals, loginLog } from "./prove-login-log";

const ROOT = path.join(__dirname, "..", "..");

/** The command lines of the README's `sh` blocks, comments dropped. */
function readmeCommands(): string[] {
    const text = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const out: string[] = [];
    for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g))
        for (const line of block[1]!.split("\n")) {
            const cmd = line.replace(/\s+#.*$/, "").trim();
            if (cmd && !cmd.startsWith("#")) out.push(cmd);
        }
    return out;
}

/** Commands not run here, each with why. */
const NOT_RUN: [RegExp, string][] = [
    [/^npm ci$/, "installs the dependencies: the clone links the installed ones"],
    [/^npm test$/, "runs every tier, this one among them"],
    [/^npm run (tools|local:up|local:down)$/, "builds the real programs from the network, or starts a local cluster"],
    [/^(pulumi|kubectl|curl) /, "needs the Pulumi CLI and a cluster"],
];

/** The commands this test runs: offline, under a minute each. */
const RUN = /^npm (start|run (render|explain|mesh-ratelimit))( |$)/;

/** The sample log of examples/login-limit as the generator writes it (the oracle's input). */
const SAMPLE = loginLog(240, { seed: 46 });

describe("README.md: every command runs from a fresh clone", function () {
    this.timeout(600_000);
    let clone = "";

    before(() => {
        clone = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "readme-clone-")), "repo");
        const head = spawnSync("git", ["-C", ROOT, "rev-parse", "HEAD"], { encoding: "utf8" }).stdout.trim();
        for (const args of [
            ["clone", "-q", ROOT, clone],
            ["-C", clone, "checkout", "-q", head],
        ]) {
            const r = spawnSync("git", args, { encoding: "utf8" });
            if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
        }
        fs.symlinkSync(fs.realpathSync(path.join(ROOT, "node_modules")), path.join(clone, "node_modules"));
    });

    after(() => fs.rmSync(path.dirname(clone), { recursive: true, force: true }));

    it("each README command is either run here or named with why it is not", () => {
        const unplaced = readmeCommands().filter((c) => !RUN.test(c) && !NOT_RUN.some(([re]) => re.test(c)));
        expect(unplaced).to.deep.equal([]);
        expect(readmeCommands().filter((c) => RUN.test(c)).length).to.be.at.least(4);
    });

    it("the sample log is committed as the generator writes it (a fresh clone holds it)", () => {
        expect(fs.readFileSync(path.join(clone, "examples", "login-limit", "access.log"), "utf8")).to.equal(SAMPLE.text);
    });

    for (const cmd of readmeCommands().filter((c) => RUN.test(c)))
        it(`runs: ${cmd}`, () => {
            const r = spawnSync("sh", ["-c", cmd], { cwd: clone, encoding: "utf8", maxBuffer: 64 << 20 });
            expect(r.status, `${cmd}\n${(r.stdout + r.stderr).slice(-3000)}`).to.equal(0);
            if (/ replay .*access\.log$/.test(cmd)) {
                const oracle = expectedLoginRefusals(SAMPLE.lines);
                expect(r.stdout).to.include(`rule login: ${oracle.requests} requests, ${oracle.refused} refused`);
                expect(oracle.refused).to.be.above(0);
            }
        });
});
