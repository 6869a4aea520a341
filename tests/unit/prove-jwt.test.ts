/**
 * `explain` verifies a bearer token as the gateway's JWT filter does for the program's rendered
 * RequestAuthentication, through the compiled command: keys generated here, a JWKS file written to a
 * temp folder, tokens signed here. A valid token's sub keys the identity rule's counter (two subs, two
 * counters); an expired token, a bad signature, another issuer's token and a malformed one are each
 * answered 401 before any rate limit; a forged sub with a bad signature gets no counter of its own;
 * the token never appears in the output. The verifier's ES256, audience and inline-JWKS paths are
 * checked on the function itself.
 */
import { expect } from "chai";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { EXIT } from "../../prove/cli-args";
import { checkToken, jwtChecksOf } from "../../prove/jwt-verify";
import { renderProgram } from "../../prove/program-runner";
import { buildCompiledCli, compiledCli } from "./compiled-cli";

const IDENTITY = path.join(__dirname, "fixtures", "identity-program");
const ISSUER = "https://auth.shop.example.com";
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "prove-jwt-"));
const NOW = Math.floor(Date.now() / 1000);

const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const other = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const ec = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" });
const jwk = (k: crypto.KeyObject, kid: string) => ({ ...k.export({ format: "jwk" }), kid, use: "sig" });
const JWKS = path.join(TMP, "jwks.json");
fs.writeFileSync(JWKS, JSON.stringify({ keys: [jwk(rsa.publicKey, "k1")] }));

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** A JWT signed with `key` (RS256, or ES256 for an EC key). */
function sign(payload: object, key: crypto.KeyObject = rsa.privateKey, kid = "k1"): string {
    const alg = key.asymmetricKeyType === "ec" ? "ES256" : "RS256";
    const signed = `${b64({ alg, kid, typ: "JWT" })}.${b64(payload)}`;
    const sig = crypto.sign("sha256", Buffer.from(signed), alg === "ES256" ? { key, dsaEncoding: "ieee-p1363" } : key);
    return `${signed}.${sig.toString("base64url")}`;
}
const claims = (sub: string, extra: object = {}) => ({ iss: ISSUER, sub, iat: NOW, exp: NOW + 3600, ...extra });
const bearer = (t: string) => ["--header", `authorization=Bearer ${t}`];

/** explain of POST /orders requests, each sent with its own flags; the decisions as JSON. */
function explain(requests: string[][], extra: string[] = ["--jwks", JWKS]) {
    const seq = requests.flatMap((flags) => [...flags, "/orders"]);
    const r = compiledCli(["explain", "--program", IDENTITY, "--json", "--method", "POST", ...extra, ...seq]);
    expect(r.code, r.stderr + r.stdout).to.be.oneOf([EXIT.ok, EXIT.approximate]);
    return { out: JSON.parse(r.stdout), raw: r.stdout };
}
const identityOf = (d: any) => d.descriptors.flatMap((c: any) => c.entries).find((e: any) => e.key === "identity")?.value;

