/**
 * Consumer tier, the answers a CI gate relies on, from the packed package installed in a fresh
 * folder and run with `npx mesh-ratelimit`: verified claims (--claim), a bearer token verified
 * against a JWKS file (--jwks), --refuse-approximate (exit 6), `-` for standard input and a gzip'd
 * log, --json errors as an object with the status, NOTHING MODELLED (exit 5) for a program with no
 * rate-limit filter, and a component's error raised inside an output failing explain. Every case
 * has its control: the same command on the input that must not give that answer. The programs
 * import the package by name, as a user's do; the log's refusals come from an independent oracle
 * (tests/unit/prove-login-log.ts).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { gzipSync } from "zlib";
import { expectedLoginRefusals, loginLog } from "../unit/prove-login-log";
import { mustRun, packedTarball, rootPkg, workDir } from "./packed";

const GATEWAY = `{ selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example.com:8080"] }`;
const LOGIN_RULE = `{ name: "login", path: { exact: "/login" }, methods: ["POST"], perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute }`;
const ISSUER = "https://auth.shop.example.com";

/** The user's programs: folder name and index.ts. */
const PROGRAMS: Record<string, string> = {
    shop: `import { GlobalRateLimit, LimitUnit } from "mesh-ratelimit";
export const limits = new GlobalRateLimit("shop-limits", { domain: "shop", namespace: "shop", gateway: ${GATEWAY}, rules: [${LOGIN_RULE}], awaitRollout: false });
`,
    identity: `import { GlobalRateLimit, LimitUnit } from "mesh-ratelimit";
export const limits = new GlobalRateLimit("shop-limits", { domain: "shop", namespace: "shop", gateway: ${GATEWAY}, awaitRollout: false, accessLog: {},
    rules: [{ name: "per-user", path: { exact: "/orders" }, methods: ["POST"], requestsPerUnit: 3, unit: LimitUnit.Minute,
        identity: { jwt: { issuer: "${ISSUER}", jwksUri: "${ISSUER}/.well-known/jwks.json" } } }] });
`,
    "no-limits": `import * as k8s from "@pulumi/kubernetes";
export const settings = new k8s.core.v1.ConfigMap("settings", { metadata: { namespace: "shop" }, data: { mode: "live" } });
`,
};
/** A Redis password Secret named by an output: not a Secret name once known (the error), or a valid one (its control). */
const redisProgram = (secretName: string) => `import * as pulumi from "@pulumi/pulumi";
import { GlobalRateLimit, LimitUnit, RedisModeName } from "mesh-ratelimit";
export const limits = new GlobalRateLimit("shop-limits", { domain: "shop", namespace: "shop", gateway: ${GATEWAY}, rules: [${LOGIN_RULE}], awaitRollout: false,
    redis: { mode: RedisModeName.External, addresses: ["redis.shop.svc:6379"], passwordSecret: { name: pulumi.output("${secretName}"), key: "password" } } });
`;
PROGRAMS["output-error"] = redisProgram("Not A Secret Name");
PROGRAMS["output-ok"] = redisProgram("redis-password");

const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const other = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
/** An RS256 token of the rule's issuer for `sub`, signed with `key`. */
function token(sub: string, key: crypto.KeyObject = rsa.privateKey): string {
    const now = Math.floor(Date.now() / 1000);
    const signed = `${b64({ alg: "RS256", kid: "k1", typ: "JWT" })}.${b64({ iss: ISSUER, sub, iat: now, exp: now + 3600 })}`;
    return `${signed}.${crypto.sign("sha256", Buffer.from(signed), key).toString("base64url")}`;
}
const bearer = (t: string) => ["--header", `authorization=Bearer ${t}`];
const identityOf = (d: any) => d.descriptors.flatMap((c: any) => c.entries).find((e: any) => e.key === "identity")?.value;

