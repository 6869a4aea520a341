/**
 * One explain command: `mesh-ratelimit explain` with `--program` explains a user's program; in this
 * repository, without `--program`, it explains the repository's own stack from its render
 * (`--stack NAME` reads Pulumi.NAME.yaml), and `npm run explain` is an alias of that very command.
 * Checked by running the entry points as the scripts of package.json run them.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

const ROOT = path.join(__dirname, "..", "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const run = (script: string, args: string[]) => spawnSync(TSX, [path.join(ROOT, script), ...args], { cwd: ROOT, encoding: "utf8" });
const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts as Record<string, string>;

describe("one explain command (render/mesh-ratelimit-cli.ts, render/explain-cli.ts)", function () {
    this.timeout(240_000);

    it("package.json's explain and mesh-ratelimit scripts run the alias and the repository's command", () => {
        expect(scripts.explain).to.equal("tsx render/explain-cli.ts");
        expect(scripts["mesh-ratelimit"]).to.equal("tsx render/mesh-ratelimit-cli.ts");
    });

    it("mesh-ratelimit explain --stack dev and npm run explain print the same answer for the same requests", () => {
        const viaCommand = run("render/mesh-ratelimit-cli.ts", ["explain", "--stack", "dev", "--json", "/productpage", "/api/v1/products/7"]);
        const viaAlias = run("render/explain-cli.ts", ["--json", "/productpage", "/api/v1/products/7"]);
        expect(viaCommand.status, viaCommand.stderr).to.equal(0);
        expect(viaAlias.status, viaAlias.stderr).to.equal(0);
        const answer = JSON.parse(viaCommand.stdout);
        expect(JSON.parse(viaAlias.stdout)).to.deep.equal(answer);
        // The answer is the stack's: the spec's 1-a-minute limit on /productpage (Pulumi.dev.yaml keeps it).
        expect(answer.map((x: { path: string }) => x.path)).to.deep.equal(["/productpage", "/api/v1/products/7"]);
        expect(answer[0].limited).to.equal(true);
        expect(
            answer[0].descriptors.some((d: { limit?: { requests: number; unit: string } }) => d.limit?.requests === 1 && d.limit.unit === "minute"),
        ).to.equal(true);
    });

    it("--stack changes the answer: a config laid over it reaches the explanation (control: not a fixed text)", () => {
        const other = run("render/mesh-ratelimit-cli.ts", ["explain", "--stack", "dev", "--set", "limitedPathLimit=7", "--json", "/productpage"]);
        expect(other.status, other.stderr).to.equal(0);
        const limits = JSON.parse(other.stdout)[0].descriptors.map((d: { limit?: { requests: number } }) => d.limit?.requests);
        expect(limits).to.include(7);
        expect(limits).not.to.include(1);
    });

    it("with --program it is the package's command for a user's program, whatever the entry", () => {
        const r = run("render/mesh-ratelimit-cli.ts", ["explain", "--program", "examples/login-limit", "--method", "POST", "/login"]);
        expect(r.status, r.stderr).to.equal(0);
        expect(r.stdout).to.contain("Model of the program");
    });

    it("the installed package's command knows no stack of its own: without --program it says what is missing (exit 2)", () => {
        const r = run("prove/cli.ts", ["explain", "--stack", "dev", "/productpage"]);
        expect(r.status, r.stderr).to.equal(2);
        expect(r.stderr).to.contain("--program <dir> is required");
    });
});