describe("explain verifies a bearer token against the rule's issuer and a JWKS (the compiled command)", function () {
    this.timeout(600_000);
    before(() => buildCompiledCli());

    it("a valid token's sub keys the counter: two subs, two counters; the token never printed (control: without --jwks it is not verified)", () => {
        const alice = sign(claims("alice"));
        const bob = sign(claims("bob"));
        const { out, raw } = explain([bearer(alice), bearer(alice), bearer(alice), bearer(bob), bearer(alice)]);
        const d = out.decisions;
        expect(d.map((x: any) => x.allowed)).to.deep.equal([true, true, true, true, false]);
        expect(d.map(identityOf)).to.deep.equal(["alice", "alice", "alice", "bob", "alice"]);
        expect(d[4].refusedBy.descriptor).to.deep.include({ key: "identity", value: "alice" });
        expect(raw).to.not.include(alice).and.not.include(bob);
        expect(d[0].request.headers.authorization).to.deep.equal(["Bearer <redacted>"]);
        const text = compiledCli(["explain", "--program", IDENTITY, "--method", "POST", "--jwks", JWKS, ...bearer(alice), "/orders"]);
        expect(text.stdout).to.include("header authorization: Bearer <redacted>").and.not.include(alice);
        // Control: with no keys for the issuer the same tokens are not verified, and the rule's count is marked unknown.
        const unverified = explain([bearer(alice), bearer(bob)], []);
        expect(unverified.out.status).to.equal(EXIT.ok);
        expect(unverified.out.decisions.map(identityOf)).to.deep.equal(["(none)", "(none)"]);
        expect(unverified.out.approximations[0].what).to.include("no JWKS of issuer https://auth.shop.example.com");
    });

    it("expired, bad signature, another issuer and a malformed token: each 401 before any rate limit, nothing counted (control: the same claims signed and in time are allowed)", async () => {
        const cases: [string, string][] = [
            [sign(claims("alice", { exp: NOW - 3600 })), "Jwt is expired"],
            [sign(claims("alice", { nbf: NOW + 3600 })), "Jwt not yet valid"],
            [sign(claims("alice"), other.privateKey), "Jwt verification fails"],
            [sign({ ...claims("alice"), iss: "https://other.example.com" }), "Jwt issuer is not configured"],
            ["abc", "Jwt is not in the form of Header.Payload.Signature"],
        ];
        const { out } = explain(cases.map(([t]) => bearer(t)));
        out.decisions.forEach((d: any, i: number) => {
            expect(d.allowed, cases[i]![1]).to.equal(false);
            expect(d.response).to.deep.include({ status: 401, body: cases[i]![1] });
            expect(d.refusedBy.by).to.equal("token check");
            expect(d.descriptors).to.deep.equal([]);
        });
        // The decision names the program's own RequestAuthentication, as rendered.
        const ra = (await renderProgram(IDENTITY)).objects.find((o) => o.kind === "RequestAuthentication")!;
        expect(out.decisions[0].refusedBy.requestAuthentication).to.equal(`${ra.metadata!.namespace}/${ra.metadata!.name}`);
        const text = compiledCli(["explain", "--program", IDENTITY, "--method", "POST", "--jwks", JWKS, ...bearer(cases[0]![0]), "/orders"]).stdout;
        expect(text).to.include("REFUSED by the gateway's JWT filter: 401 Jwt is expired");
        const good = explain([bearer(sign(claims("alice")))]).out.decisions[0];
        expect(good.allowed).to.equal(true);
        expect(good.response.status).to.equal("upstream");
    });

    it("a forged sub with a bad signature gets no counter of its own (control: the same sub, signed by the issuer's key, does)", () => {
        const alice = sign(claims("alice"));
        const forged = sign(claims("fresh-user"), other.privateKey);
        const { out } = explain([bearer(alice), bearer(alice), bearer(alice), bearer(forged), bearer(forged)]);
        const d = out.decisions;
        expect(d.slice(3).map((x: any) => x.response.status)).to.deep.equal([401, 401]);
        expect(d.slice(3).every((x: any) => x.descriptors.length === 0)).to.equal(true);
        const signed = explain([bearer(alice), bearer(alice), bearer(alice), bearer(sign(claims("fresh-user")))]).out.decisions;
        expect(signed[3].allowed).to.equal(true);
        expect(identityOf(signed[3])).to.equal("fresh-user");
    });

    it("no token: the rule's missing-identity fallback, per client (control: a valid token counts its sub instead)", () => {
        const d = explain([[], ["--client-address", "203.0.113.9"], bearer(sign(claims("alice")))]).out.decisions;
        expect(d[0].descriptors.flatMap((c: any) => c.entries).map((e: any) => e.key)).to.include("identity_fallback");
        expect(d.map(identityOf)).to.deep.equal(["(none)", "(none)", "alice"]);
    });

    it("a --jwks file that cannot be read or is not a JWKS is a usage error naming the file", () => {
        const bad = path.join(TMP, "bad.json");
        fs.writeFileSync(bad, '{"nokeys": true}');
        for (const [file, says] of [
            [bad, 'has no "keys" list'],
            [path.join(TMP, "missing.json"), "cannot be read (ENOENT)"],
        ]) {
            const r = compiledCli(["explain", "--program", IDENTITY, "--jwks", file!, "/orders"]);
            expect(r.code).to.equal(EXIT.usage);
            expect(r.stderr).to.include(`--jwks ${file}`).and.include(says!);
        }
    });
});

describe("the token check itself (prove/jwt-verify.ts)", () => {
    const ra = (jwtRules: object[]) => [
        { apiVersion: "security.istio.io/v1", kind: "RequestAuthentication", metadata: { name: "ra", namespace: "gw" }, spec: { jwtRules } },
    ];
    const ms = NOW * 1000;

    it("ES256 with the issuer's inline jwks verifies (control: an RSA-only JWKS does not verify it)", () => {
        const inline = JSON.stringify({ keys: [jwk(ec.publicKey, "e1")] });
        const t = sign(claims("carol"), ec.privateKey, "e1");
        expect(checkToken(t, jwtChecksOf(ra([{ issuer: ISSUER, jwks: inline }])), ms)).to.deep.include({ claims: { iss: ISSUER, sub: "carol" } });
        const rsaOnly = jwtChecksOf(ra([{ issuer: ISSUER }]), [jwk(rsa.publicKey, "e1") as JsonWebKey]);
        expect(checkToken(t, rsaOnly, ms)).to.deep.equal({ rejected: "Jwt verification fails", requestAuthentication: "gw/ra" });
    });

    it("audiences: a token naming one is verified, one naming another is refused", () => {
        const checks = jwtChecksOf(ra([{ issuer: ISSUER, audiences: ["shop-api"] }]), [jwk(rsa.publicKey, "k1") as JsonWebKey]);
        expect(checkToken(sign(claims("a", { aud: ["x", "shop-api"] })), checks, ms)).to.have.property("claims");
        expect(checkToken(sign(claims("a", { aud: "billing" })), checks, ms)).to.deep.include({ rejected: "Audiences in Jwt are not allowed" });
        expect(checkToken(sign(claims("a")), checks, ms)).to.deep.include({ rejected: "Audiences in Jwt are not allowed" });
    });

    it("exp and nbf are read against the request's time with Envoy's 60 s of skew", () => {
        const checks = jwtChecksOf(ra([{ issuer: ISSUER }]), [jwk(rsa.publicKey, "k1") as JsonWebKey]);
        const t = sign(claims("a", { exp: NOW }));
        expect(checkToken(t, checks, (NOW + 60) * 1000)).to.have.property("claims");
        expect(checkToken(t, checks, (NOW + 61) * 1000)).to.deep.include({ rejected: "Jwt is expired" });
    });
});
