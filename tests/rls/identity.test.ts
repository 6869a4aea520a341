/**
 * Limits per verified identity (a rule's `identity`) on the REAL envoyproxy/ratelimit service and
 * Redis. The gateway MODEL (no Envoy here) turns each request into descriptors, reading the verified
 * token's payload where Istio's JWT filter configuration puts it (dynamic metadata
 * `envoy.filters.http.jwt_authn` → `payload`; what Istio's generator writes is checked in the istio
 * tier); the service decides. Tried as a client would: two users, the same user from another
 * address, a request without a token, a token of another issuer the gateway also verifies, a token
 * without the claim, and a header named like the claim. Negative controls: the header-keyed recipe
 * (a client's fresh values mint fresh counters) and the config without the fallback nodes (a
 * request without a token escapes).
 */
import { expect } from "chai";
import { parse, stringify } from "yaml";
import { MissingIdentity } from "../../builders/identity-args";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";

const M = LimitUnit.Minute;
const ISSUER = "https://auth.shop.example.com";
const OTHER = "https://partner.example.com";
const jwt = { issuer: ISSUER, jwksUri: `${ISSUER}/.well-known/jwks.json` };
const RULES: RateLimitRuleArgs[] = [
    { name: "orders-per-user", path: { prefix: "/orders" }, identity: { jwt }, requestsPerUnit: 3, unit: M },
    { name: "account-per-user", path: { prefix: "/account" }, identity: { jwt, missing: MissingIdentity.Refuse }, requestsPerUnit: 3, unit: M },
];
const token = (sub: string | undefined, iss = ISSUER) => ({ iss, ...(sub === undefined ? {} : { sub }), aud: "shop", exp: 2_000_000_000 });
const entriesOf = (r: { x: { descriptors: { entries: { key: string; value: string }[] }[] } }) =>
    r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));

describe("rls: limits per verified identity (the JWT filter's payload, never a header)", function () {
    const { send, okCount, counters } = useShop(RULES);

    it("two users count apart: alice's 4th request is refused, bob's 3 pass; alice from another address is still refused", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                4,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "192.0.2.10", jwtPayload: token("alice") }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "192.0.2.10", jwtPayload: token("bob") }),
            ),
        ).to.equal(3);
        const moved = await send("/orders", { clientAddress: "198.51.100.99", jwtPayload: token("alice") });
        expect(entriesOf(moved)).to.include(`rule=orders-per-user,identity_issuer=${ISSUER},identity=alice`);
        expect(moved.d?.overallCode).to.equal("OVER_LIMIT");
    });

    it("a header named like the claim or the metadata does not reach the descriptor: the verified sub does", async () => {
        await ensureWindow(10);
        const headers = { identity: "mallory", sub: "mallory", "x-jwt-payload": "eyJzdWIiOiJtYWxsb3J5In0", "identity-issuer": OTHER };
        const r = await send("/orders", { clientAddress: "192.0.2.11", jwtPayload: token("carol"), headers });
        expect(entriesOf(r)).to.include(`rule=orders-per-user,identity_issuer=${ISSUER},identity=carol`);
        expect(entriesOf(r).join(" ")).to.not.contain("mallory");
        // Without a token the same headers meet the per-client fallback, not a counter of "mallory".
        const bare = await send("/orders", { clientAddress: "192.0.2.11", headers });
        expect(entriesOf(bare)).to.include("rule=orders-per-user,identity_fallback=unverified,identity_issuer=(none),masked_remote_address=192.0.2.11/32");
    });

    it("missing: perClient: client A's 4th request without a token is refused; client B's 3 pass; alice's own budget is untouched", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                4,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "192.0.2.12" }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "198.51.100.12" }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "192.0.2.12", jwtPayload: token("dave") }),
            ),
        ).to.equal(3);
    });

    it("a token of another issuer the gateway also verifies, with a fresh sub each time, is counted per client (no counter per sub)", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                5,
                (i) => `/orders/${i}`,
                (i) => ({ clientAddress: "192.0.2.13", jwtPayload: token(`fresh-${i}`, OTHER) }),
            ),
        ).to.equal(3);
        const r = await send("/orders", { clientAddress: "192.0.2.13", jwtPayload: token("alice", OTHER) });
        expect(entriesOf(r)).to.include(`rule=orders-per-user,identity_fallback=unverified,identity_issuer=${OTHER},masked_remote_address=192.0.2.13/32`);
        expect(r.d?.overallCode).to.equal("OVER_LIMIT");
        // In Redis: one counter for the 6 requests (this client, that issuer), none per sub.
        expect(await counters("orders-per-user")).to.have.length(1);
    });

    it("a token of the issuer without the claim (or with a number in it) is counted per client", async () => {
        await ensureWindow(10);
        const payloads = [token(undefined), { ...token("x"), sub: 42 }];
        expect(
            await okCount(
                4,
                (i) => `/orders/${i}`,
                (i) => ({ clientAddress: "192.0.2.14", jwtPayload: payloads[i % 2] }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                1,
                () => "/orders",
                () => ({ clientAddress: "198.51.100.14", jwtPayload: token(undefined) }),
            ),
        ).to.equal(1);
    });

    it("missing: refuse: no token, another issuer's token, or no claim is refused at once; a verified user gets 3", async () => {
        await ensureWindow(10);
        for (const jwtPayload of [undefined, token("erin", OTHER), token(undefined)]) {
            const r = await send("/account", { clientAddress: "192.0.2.15", ...(jwtPayload ? { jwtPayload } : {}) });
            expect(r.d?.overallCode, JSON.stringify(jwtPayload)).to.equal("OVER_LIMIT");
        }
        expect(
            await okCount(
                4,
                (i) => `/account/${i}`,
                () => ({ clientAddress: "192.0.2.15", jwtPayload: token("erin") }),
            ),
        ).to.equal(3);
    });
});

