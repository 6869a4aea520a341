/**
 * A rule keyed by a verified identity (`identity`, builders/identity*.ts): the refused inputs with
 * their property path and fix, the actions (the verified payload only, never a request header) and
 * config nodes, and the token check on the gateway's pods. Expected values are written here from
 * Envoy's and Istio's APIs, not read from the code.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { resolveSource } from "../../components/platform-ratelimit/platform-sources";
import { descriptorFor } from "../../gateway-model/evaluate";
import { jwtDynamicMetadata, metadataActionValue } from "../../gateway-model/jwt-metadata-model";
import { Problem } from "../../lib/problems";
import { G, M } from "./global-ratelimit-fixtures";

const ISSUER = "https://auth.shop.example.com";
const JWKS = "https://auth.shop.example.com/.well-known/jwks.json";
const rule = (identity: unknown, more: Record<string, unknown> = {}) => ({ name: "per-user", identity, requestsPerUnit: 10, unit: M, ...more });
const problemsOf = (...rules: unknown[]): Problem[] => planGlobalRateLimit(G({ rules })).problems;
const only = (...rules: unknown[]): Problem => {
    const p = problemsOf(...rules);
    expect(p, JSON.stringify(p, null, 1)).to.have.length(1);
    return p[0]!;
};

describe("identity: the checks (property path, problem, fix)", () => {
    it("a valid identity rule has no problem (the control of every refusal below)", () => {
        expect(problemsOf(rule({ jwt: { issuer: ISSUER, jwksUri: JWKS } }))).to.deep.equal([]);
        expect(problemsOf(rule({ jwt: { issuer: ISSUER, jwksUri: JWKS, claim: "email", audiences: ["shop"] }, missing: "refuse" }))).to.deep.equal([]);
    });
    const refused: [string, unknown, string, string, RegExp][] = [
        [
            "no jwt",
            {},
            "rules[0].identity",
            "must be { jwt: { issuer, jwksUri, claim?, audiences? }, missing? }",
            /set rules\[0\]\.identity\.jwt to \{ issuer:/,
        ],
        [
            "an empty issuer",
            { jwt: { issuer: "", jwksUri: JWKS } },
            "rules[0].identity.jwt.issuer",
            "must be the tokens' issuer",
            /set rules\[0\]\.identity\.jwt\.issuer to "https:\/\/auth\.example\.com"/,
        ],
        ["an issuer with a space", { jwt: { issuer: "auth server", jwksUri: JWKS } }, "rules[0].identity.jwt.issuer", "no spaces", /issuer to/],
        [
            "the no-identity marker as issuer",
            { jwt: { issuer: "(none)", jwksUri: JWKS } },
            "rules[0].identity.jwt.issuer",
            "without a verified token",
            /issuer to/,
        ],
        [
            "a jwksUri that is no URL",
            { jwt: { issuer: ISSUER, jwksUri: "auth.shop.example.com/jwks" } },
            "rules[0].identity.jwt.jwksUri",
            "must be the http(s) URL",
            /set rules\[0\]\.identity\.jwt\.jwksUri to "https:/,
        ],
        [
            "a jwksUri of another scheme",
            { jwt: { issuer: ISSUER, jwksUri: "ftp://auth.shop.example.com/jwks" } },
            "rules[0].identity.jwt.jwksUri",
            "must be the http(s) URL",
            /jwksUri to/,
        ],
        ["no jwksUri", { jwt: { issuer: ISSUER } }, "rules[0].identity.jwt.jwksUri", "must be the http(s) URL", /jwksUri to/],
        [
            "a claim with a space",
            { jwt: { issuer: ISSUER, jwksUri: JWKS, claim: "user id" } },
            "rules[0].identity.jwt.claim",
            "must name one top-level claim",
            /set rules\[0\]\.identity\.jwt\.claim to "sub"/,
        ],
        ["a numeric claim", { jwt: { issuer: ISSUER, jwksUri: JWKS, claim: "exp" } }, "rules[0].identity.jwt.claim", "reads only a string", /claim to "sub"/],
        [
            "the issuer claim",
            { jwt: { issuer: ISSUER, jwksUri: JWKS, claim: "iss" } },
            "rules[0].identity.jwt.claim",
            "one counter for everyone",
            /claim to "sub"/,
        ],
        [
            "no audience",
            { jwt: { issuer: ISSUER, jwksUri: JWKS, audiences: [] } },
            "rules[0].identity.jwt.audiences",
            "non-empty list",
            /remove rules\[0\]\.identity\.jwt\.audiences/,
        ],
        [
            "an empty audience",
            { jwt: { issuer: ISSUER, jwksUri: JWKS, audiences: [""] } },
            "rules[0].identity.jwt.audiences[0]",
            "must be an audience",
            /remove rules\[0\]\.identity\.jwt\.audiences\[0\]/,
        ],
        [
            "a misspelt missing",
            { jwt: { issuer: ISSUER, jwksUri: JWKS }, missing: "refus" },
            "rules[0].identity.missing",
            "must be one of 'perClient', 'refuse'",
            /set rules\[0\]\.identity\.missing to "refuse"/,
        ],
    ];
    for (const [what, identity, key, text, fix] of refused) {
        it(`refuses ${what} at ${key}`, () => {
            const p = only(rule(identity));
            expect(p.key).to.equal(key);
            expect(p.problem).to.contain(text);
            expect(p.fix).to.match(fix);
        });
    }
    it("refuses a misspelt field, naming the closest known one", () => {
        const p = only(rule({ jwt: { isuer: ISSUER, issuer: ISSUER, jwksUri: JWKS } }));
        expect(p.key).to.equal("rules[0].identity.jwt.isuer");
        expect(p.fix).to.contain("issuer");
        const q = only(rule({ jwt: { issuer: ISSUER, jwksUri: JWKS }, mising: "refuse" }));
        expect(q.key).to.equal("rules[0].identity.mising");
        expect(q.fix).to.contain("missing");
    });
    for (const [field, more] of [
        ["header.perValue", { header: { name: "x-user", perValue: true } }],
        ["query.perValue", { query: { name: "user", perValue: true } }],
        ["perClientAddress", { perClientAddress: true }],
        ["clientCidr", { clientCidr: { cidrs: ["10.0.0.0/8"] } }],
    ] as const) {
        it(`refuses identity with ${field} (both would key the counter)`, () => {
            const p = only(rule({ jwt: { issuer: ISSUER, jwksUri: JWKS } }, more));
            expect(p.key).to.equal(`rules[0].${field}`);
            expect(p.problem).to.contain("cannot be combined with identity");
            expect(p.fix).to.contain(`remove rules[0].${field}`);
        });
    }
    it("refuses one issuer with two JSON Web Key Sets, at the second rule; the same issuer said twice the same way passes", () => {
        const a = rule({ jwt: { issuer: ISSUER, jwksUri: JWKS } });
        const b = { ...rule({ jwt: { issuer: ISSUER, jwksUri: "https://other.example.com/jwks" } }), name: "b" };
        const p = only(a, b);
        expect(p.key).to.equal("rules[1].identity.jwt");
        expect(p.fix).to.contain(`set rules[1].identity.jwt.jwksUri to "${JWKS}"`);
        expect(problemsOf(a, { ...a, name: "b" })).to.deep.equal([]);
    });
});

const metadataAction = (key: string, claim: string) => ({
    metadata: {
        descriptor_key: key,
        metadata_key: { key: "envoy.filters.http.jwt_authn", path: [{ key: "payload" }, { key: claim }] },
        default_value: "(none)",
        source: "DYNAMIC",
    },
});

describe("identity: what the gateway sends and the service counts", () => {
    const plan = (identity: unknown, gateway?: unknown) => {
        const p = planGlobalRateLimit(G({ rules: [rule(identity, { path: { prefix: "/orders" } })], ...(gateway ? { gateway } : {}) }));
        expect(p.problems).to.deep.equal([]);
        return p;
    };
    const entries = (p: ReturnType<typeof plan>) => JSON.parse(JSON.stringify(p.filters)) as any;
    const rateLimitsOf = (p: ReturnType<typeof plan>): any[] => {
        const found: any[] = [];
        const walk = (o: any): void => {
            if (Array.isArray(o)) o.forEach(walk);
            else if (o && typeof o === "object") for (const [k, v] of Object.entries(o)) k === "rate_limits" ? found.push(...(v as any[])) : walk(v);
        };
        walk(entries(p));
        return found;
    };

    it("keys the counter by the verified payload's iss and claim (Istio's payload_in_metadata key `payload`), never by a request header", () => {
        const limits = rateLimitsOf(plan({ jwt: { issuer: ISSUER, jwksUri: JWKS, claim: "email" } }));
        const fallback = (v: string) => ({ generic_key: { descriptor_key: "identity_fallback", descriptor_value: v } });
        const client = { masked_remote_address: { v4_prefix_mask_len: 32, v6_prefix_mask_len: 64 } };
        expect(limits.map((l) => l.actions.slice(1))).to.deep.equal([
            [metadataAction("identity_issuer", "iss"), metadataAction("identity", "email")],
            // No token or another issuer's: per client, by the issuer only (never by a claim the rule's issuer did not sign).
            [fallback("unverified"), metadataAction("identity_issuer", "iss"), client],
            // The issuer's token without the claim: per client.
            [fallback("no_claim"), metadataAction("identity_issuer", "iss"), metadataAction("identity", "email"), client],
        ]);
        // Nothing a client writes reaches the descriptor: no request_headers or query action.
        expect(JSON.stringify(limits)).to.not.match(/request_headers|query_parameters/);
    });
    it("with missing: refuse, no client in any entry (the fallback allows none)", () => {
        const limits = rateLimitsOf(plan({ jwt: { issuer: ISSUER, jwksUri: JWKS }, missing: "refuse" }));
        expect(limits.map((l) => l.actions.slice(1))).to.deep.equal([
            [metadataAction("identity_issuer", "iss"), metadataAction("identity", "sub")],
            [{ generic_key: { descriptor_key: "identity_fallback", descriptor_value: "unverified" } }, metadataAction("identity_issuer", "iss")],
        ]);
    });
    it("renders the token check on the gateway's pods, one jwtRules entry per issuer; none without an identity rule (control)", () => {
        const p = plan({ jwt: { issuer: ISSUER, jwksUri: JWKS, audiences: ["shop"] } });
        const ra = p.policies.filter((o) => o.kind === "RequestAuthentication");
        expect(ra).to.have.length(1);
        expect(ra[0].apiVersion).to.equal("security.istio.io/v1");
        expectGolden("identity/request-authentication-selector", ra[0].spec);
        expect([ra[0].spec.selector, ra[0].spec.jwtRules.map((j: any) => j.issuer)]).to.deep.equal([{ matchLabels: { app: "shop-gateway" } }, [ISSUER]]);
        const none = planGlobalRateLimit(G({}));
        expect(none.problems).to.deep.equal([]);
        expect(none.policies.filter((o) => o.kind === "RequestAuthentication")).to.deep.equal([]);
    });
    it("on a Gateway API Gateway, the token check targets it by name (targetRefs), in its namespace", () => {
        const p = plan({ jwt: { issuer: ISSUER, jwksUri: JWKS } }, { gatewayApiName: "shop-gw", namespace: "shop", virtualHosts: ["shop.example.com:80"] });
        const [ra] = p.policies.filter((o) => o.kind === "RequestAuthentication");
        expect(ra.metadata.namespace).to.equal("shop");
        expectGolden("identity/request-authentication-target-refs", ra.spec);
        expect([ra.spec.selector, ra.spec.targetRefs.map((t: any) => t.name), ra.spec.jwtRules.map((j: any) => j.issuer)]).to.deep.equal([
            undefined,
            ["shop-gw"],
            [ISSUER],
        ]);
    });
    it("a refused plan renders no token check", () => {
        const p = planGlobalRateLimit(G({ rules: [rule({ jwt: { issuer: ISSUER, jwksUri: "nope" } })] }));
        expect(p.problems).to.have.length(1);
        expect(p.policies).to.deep.equal([]);
    });
});

describe("gateway model: Envoy's metadata action over the JWT filter's payload", () => {
    const at = (claim: string, more: Record<string, unknown> = {}) => ({
        descriptor_key: "identity",
        metadata_key: { key: "envoy.filters.http.jwt_authn", path: [{ key: "payload" }, { key: claim }] },
        source: "DYNAMIC",
        ...more,
    });
    it("sends a verified string claim; the default without one; nothing (no descriptor) without a default; skips with skip_if_absent", () => {
        const md = jwtDynamicMetadata({ iss: "i", sub: "alice", n: 7, empty: "" });
        expect(metadataActionValue(at("sub"), md)).to.equal("alice");
        expect(metadataActionValue(at("sub", { default_value: "(none)" }), jwtDynamicMetadata(undefined))).to.equal("(none)");
        // Envoy reads string_value(): a number or an empty string is absent.
        expect(metadataActionValue(at("n", { default_value: "(none)" }), md)).to.equal("(none)");
        expect(metadataActionValue(at("empty"), md)).to.equal(undefined);
        expect(metadataActionValue(at("missing", { skip_if_absent: true }), md)).to.equal("skip");
    });
    it("a request header never stands in for the metadata (the model has no header input to this action)", () => {
        expect(descriptorFor({ actions: [{ metadata: at("sub", { default_value: "(none)" }) }] }, { sub: "mallory", identity: "mallory" })).to.deep.equal([
            { key: "identity", value: "(none)" },
        ]);
    });
    it("route-entry metadata is not modelled (refused, not guessed)", () => {
        expect(() => metadataActionValue(at("sub", { source: "ROUTE_ENTRY" }), {})).to.throw("not modelled");
    });
});

describe("identity: PlatformRateLimit renders no token check, so refuses the field", () => {
    it("refuses identity in defaults and overrides, under the source's rule path; the same rule without it passes (control)", () => {
        const id = { jwt: { issuer: ISSUER, jwksUri: JWKS } };
        for (const source of ["defaults", "overrides"] as const) {
            const problems: Problem[] = [];
            resolveSource(source, { rules: [{ name: "per-user", identity: id, requestsPerUnit: 10, unit: M }] }, problems);
            const p = problems.find((x) => x.key === `${source}.rules[0].identity`);
            expect(p, JSON.stringify(problems)).to.not.equal(undefined);
            expect(p!.fix).to.contain("GlobalRateLimit");
            const fine: Problem[] = [];
            resolveSource(source, { rules: [{ name: "all", requestsPerUnit: 10, unit: M }] }, fine);
            expect(fine).to.deep.equal([]);
        }
    });
});
