/**
 * `explain` and `replay` never answer silently, through the compiled command as a CI job runs it:
 * an error raised inside an output fails the command with the component's own message; a program
 * using auto-named objects renders with their names; a program that renders no limit exits 5; a
 * platform-only program is modelled; an approximation is named on its decision and, with
 * --refuse-approximate, exits 6; verified claims (--claim, a log that records them) count identity
 * rules; gzip logs, `-` for standard input, --json errors and the headers each request carried.
 * Every case has its control: the same command on the input that must not give that answer.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { gzipSync } from "zlib";
import { EXIT, HELP } from "../../prove/cli-args";
import { renderProgram } from "../../prove/program-runner";
import { autoName } from "../../prove/program-mocks";
import { headerReader } from "../../prove/read-fields";
import { packIpv4, unpackIpv4 } from "../../prove/log-table";
import { buildCompiledCli, compiledCli, ROOT } from "./compiled-cli";
import { expectedLoginRefusals, loginLog } from "./prove-login-log";

const FIX = path.join(__dirname, "fixtures");
const LOGIN = path.join(ROOT, "examples", "login-limit");
const IDENTITY = path.join(FIX, "identity-program");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "prove-honest-"));
const tmp = (name: string, content: string | Buffer) => {
    const f = path.join(TMP, name);
    fs.writeFileSync(f, content);
    return f;
};
const json = (s: string) => JSON.parse(s);

describe("explain and replay never answer silently (the compiled command)", function () {
    this.timeout(600_000);
    before(() => buildCompiledCli());

    it("an error inside an output fails explain with the component's message, exit 1, and --json prints it as an object (control: a valid program exits 0)", () => {
        const bad = compiledCli(["explain", "--program", path.join(FIX, "output-error"), "--json", "/login"]);
        expect(bad.code).to.equal(EXIT.program);
        const err = json(bad.stdout).error;
        expect(err.status).to.equal(EXIT.program);
        expect(err.message).to.include("redis.passwordSecret.name").and.include('fix: set redis.passwordSecret.name to "not-a-secret-name"');
        expect(bad.stderr).to.include("raised inside an output");
        const good = compiledCli(["explain", "--program", LOGIN, "--json", "/login"]);
        expect(good.code).to.equal(EXIT.ok);
        expect(json(good.stdout).decisions).to.have.length(1);
    });

    it("auto-named Secret and Service: named as the engine names them, so the documented use renders and counts (control: a given name is kept)", async () => {
        const r = compiledCli(["explain", "--program", path.join(FIX, "auto-named-secret"), "--method", "POST", ...Array(6).fill("/login")]);
        expect(r.code, r.stderr).to.equal(EXIT.ok);
        expect(r.stdout).to.include("rule login: 6 requests, 1 refused, first refused: request #6");
        const program = await renderProgram(path.join(FIX, "auto-named-secret"));
        const env = program.objects.find((o) => o.kind === "Deployment")!.spec.template.spec.containers[0].env as {
            name: string;
            value?: string;
            valueFrom?: any;
        }[];
        expect(env.find((e) => e.name === "REDIS_URL")!.value).to.match(/^redis-[0-9a-f]{7}\.shop\.svc:6379$/);
        expect(env.find((e) => e.name === "REDIS_AUTH")!.valueFrom.secretKeyRef.name).to.match(/^redis-password-[0-9a-f]{7}$/);
        const secret = { apiVersion: "v1", kind: "Secret" };
        expect(autoName("kubernetes:core/v1:Secret", "pw", { ...secret, metadata: { name: "given" } })).to.equal(undefined);
        expect(autoName("kubernetes:core/v1:Secret", "pw", secret)).to.match(/^pw-[0-9a-f]{7}$/);
    });

    it("a program that renders no limit exits 5 and says so (control: the login program exits 0)", () => {
        const none = compiledCli(["explain", "--program", path.join(FIX, "no-limits"), "/login"]);
        expect(none.code).to.equal(EXIT.nothing);
        expect(none.stdout).to.include("NOTHING MODELLED");
        expect(none.stderr).to.include("renders no rate-limit filter");
        const log = tmp("login.log", loginLog(200).text);
        const replay = compiledCli(["replay", "--program", path.join(FIX, "no-limits"), "--json", log]);
        expect(replay.code).to.equal(EXIT.nothing);
        expect(json(replay.stdout).status).to.equal(EXIT.nothing);
        expect(compiledCli(["replay", "--program", LOGIN, log]).code).to.equal(EXIT.ok);
    });

    it("a platform-only program (no listenerPorts) is modelled: the override's fourth /export is refused (control: /cart is not)", () => {
        const prog = path.join(FIX, "platform-only");
        const exp = compiledCli(["explain", "--program", prog, "--json", ...Array(4).fill("/export")]);
        expect(exp.code, exp.stderr).to.equal(EXIT.ok);
        const d = json(exp.stdout).decisions;
        expect(d.map((x: any) => x.allowed)).to.deep.equal([true, true, true, false]);
        expect(d[3].refusedBy.rule).to.equal("platform override export-ceiling");
        const cart = json(compiledCli(["explain", "--program", prog, "--json", ...Array(4).fill("/cart")]).stdout).decisions;
        expect(cart.every((x: any) => x.allowed)).to.equal(true);
    });

    it("--claim counts an identity rule per verified claim (control: without claims the same client's requests share the fallback)", () => {
        const seq = [
            "--method",
            "POST",
            "--claim",
            "sub=alice",
            "/orders",
            "/orders",
            "/orders",
            "--claim",
            "sub=bob",
            "/orders",
            "--claim",
            "sub=alice",
            "/orders",
        ];
        const r = compiledCli(["explain", "--program", IDENTITY, "--json", ...seq]);
        expect(r.code, r.stderr).to.equal(EXIT.ok);
        const d = json(r.stdout).decisions;
        // Alice's fourth request is refused; Bob's first is not: one counter per verified sub.
        expect(d.map((x: any) => x.allowed)).to.deep.equal([true, true, true, true, false]);
        expect(d[4].refusedBy.descriptor).to.deep.include({ key: "identity", value: "alice" });
        // The startup line names what the rule counts (control: the login rule's counts the client address).
        expect(r.stderr).to.include("3 per minute per verified sub (requests without a verified token: client address)");
        expect(compiledCli(["explain", "--program", LOGIN, "/login"]).stderr).to.include("5 per minute per client address)");
        const plain = json(compiledCli(["explain", "--program", IDENTITY, "--json", "--method", "POST", ...Array(5).fill("/orders")]).stdout).decisions;
        expect(plain.map((x: any) => x.allowed)).to.deep.equal([true, true, true, false, false]);
        expect(plain[3].refusedBy.descriptor.map((e: any) => e.key)).to.include("identity_fallback");
    });

    it("a token explain cannot verify is named on the decision, and --refuse-approximate exits 6 (control: with --claim it is exact, exit 0)", () => {
        // A well-formed token of the program's issuer, with no JWKS to check it against (tests/unit/prove-jwt.test.ts verifies with one).
        const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
        const token = `${b64({ alg: "RS256" })}.${b64({ iss: "https://auth.shop.example.com", sub: "alice" })}.c2ln`;
        const args = ["explain", "--program", IDENTITY, "--method", "POST", "--header", `authorization=Bearer ${token}`, "--refuse-approximate"];
        const r = compiledCli([...args, "/orders"]);
        expect(r.code).to.equal(EXIT.approximate);
        expect(r.stdout).to.include("not modelled: rule per-user: counts a verified token's claim, unknown here: no JWKS of issuer");
        expect(r.stdout).to.include("header authorization: Bearer <redacted>").and.not.include(token);
        const withJson = json(compiledCli([...args, "--json", "/orders"]).stdout);
        expect(withJson.status).to.equal(EXIT.approximate);
        expect(withJson.approximations[0]).to.include({ rule: "per-user", requests: 1, first: 1 });
        const exact = compiledCli([...args, "--claim", "sub=alice", "/orders"]);
        expect(exact.code, exact.stderr).to.equal(EXIT.ok);
        expect(exact.stdout).to.not.include("not modelled");
        expect(compiledCli(["explain", "--program", IDENTITY, "--method", "POST", "/orders"]).stdout).to.not.include("header ");
    });

    it("replay reads the verified claim the program's access log records; a log without it marks the identity rule unknown (exit 6 with --refuse-approximate)", () => {
        const start = Date.UTC(2026, 11, 2, 9, 0, 5);
        const users = ["alice", "alice", "alice", "alice", "alice", "bob", "bob", "-"];
        const line = (i: number, sub: string, withClaim: boolean) =>
            JSON.stringify({
                start_time: new Date(start + i * 1000).toISOString(),
                method: "POST",
                path: "/orders",
                authority: "shop.example.com",
                client: "203.0.113.9:4000",
                response_code: "200",
                ...(withClaim ? { "claim.iss": sub === "-" ? "-" : "https://auth.shop.example.com", "claim.sub": sub } : {}),
            });
        const logged = tmp("identity.log", users.map((u, i) => line(i, u, true)).join("\n") + "\n");
        const r = json(compiledCli(["replay", "--program", IDENTITY, "--json", "--refuse-approximate", logged]).stdout);
        // Oracle: 3 a minute per sub; alice sends 5 (2 refused), bob 2, one request without a token (its client's first).
        expect(r.rules.find((x: any) => x.rule === "per-user")).to.include({ requests: 8, refused: 2 });
        expect(r.status).to.equal(EXIT.ok);
        expect(r.approximations).to.deep.equal([]);
        const format = JSON.stringify({ start_time: "%START_TIME%", method: "%REQ(:METHOD)%", path: "%REQ(:PATH)%", client: "%DOWNSTREAM_REMOTE_ADDRESS%" });
        const bare = tmp("bare.log", users.map((u, i) => line(i, u, false)).join("\n") + "\n");
        const unknown = compiledCli(["replay", "--program", IDENTITY, "--log-format", format, "--refuse-approximate", bare]);
        expect(unknown.code).to.equal(EXIT.approximate);
        expect(unknown.stdout).to.include(
            "not modelled (its counts are approximate): counts a verified token's claim, unknown here: the log does not record the verified claim",
        );
    });

    it("a gzip'd log and - for standard input give the plain file's answer (control: a binary file that is not gzip is refused with the hint)", () => {
        const log = loginLog(600, { clients: 5 });
        const oracle = expectedLoginRefusals(log.lines);
        const refusedOf = (stdout: string) => json(stdout).rules.find((x: any) => x.rule === "login");
        const plain = tmp("plain.log", log.text);
        const gz = tmp("rotated.log.1", gzipSync(log.text));
        for (const run of [
            compiledCli(["replay", "--program", LOGIN, "--json", plain]),
            compiledCli(["replay", "--program", LOGIN, "--json", gz]),
            compiledCli(["replay", "--program", LOGIN, "--json", "-"], { input: gzipSync(log.text) }),
            compiledCli(["replay", "--program", LOGIN, "--json", "-"], { input: log.text }),
        ]) {
            expect(run.code, run.stderr).to.equal(EXIT.ok);
            expect(refusedOf(run.stdout)).to.include({ requests: oracle.requests, refused: oracle.refused });
        }
        const zstdLike = tmp("log.zst", Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 1, 2, 0, 10]));
        const bad = compiledCli(["replay", "--program", LOGIN, "--json", zstdLike]);
        expect(bad.code).to.equal(EXIT.input);
        expect(json(bad.stdout).error.message).to.include("must be decompressed first");
        const cut = compiledCli(["replay", "--program", LOGIN, tmp("cut.gz", gzipSync(log.text).subarray(0, 200))]);
        expect(cut.code).to.equal(EXIT.input);
        expect(cut.stderr).to.include("does not decompress");
    });

    it("--json errors are objects with the status; a format without %START_TIME% is a usage error (2); the exit table names every status", () => {
        const missing = compiledCli(["replay", "--program", LOGIN, "--json", path.join(TMP, "nope.log")]);
        expect(missing.code).to.equal(EXIT.input);
        expect(json(missing.stdout).error).to.include({ status: EXIT.input });
        const noTime = compiledCli(["replay", "--program", LOGIN, "--log-format", '{"method":"%REQ(:METHOD)%","path":"%REQ(:PATH)%"}', tmp("x.log", "{}\n")]);
        expect(noTime.code).to.equal(EXIT.usage);
        expect(noTime.stderr).to.include("--log-format: the access log format has no time field");
        for (const status of Object.values(EXIT)) for (const help of Object.values(HELP)) expect(help).to.match(new RegExp(`^  ${status}  `, "m"));
    });

    it("replay keeps only the headers the program can read (control: the header a rule reads is kept), and IPv4 clients as 32 bits", async () => {
        const objects = (await renderProgram(path.join(FIX, "api-key-log-program"))).objects;
        const reads = headerReader(objects);
        expect(reads("x-api-key")).to.equal(true);
        expect(reads("x-request-id")).to.equal(false);
        expect(reads("x-forwarded-for")).to.equal(false);
        // The same log with and without a different unread header on every line: the same answer.
        const line = (i: number, extra: Record<string, string>) =>
            JSON.stringify({
                start_time: new Date(Date.UTC(2026, 11, 2, 9, 0, 1) + i * 100).toISOString(),
                method: "GET",
                path: "/api/x",
                authority: "api.example.com",
                client: `203.0.113.${i % 7}:4000`,
                "header.x-api-key": `k${i % 3}`,
                ...extra,
            });
        const plain = tmp("keys.log", Array.from({ length: 60 }, (_, i) => line(i, {})).join("\n") + "\n");
        const noisy = tmp("keys-noisy.log", Array.from({ length: 60 }, (_, i) => line(i, { x_forwarded_for: `198.51.100.${i}` })).join("\n") + "\n");
        const rule = (f: string) => {
            const { firstRefusedText, ...r } = json(compiledCli(["replay", "--program", path.join(FIX, "api-key-log-program"), "--json", f]).stdout).rules[0];
            expect(firstRefusedText).to.be.a("string");
            return r;
        };
        // Oracle: 20 requests per key in one minute, 10 a minute per key: 10 refused per key (the key dropped: one counter, 50 refused).
        expect(rule(plain)).to.include({ rule: "per-key", requests: 60, refused: 30 });
        expect(rule(noisy)).to.deep.equal(rule(plain));
        expect(packIpv4("203.0.113.7")).to.equal(0xcb007107);
        expect(unpackIpv4(packIpv4("203.0.113.7")!)).to.equal("203.0.113.7");
        for (const notCanonical of ["203.0.113.07", "203.0.113", "256.1.1.1", "::1", "a.b.c.d"]) expect(packIpv4(notCanonical)).to.equal(undefined);
    });
});