describe("rls: negative control, the per-value header recipe without a token check: a client's fresh x-user values mint fresh counters", function () {
    const { okCount } = useShop([
        { name: "orders-per-user", path: { prefix: "/orders" }, header: { name: "x-user", perValue: true }, requestsPerUnit: 3, unit: M },
    ]);

    it("8 requests from one client, each with a new x-user, all pass (the identity rule refuses this client's 4th without a token)", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                8,
                (i) => `/orders/${i}`,
                (i) => ({ clientAddress: "192.0.2.20", headers: { "x-user": `forged-${i}` } }),
            ),
        ).to.equal(8);
    });
});

/** The config without the fallback nodes: what a rule keyed by the claim alone would count. */
function withoutFallback(configYaml: string): string {
    const cfg = parse(configYaml);
    const drop = (ds: any[]): any[] =>
        ds.filter((d) => d.key !== "identity_fallback").map((d) => (d.descriptors ? { ...d, descriptors: drop(d.descriptors) } : d));
    return stringify({ ...cfg, descriptors: drop(cfg.descriptors) });
}

describe("rls: negative control, the identity rule's config without its fallback nodes: requests without a verified identity escape", function () {
    const { okCount } = useShop(RULES, {}, withoutFallback);

    it("no token: 6 of 6 pass (perClient); another issuer: 6 of 6 pass; refuse: a request without a token passes", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                6,
                (i) => `/orders/${i}`,
                () => ({ clientAddress: "192.0.2.30" }),
            ),
        ).to.equal(6);
        expect(
            await okCount(
                6,
                (i) => `/orders/${i}`,
                (i) => ({ clientAddress: "192.0.2.31", jwtPayload: token(`f-${i}`, OTHER) }),
            ),
        ).to.equal(6);
        expect(
            await okCount(
                1,
                () => "/account",
                () => ({ clientAddress: "192.0.2.32" }),
            ),
        ).to.equal(1);
    });
});
