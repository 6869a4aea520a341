/**
 * The cases of "an answer before deploy that never lies" that prove-honest, prove-jwt and the
 * in-process platform tests do not run through the compiled command: a platform override counted
 * by its cost, a team's defaults switch the cluster would refuse, the access log refusing a
 * credential header, --header given again after a path, a log format naming the verified claim,
 * renderProgram's rejection (never an unhandled one) on a program whose output fails, and every
 * status the command returns in its help. Each with its control.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EXIT, HELP } from "../../prove/cli-args";
import { buildCompiledCli, compiledCli, COMPILED_CLI, ROOT } from "./compiled-cli";

const FIX = path.join(__dirname, "fixtures");
const LOGIN = path.join(ROOT, "examples", "login-limit");
const IDENTITY = path.join(FIX, "identity-program");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "prove-issue-cases-"));
const json = (s: string) => JSON.parse(s);
const allowed = (stdout: string) => json(stdout).decisions.map((d: any) => d.allowed);

describe("the issue's cases through the compiled command", function () {
    this.timeout(600_000);
    before(() => buildCompiledCli());

    it("a platform override counted by its cost: x-cost 40 three times, the third refused (control: without the header each counts 1, all allowed)", () => {
        const prog = path.join(FIX, "platform-cost-program");
        const send = (cost: string[]) =>
            compiledCli(["explain", "--program", prog, "--json", "--host", "shop.example.com", ...cost, ...Array(3).fill("/search")]);
        const costly = send(["--header", "x-cost=40"]);
        expect(costly.code, costly.stderr).to.equal(EXIT.ok);
        const d = json(costly.stdout).decisions;
        expect(d.map((x: any) => x.descriptors[0].count)).to.deep.equal([40, 80, 120]);
        expect(d.map((x: any) => x.allowed)).to.deep.equal([true, true, false]);
        expect(d[2].refusedBy).to.deep.include({ rule: "platform override search-ceiling", source: "platform override" });
        const plain = json(send([]).stdout).decisions;
        expect(plain.map((x: any) => x.descriptors[0].count)).to.deep.equal([1, 2, 3]);
        expect(plain.every((x: any) => x.allowed)).to.equal(true);
    });

    it("a team switching the defaults off on a host not assigned to it: exit 1, as the cluster would refuse it (control: two teams on their own hosts answer)", () => {
        for (const [fixture, says] of [
            ["platform-teams-listed", "assigns b.example.com to namespace team-b, not to team-a"],
            ["platform-unassigned", "assigns b.example.com to no one"],
        ]) {
            const r = compiledCli(["explain", "--program", path.join(FIX, fixture!), "--json", "--host", "b.example.com", "/"]);
            expect(r.code, fixture).to.equal(EXIT.program);
            expect(json(r.stdout).error.message).to.include("the cluster would refuse this program").and.include(says);
        }
        const two = compiledCli(["explain", "--program", path.join(FIX, "platform-two-teams"), "--json", "--host", "c.example.com", "/", "/", "/"]);
        expect(two.code, two.stderr).to.equal(EXIT.ok);
        expect(allowed(two.stdout), "the defaults (2 a minute) off on the team's own host").to.deep.equal([true, true, true]);
    });

    it("an access log listing authorization fails explain with the fix (control: accepted by name, the program answers)", () => {
        const prog = path.join(FIX, "access-log-secret");
        const refused = compiledCli(["explain", "--program", prog, "/login"]);
        expect(refused.code).to.equal(EXIT.program);
        expect(refused.stderr).to.include('accessLog.headers[0] = "authorization": carries a client\'s credentials');
        expect(refused.stderr).to.include('accept logging it with accessLog.acceptLoggedSecrets: ["authorization"]');
        const accepted = compiledCli([
            "explain",
            "--program",
            prog,
            "--set",
            "acceptAuthorization=true",
            "--method",
            "POST",
            "--json",
            ...Array(6).fill("/login"),
        ]);
        expect(accepted.code, accepted.stderr).to.equal(EXIT.ok);
        expect(allowed(accepted.stdout)).to.deep.equal([true, true, true, true, true, false]);
    });

    it("--header given again after a path replaces its values, and the text shows each request's (control: given twice before a path, sent twice)", () => {
        const args = [
            "explain",
            "--program",
            LOGIN,
            "--header",
            "x-a=1",
            "/login",
            "--header",
            "x-a=2",
            "/login",
            "--header",
            "x-a=3",
            "--header",
            "x-a=4",
            "/login",
        ];
        const r = compiledCli([...args, "--json"]);
        expect(r.code, r.stderr).to.equal(EXIT.ok);
        expect(json(r.stdout).decisions.map((d: any) => d.request.headers["x-a"])).to.deep.equal([["1"], ["2"], ["3", "4"]]);
        const text = compiledCli(args).stdout;
        expect(text.match(/^ {2}header x-a: .*$/gm)).to.deep.equal(["  header x-a: 1", "  header x-a: 2", "  header x-a: 3 | 4 (sent 2 times)"]);
    });

    it("--log-format naming the verified claim (%DYNAMIC_METADATA% of the JWT filter) counts the identity rule per sub (control: the format without it marks the rule unknown)", () => {
        const t0 = Date.UTC(2026, 11, 2, 9, 0, 5);
        const subs = ["alice", "alice", "alice", "alice", "alice", "bob", "bob"];
        const log = path.join(TMP, "claims.log");
        fs.writeFileSync(log, subs.map((s, i) => `${new Date(t0 + i * 1000).toISOString()} POST /orders 203.0.113.9:4000 ${s}`).join("\n") + "\n");
        const base = "%START_TIME% %REQ(:METHOD)% %REQ(:PATH)% %DOWNSTREAM_REMOTE_ADDRESS%";
        const withClaim = `${base} %DYNAMIC_METADATA(envoy.filters.http.jwt_authn:payload:sub)%`;
        const r = compiledCli(["replay", "--program", IDENTITY, "--json", "--refuse-approximate", "--log-format", withClaim, log]);
        expect(r.code, r.stderr).to.equal(EXIT.ok);
        // Oracle: 3 a minute per sub; alice sends 5 (2 refused), bob 2.
        expect(json(r.stdout).rules.find((x: any) => x.rule === "per-user")).to.include({ requests: 7, refused: 2 });
        const bare = compiledCli(["replay", "--program", IDENTITY, "--refuse-approximate", "--log-format", `${base} %REQ(X-NONE)%`, log]);
        expect(bare.code).to.equal(EXIT.approximate);
        expect(bare.stdout).to.include("the log does not record the verified claim");
    });

    it("renderProgram on a program whose output fails rejects with the component's message and the process lives on (control: a rejection nothing handles, after the render, ends it before its report)", () => {
        const runner = path.join(path.dirname(COMPILED_CLI), "program-runner.js");
        // No handler of the probe's own: a rejection nothing handles ends Node before the report 500 ms later.
        const probe = (dir: string, extra = "") => {
            const script = `require(${JSON.stringify(runner)}).renderProgram(${JSON.stringify(dir)}).then(
  (p) => ({ ok: p.objects.length }), (e) => ({ error: e.constructor.name, message: e.message }))
  .then((r) => { ${extra} setTimeout(() => console.log(JSON.stringify(r)), 500); });`;
            // The status is not read: Pulumi's runtime sets 1 as the process ends when a failed output left promises pending (the command ends with its own).
            const p = spawnSync(process.execPath, ["-e", script], { cwd: ROOT, encoding: "utf8" });
            const last = p.stdout.trim().split("\n").pop()!;
            return { report: last.startsWith("{") ? json(last) : undefined, stderr: p.stderr };
        };
        const failed = probe(path.join(FIX, "output-error"));
        expect(failed.report, failed.stderr).to.include({ error: "ProgramError" });
        expect(failed.report.message).to.include("raised inside an output").and.include("redis.passwordSecret.name");
        expect(failed.stderr).to.not.include("triggerUncaughtException");
        expect(probe(LOGIN).report.ok).to.be.greaterThan(0);
        const control = probe(LOGIN, 'Promise.reject(new Error("nobody handles this"));');
        expect(control.report).to.equal(undefined);
        expect(control.stderr).to.include("nobody handles this");
    });

    it("the help's exit table names every status the command returns, with what gives it (control: a status outside the table is seen)", () => {
        const table = (help: string) => [...help.matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
        for (const help of Object.values(HELP)) expect(table(help)).to.deep.equal(Object.values(EXIT));
        expect(table("exit status:\n  0  done\n  7  other"), "the reader of the table").to.deep.equal([0, 7]);
        // An answer that cannot be written (a full disk): status 1, which the table names.
        const full = spawnSync(process.execPath, [COMPILED_CLI, "--help"], { stdio: ["ignore", fs.openSync("/dev/full", "w"), "pipe"], encoding: "utf8" });
        expect(full.status).to.equal(EXIT.program);
        expect(full.stderr).to.include("the output could not be written");
        expect(HELP.main).to.match(/^ {2}1 {2}.*the answer could not be written/m);
        const statuses = [
            compiledCli(["--help"]).code,
            compiledCli(["explain", "--program", path.join(TMP, "none"), "/"]).code,
            compiledCli(["explain", "--bogus"]).code,
            compiledCli(["replay", "--program", LOGIN, path.join(TMP, "none.log")]).code,
            compiledCli(["explain", "--program", path.join(FIX, "no-limits"), "/"]).code,
        ];
        expect(statuses).to.deep.equal([EXIT.ok, EXIT.program, EXIT.usage, EXIT.input, EXIT.nothing]);
    });
});