describe("consumer: explain and replay's gates on the packed package (npx mesh-ratelimit)", function () {
    this.timeout(600_000);
    let app: string;
    const cli = (args: string[], input?: string | Buffer) => {
        const r = spawnSync("npx", ["--no-install", "mesh-ratelimit", ...args], {
            cwd: app,
            encoding: "utf8",
            maxBuffer: 64 << 20,
            ...(input !== undefined ? { input } : {}),
        });
        return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
    };
    const json = (args: string[], input?: string | Buffer) => {
        const r = cli([...args, "--json"], input);
        return { code: r.code, stderr: r.stderr, out: JSON.parse(r.stdout) };
    };
    const orders = (flags: string[][], extra: string[] = []) =>
        json(["explain", "--program", "identity", "--method", "POST", ...extra, ...flags.flatMap((f) => [...f, "/orders"])]);

    before(() => {
        app = path.join(workDir(), "app-gates");
        for (const [name, source] of Object.entries(PROGRAMS)) {
            fs.mkdirSync(path.join(app, name), { recursive: true });
            fs.writeFileSync(path.join(app, name, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
            fs.writeFileSync(path.join(app, name, "index.ts"), source);
        }
        const dependencies = { "mesh-ratelimit": `file:${packedTarball()}`, "@pulumi/pulumi": rootPkg.devDependencies["@pulumi/pulumi"] };
        fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "shop-infra", private: true, dependencies }));
        // --ignore-scripts: @pulumi/kubernetes's install script would fetch its provider plugin; the mocks need none.
        mustRun("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], app);
        fs.writeFileSync(path.join(app, "jwks.json"), JSON.stringify({ keys: [{ ...rsa.publicKey.export({ format: "jwk" }), kid: "k1", use: "sig" }] }));
    });

    it("--claim counts the identity rule per verified sub (control: without claims one client's requests share the fallback)", () => {
        const r = orders([["--claim", "sub=alice"], [], [], ["--claim", "sub=bob"], ["--claim", "sub=alice"]]);
        expect(r.code, r.stderr).to.equal(0);
        expect(r.out.decisions.map((d: any) => d.allowed)).to.deep.equal([true, true, true, true, false]);
        expect(r.out.decisions.map(identityOf)).to.deep.equal(["alice", "alice", "alice", "bob", "alice"]);
        const none = orders([[], [], [], [], []]);
        expect(none.out.decisions.map((d: any) => d.allowed)).to.deep.equal([true, true, true, false, false]);
        expect(none.out.decisions.map(identityOf)).to.deep.equal(Array(5).fill("(none)"));
    });

    it("--jwks: a token signed by the issuer's key counts its sub, never printed (control: another key's token is refused 401, nothing counted)", () => {
        const alice = token("alice");
        const r = cli([
            "explain",
            "--program",
            "identity",
            "--method",
            "POST",
            "--jwks",
            "jwks.json",
            "--json",
            ...[1, 2, 3, 4].flatMap(() => [...bearer(alice), "/orders"]),
        ]);
        expect(r.code, r.stderr).to.equal(0);
        const d = JSON.parse(r.stdout).decisions;
        expect(d.map((x: any) => x.allowed)).to.deep.equal([true, true, true, false]);
        expect(d.map(identityOf)).to.deep.equal(Array(4).fill("alice"));
        expect(r.stdout + r.stderr).to.not.include(alice);
        const forged = orders([bearer(token("alice", other.privateKey))], ["--jwks", "jwks.json"]).out.decisions[0];
        expect(forged).to.deep.include({ allowed: false });
        expect(forged.response).to.deep.include({ status: 401, body: "Jwt verification fails" });
        expect(forged.descriptors).to.deep.equal([]);
    });

    it("--refuse-approximate: a token explain cannot verify exits 6, naming it (control: --claim makes it exact, exit 0; without the flag exit 0 with the approximation listed)", () => {
        const args = ["explain", "--program", "identity", "--method", "POST", ...bearer(token("alice"))];
        const refused = cli([...args, "--refuse-approximate", "/orders"]);
        expect(refused.code).to.equal(6);
        expect(refused.stdout).to.include("not modelled: rule per-user: counts a verified token's claim, unknown here: no JWKS of issuer");
        expect(refused.stderr).to.include("--refuse-approximate: 1 decisions rest on an approximation");
        expect(cli([...args, "--refuse-approximate", "--claim", "sub=alice", "/orders"]).code).to.equal(0);
        const listed = json([...args, "/orders"]);
        expect(listed.code).to.equal(0);
        expect(listed.out.approximations[0]).to.include({ rule: "per-user", requests: 1 });
    });

    it("replay reads `-` (plain and gzip'd) and a gzip'd file as the plain file (control: a compressed file that is not gzip is refused, exit 4, with the hint)", () => {
        const log = loginLog(600, { clients: 5, seed: 64 });
        const oracle = expectedLoginRefusals(log.lines);
        expect(oracle.refused).to.be.greaterThan(10);
        fs.writeFileSync(path.join(app, "access.log"), log.text);
        fs.writeFileSync(path.join(app, "access.log.1.gz"), gzipSync(log.text));
        for (const [args, input] of [
            [["access.log"], undefined],
            [["access.log.1.gz"], undefined],
            [["-"], log.text],
            [["-"], gzipSync(log.text)],
        ] as [string[], string | Buffer | undefined][]) {
            const r = json(["replay", "--program", "shop", ...args], input);
            expect(r.code, `${args} ${r.stderr}`).to.equal(0);
            expect(r.out.rules.find((x: any) => x.rule === "login")).to.include({ requests: oracle.requests, refused: oracle.refused });
        }
        fs.writeFileSync(path.join(app, "access.log.zst"), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 1, 2, 0, 10]));
        const bad = cli(["replay", "--program", "shop", "access.log.zst"]);
        expect(bad.code).to.equal(4);
        expect(bad.stderr).to.include("must be decompressed first");
    });

    it("--json: an error is an object with its status on stdout (control: an answer carries status 0 and no error)", () => {
        const missing = json(["replay", "--program", "shop", "no-such.log"]);
        expect(missing.code).to.equal(4);
        expect(missing.out.error).to.include({ status: 4 });
        expect(missing.out.error.message).to.include("no-such.log");
        const usage = json(["explain", "--program", "shop", "login"]);
        expect(usage.code).to.equal(2);
        expect(usage.out.error).to.include({ status: 2 });
        const ok = json(["replay", "--program", "shop", "access.log"]);
        expect(ok.code).to.equal(0);
        expect(ok.out).to.include({ status: 0 }).and.not.have.property("error");
    });

    it("a program with no rate-limit filter: NOTHING MODELLED, exit 5, for explain and replay (control: the login program exits 0)", () => {
        const ex = cli(["explain", "--program", "no-limits", "/login"]);
        expect(ex.code).to.equal(5);
        expect(ex.stdout).to.include("NOTHING MODELLED");
        expect(ex.stderr).to.include("renders no rate-limit filter");
        const re = json(["replay", "--program", "no-limits", "access.log"]);
        expect(re.code).to.equal(5);
        expect(re.out.status).to.equal(5);
        expect(cli(["explain", "--program", "shop", "/login"]).code).to.equal(0);
    });

    it("a component's error raised inside an output fails explain with its message (control: the same program with a valid Secret name answers)", () => {
        const bad = cli(["explain", "--program", "output-error", "--method", "POST", "/login"]);
        expect(bad.code).to.equal(1);
        expect(bad.stderr).to.include("raised inside an output").and.include("redis.passwordSecret.name");
        expect(bad.stdout).to.not.include("allowed");
        const badJson = json(["explain", "--program", "output-error", "/login"]);
        expect(badJson.out.error).to.include({ status: 1 });
        const good = json(["explain", "--program", "output-ok", "--method", "POST", ...Array(6).fill("/login")]);
        expect(good.code, good.stderr).to.equal(0);
        expect(good.out.decisions.map((d: any) => d.allowed)).to.deep.equal([true, true, true, true, true, false]);
    });
});
