/**
 * User-defined rules on the REAL envoyproxy/ratelimit service and Redis: a shop's gateway (not
 * bookinfo) limited by GlobalRateLimit's typed rules (header per value, header presence, client
 * address, per client on one path, shadow; a request without the header, an inverted header, a
 * repeated header). The component is evaluated under Pulumi's mocks; the gateway MODEL turns each
 * request into descriptors from the rendered filters; the real service decides with the rendered
 * config.yaml and environment.
 * Counts are exact (one window, one process). The path rules cover an exact path (`/login`) and a
 * prefix (`/search`).
 *
 * Requests reach the model as Envoy's HTTP/1 codec hands them on (`envoyHeaders`): header names in
 * lower case, leading and trailing spaces and tabs of a value removed (RFC 9110 §5.5; HTTP/2 and 3
 * refuse upper-case names). An empty value stays a value: Envoy's `request_headers` action sends it
 * (it skips only an absent header), and `header_value_match` compares it as "".
 *
 * The rendered service caches an over-limit key in the process (LOCAL_CACHE_SIZE_IN_BYTES) until
 * the window ends, whatever Redis holds after the flush between tests. So each counter that runs out
 * belongs to one test: every request of a test that is not about the API key carries a key of its
 * own (`ownKey`), since the default per-api-key rule counts all requests without one together.
 */
import { expect } from "chai";
import { LimitUnit, MissingHeader, RateLimitRuleArgs } from "../../builders/rule-args";
import { useShop } from "./harness/shop";
import { ensureWindow, minuteOf } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    // whenMissing left out: MissingHeader.SharedCounter, all requests without x-api-key share one counter of 3.
    { name: "per-api-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "has-token", header: { name: "authorization" }, requestsPerUnit: 4, unit: M },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 6, unit: M },
    { name: "login-per-client", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 2, unit: M },
    { name: "search", path: { prefix: "/search" }, requestsPerUnit: 3, unit: M },
    { name: "beta", header: { name: "x-beta", value: "on" }, requestsPerUnit: 1, unit: M, shadow: true },
];

/** A second shop gateway: what happens without the header, and an inverted header. Each rule on its own path. */
const MISSING_RULES: RateLimitRuleArgs[] = [
    {
        name: "partner",
        path: { prefix: "/partner" },
        header: { name: "x-partner-id", perValue: true, whenMissing: MissingHeader.Refuse },
        requestsPerUnit: 2,
        unit: M,
    },
    { name: "feed", path: { prefix: "/feed" }, header: { name: "x-session", perValue: true, whenMissing: MissingHeader.Ignore }, requestsPerUnit: 2, unit: M },
    { name: "external-reports", path: { prefix: "/reports" }, header: { name: "x-env", value: "internal", invert: true }, requestsPerUnit: 3, unit: M },
    { name: "upload", path: { prefix: "/upload" }, header: { name: "x-api-key", perValue: true }, perClientAddress: true, requestsPerUnit: 2, unit: M },
    {
        name: "b2b",
        path: { prefix: "/b2b" },
        header: { name: "x-partner-id", perValue: true, whenMissing: MissingHeader.Refuse },
        perClientAddress: true,
        requestsPerUnit: 2,
        unit: M,
    },
    // A repeated header, each rule on its own path: per value with Refuse, per value shared (default), invert.
    {
        name: "tenant",
        path: { prefix: "/tenant" },
        header: { name: "x-tenant", perValue: true, whenMissing: MissingHeader.Refuse },
        requestsPerUnit: 2,
        unit: M,
    },
    { name: "orders", path: { prefix: "/orders" }, header: { name: "x-key", perValue: true }, requestsPerUnit: 2, unit: M },
    { name: "audit", path: { prefix: "/audit" }, header: { name: "x-env", value: "internal", invert: true }, requestsPerUnit: 2, unit: M },
];

type Headers = Record<string, string>;

let keys = 0;
/** A fresh API key: the per-api-key rule (3 per key) never binds and the shared key-less counter is never touched. */
const ownKey = () => ({ "x-api-key": `own-${++keys}` });

describe("rls: user-defined rules (header, client address, combined, shadow) on the real service; a shop's gateway via the model", function () {
    const { send, okCount, ruleOf, counters } = useShop(RULES);

    it("the service loaded the config the rules compiled to (it answers with the rules' limits, a request without the key included)", async () => {
        const { d } = await send("/", { headers: { "x-api-key": "k" }, clientAddress: "198.51.100.1" });
        expect(d!.statuses.map((s) => s.currentLimit?.requestsPerUnit)).to.deep.equal([3, 6]);
        // Without the key: the per-api-key rule's missing counter of the client (3), not nothing.
        const noKey = await send("/", { clientAddress: "198.51.100.1" });
        expect(noKey.x.descriptors.map((x) => x.entries.map((e) => `${e.key}=${e.value}`))).to.deep.equal([
            ["rule=per-api-key", "missing_value=shared", "masked_remote_address=198.51.100.1/32"],
            ["rule=per-client", "masked_remote_address=198.51.100.1/32"],
        ]);
        expect(noKey.d!.statuses.map((s) => s.currentLimit?.requestsPerUnit)).to.deep.equal([3, 6]);
    });

    // The only test that spends the key-less counter (the service then caches it as over the limit
    // until the minute ends). Each request from its own address: the per-client rule never binds.
    it("header per value, default whenMissing (SharedCounter): each API key 3 per minute of its own; requests without a key share ONE counter of 3 per client that keyed requests never use", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        let host = 0;
        const from = () => `192.0.2.${++host}`;
        expect(
            await okCount(
                5,
                () => "/items",
                () => ({ headers: { "x-api-key": "alpha" }, clientAddress: from() }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                5,
                () => "/items?page=2",
                () => ({ headers: { "x-api-key": "beta" }, clientAddress: from() }),
            ),
        ).to.equal(3);
        expect(await counters("per-api-key"), "keyed requests: one counter per key, none without a key").to.have.length(2);
        // Without the key, from 5 different clients and paths: each client its own missing counter, so all pass.
        const noKey: string[] = [];
        for (let i = 0; i < 5; i++) {
            const client = from();
            const r = await send(`/items/${i}?q=${i}`, { clientAddress: client });
            const rule = ruleOf(r, "per-api-key")!;
            expect(rule.entries, "the rule, missing_value and the client").to.deep.equal([
                "rule=per-api-key",
                "missing_value=shared",
                `masked_remote_address=${client}/32`,
            ]);
            expect(rule.status.currentLimit?.requestsPerUnit).to.equal(3);
            noKey.push(r.d!.overallCode);
        }
        expect(noKey).to.deep.equal(["OK", "OK", "OK", "OK", "OK"]);
        // One client without a key: 3, then refused.
        const one = from();
        expect(
            await okCount(
                5,
                (i) => `/items/k${i}`,
                () => ({ clientAddress: one }),
            ),
        ).to.equal(3);
        // The spent key-less counter refuses no keyed request: a new key still has its 3.
        expect(
            await okCount(
                4,
                () => "/items",
                () => ({ headers: { "x-api-key": "gamma" }, clientAddress: from() }),
            ),
        ).to.equal(3);
        expect((await send("/items", { clientAddress: one })).d!.overallCode, "still refused without a key").to.equal("OVER_LIMIT");
        expect(await counters("per-api-key")).to.have.length(9); // alpha, beta, gamma, and the key-less counter of 6 clients
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // What a client would send instead of the key, or to reuse a spent one. An empty value is a value
    // (Envoy's request_headers skips only an absent header): one more counter of 3, shared by every
    // client that sends it empty, apart from the key-less one. Spaces around a key are stripped by
    // Envoy, letter case of the NAME is lowered: both land on the key's own counter.
    it("header per value, what a client tries instead: an empty key (one shared counter of 3, apart from the key-less one), spaces only, spaces around a spent key, X-API-Key in other letter case", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        let host = 0;
        const from = () => `192.0.2.${100 + ++host}`;
        const perKey = async (headers: Record<string, string>) => {
            const r = await send("/items", { headers, clientAddress: from() });
            const rule = ruleOf(r, "per-api-key")!;
            expect(rule.status.code, JSON.stringify(headers)).to.equal(r.d!.overallCode);
            return { entries: rule.entries, code: rule.status.code };
        };
        // Empty, then spaces only (sent empty), then empty again: one counter of 3, then refused.
        const empty: Headers[] = [{ "x-api-key": "" }, { "x-api-key": "   " }, { "X-Api-Key": "\t" }, { "x-api-key": "" }, { "x-api-key": " " }];
        const got = [];
        for (const h of empty) got.push(await perKey(h));
        expect(got.map((g) => g.entries)).to.deep.equal(Array(5).fill(["rule=per-api-key", "x-api-key="]));
        expect(got.map((g) => g.code)).to.deep.equal(["OK", "OK", "OK", "OVER_LIMIT", "OVER_LIMIT"]);
        const emptyCounters = await counters("per-api-key");
        expect(emptyCounters, "the empty value's counter, not the key-less one").to.have.length(1);
        expect(emptyCounters[0]).to.match(/^shop_rule_per-api-key_x-api-key__[0-9]+$/);
        // Spend key delta, then reuse it in other spellings: all on delta's counter.
        for (let i = 0; i < 3; i++) expect((await perKey({ "x-api-key": "delta" })).code).to.equal("OK");
        for (const h of <Headers[]>[
            { "X-API-Key": "delta" },
            { "X-API-KEY": "delta" },
            { "x-api-key": " delta " },
            { "x-api-key": "\tdelta" },
            { "x-api-key": "delta  " },
        ]) {
            const g = await perKey(h);
            expect(g.entries, JSON.stringify(h)).to.deep.equal(["rule=per-api-key", "x-api-key=delta"]);
            expect(g.code, JSON.stringify(h)).to.equal("OVER_LIMIT");
        }
        // A space INSIDE the value, or the value's letter case, makes another key (per value, by design).
        expect((await perKey({ "x-api-key": "del ta" })).code).to.equal("OK");
        expect((await perKey({ "x-api-key": "Delta" })).code).to.equal("OK");
        expect(await counters("per-api-key")).to.have.length(4); // empty, delta, "del ta", Delta
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // From here on every request carries its own API key (`ownKey`): the per-api-key rule never binds.
    it("header presence: 4 per minute for all requests carrying authorization together, whatever its value", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                7,
                (i) => `/p${i}`,
                (i) => ({ headers: { authorization: `Bearer t${i}`, ...ownKey() }, clientAddress: `198.51.100.${i + 1}` }),
            ),
        ).to.equal(4);
    });

    it("client address: 6 per minute per address, another address has its own 6", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                9,
                (i) => `/any/${i}?q=${i}`,
                () => ({ headers: ownKey(), clientAddress: "203.0.113.7" }),
            ),
        ).to.equal(6);
        expect(
            await okCount(
                9,
                (i) => `/any/${i}`,
                () => ({ headers: ownKey(), clientAddress: "203.0.113.8" }),
            ),
        ).to.equal(6);
    });

    it("combined, per client on one path: /login 2 per minute per client with any query; other paths of that client are not refused by it", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                4,
                (i) => `/login?next=/x${i}`,
                () => ({ headers: ownKey(), clientAddress: "203.0.113.20" }),
            ),
        ).to.equal(2);
        expect(
            await okCount(
                4,
                () => "/login",
                () => ({ headers: ownKey(), clientAddress: "203.0.113.21" }),
            ),
        ).to.equal(2);
        // The same client elsewhere: only its per-client rule (6/min, 4 used) counts.
        expect(
            await okCount(
                2,
                () => "/cart",
                () => ({ headers: ownKey(), clientAddress: "203.0.113.20" }),
            ),
        ).to.equal(2);
    });

    // The promise of a path prefix (rules.ts, PathMatchArgs.prefix): `/search` matches `/search`,
    // `/search/...` and `/search?...`, not `/searchx` (Envoy Gateway's path-separated prefix form,
    // `^/search(/.*|\?.*|#.*|;.*|$)`, refuses `/searchx` too), and the query never matters. A regex
    // that matched the prefix anywhere in the path, or without the separator, or only without a
    // query, fails here. Every request comes from its own client address so the per-client rule
    // (6/min) never binds; each answer is checked on the search descriptor's own status.
    it("path prefix: /search, /search/x and /search?q=1 share 3 per minute; /x/search, /searchx and other paths are not counted by it", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        let client = 0;
        const from = () => ({ headers: ownKey(), clientAddress: `198.51.100.${++client}` });
        const searchStatus = (r: Awaited<ReturnType<typeof send>>) => {
            const i = r.x.descriptors.findIndex((d) => d.entries[0].value === "search");
            return i < 0 ? undefined : r.d!.statuses[i].code;
        };
        const searchKeys = () => counters("search");
        // Must not count: the prefix elsewhere in the path, without a separator after it, in the
        // query, or left by dot segments. Sent first: none of them may create the counter.
        const notCounted = [
            "/x/search",
            "/searchx",
            "/search-results",
            "/searches",
            "/x/search/y",
            "/x?next=/search",
            "/?q=/search",
            "/search/../x",
            "/",
            "/sear",
        ];
        const pass = async () => {
            for (const p of notCounted) {
                const r = await send(p, from());
                expect(searchStatus(r), `${p} sends no search descriptor`).to.equal(undefined);
                expect(r.d!.overallCode, p).to.equal("OK");
            }
        };
        await pass();
        expect(await searchKeys(), "no search counter before a counted request").to.deep.equal([]);
        // Must count, one counter: the prefix itself, a path under it, and with a query.
        for (const p of ["/search", "/search/x", "/search?q=1"]) {
            const r = await send(p, from());
            expect(searchStatus(r), p).to.equal("OK");
            expect(r.d!.overallCode, p).to.equal("OK");
        }
        expect(await searchKeys(), "one counter for all three").to.have.length(1);
        // What a client would try next to get around the spent limit: other queries, a fragment,
        // a trailing slash, deeper paths, dot segments (also %2e), a backslash. Each reaches the
        // search rule after Envoy's path normalization and is refused by it.
        const retries = [
            "/search",
            "/search?q=2",
            "/search?",
            "/search?cachebust=1&q=1",
            `/search?q=${"a".repeat(3000)}`,
            "/search#top",
            "/search/",
            "/search/x/y?z=1",
            "/search/./",
            "/x/../search",
            "/./search",
            "/%2e/search",
            "/search/%2e%2e/search",
            "\\search",
        ];
        for (const p of retries) {
            const r = await send(p, from());
            expect(searchStatus(r), `${p} counts against /search`).to.equal("OVER_LIMIT");
            expect(r.d!.overallCode, p).to.equal("OVER_LIMIT");
        }
        // The spent /search counter still refuses none of the others.
        await pass();
        expect(await searchKeys()).to.have.length(1);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // The pinned service sets a shadow limit's status to OK when over it (src/limiter/base_limiter.go)
    // and counts the excess in the limit's shadow_mode statistic; the counter still runs out.
    it("shadow rule: over its limit the descriptor's status stays OK with nothing remaining, the request passes", async () => {
        await ensureWindow(10);
        const first = await send("/", { headers: { "x-beta": "on", ...ownKey() }, clientAddress: "192.0.2.200" });
        const second = await send("/", { headers: { "x-beta": "on", ...ownKey() }, clientAddress: "192.0.2.201" });
        expect(first.d!.overallCode).to.equal("OK");
        expect(second.d!.overallCode).to.equal("OK");
        const i = second.x.descriptors.findIndex((d) => d.entries[0].value === "beta");
        expect(second.d!.statuses[i].code).to.equal("OK");
        expect(second.d!.statuses[i].limitRemaining).to.equal(0);
        expect(second.d!.statuses[i].currentLimit?.requestsPerUnit).to.equal(1);
        const third = await send("/", { headers: { "x-beta": "on", ...ownKey() }, clientAddress: "192.0.2.202" });
        expect(third.d!.overallCode).to.equal("OK");
        expect(second.x.descriptors[i].limit?.shadow, "the model reads the beta entry as shadow").to.equal(true);
        expect(second.x.limited).to.equal(true); // the per-client rule still applies
    });
});

// Each rule sits on its own path prefix, so a test's requests meet one rule only: the answer's
// overall code is that rule's. Each counter that runs out belongs to one test (see the top comment).
describe("rls: user-defined rules, a request without the header (whenMissing Refuse, Ignore, per client) and an inverted header (invert) on the real service; a shop's gateway via the model", function () {
    const { shop, send, okCount, ruleOf, counters, perValueSide } = useShop(MISSING_RULES);

    // Refuse puts `requests_per_unit: 0` on the rule's own node. The pinned service loads it (no
    // check for 0 in config_impl.go) and refuses from the first hit: 1 > 0 in base_limiter.go.
    it("whenMissing Refuse: every request without x-partner-id is refused from the first one (limit 0 on the real service), from any client; each partner id still gets 2 per minute", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        expect(await shop.rlconfig()).to.include("shop.rule_partner.missing_value_shared: unit=MINUTE requests_per_unit=0");
        for (let i = 0; i < 4; i++) {
            const r = await send(`/partner/orders?page=${i}`, { clientAddress: `198.51.100.${i + 1}` });
            const rule = ruleOf(r, "partner")!;
            expect(rule.entries, "the rule and missing_value: no client, it refuses all").to.deep.equal(["rule=partner", "missing_value=shared"]);
            expect(rule.status.code).to.equal("OVER_LIMIT");
            expect(rule.status.currentLimit?.requestsPerUnit).to.equal(0);
            expect(rule.status.limitRemaining).to.equal(0);
            expect(r.d!.overallCode).to.equal("OVER_LIMIT");
        }
        // With the header: counted per value, 2 each, whatever the client address.
        for (const id of ["p1", "p2"]) {
            expect(
                await okCount(
                    4,
                    (i) => `/partner/orders/${i}`,
                    (i) => ({ headers: { "x-partner-id": id }, clientAddress: `198.51.100.${i + 10}` }),
                ),
                id,
            ).to.equal(2);
        }
        // The refusal is on the rule's path only: elsewhere the gateway sends nothing, the request passes.
        const elsewhere = await send("/catalog", { clientAddress: "198.51.100.1" });
        expect(elsewhere.x.descriptors).to.deep.equal([]);
        expect((await send("/partner", { clientAddress: "198.51.100.99" })).d!.overallCode, "still refused without the header").to.equal("OVER_LIMIT");
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // An EMPTY header is not a missing one: Envoy's request_headers action sends the value "" (it
    // skips only an absent header), which the service counts under the header's catch-all like any
    // other value. So Refuse refuses the client that leaves x-partner-id out, not the one that sends
    // it empty: that one gets the rule's 2 per minute, shared with every other empty sender.
    it("whenMissing Refuse, what a client tries instead: an empty x-partner-id is a value (2 per minute, one counter for every empty sender), not refused; spaces only are empty; a spent id in other letter case or with spaces stays spent", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        let host = 0;
        const partner = async (headers: Record<string, string>) => {
            const r = await send("/partner/orders", { headers, clientAddress: `192.0.2.${++host}` });
            const rule = ruleOf(r, "partner")!;
            return { entries: rule.entries, code: rule.status.code, limit: rule.status.currentLimit?.requestsPerUnit };
        };
        const empty = [];
        for (const h of <Headers[]>[{ "x-partner-id": "" }, { "x-partner-id": "  " }, { "X-Partner-Id": "" }]) empty.push(await partner(h));
        expect(empty.map((e) => e.entries)).to.deep.equal(Array(3).fill(["rule=partner", "x-partner-id="]));
        expect(empty.map((e) => [e.code, e.limit])).to.deep.equal([
            ["OK", 2],
            ["OK", 2],
            ["OVER_LIMIT", 2],
        ]);
        for (let i = 0; i < 2; i++) expect((await partner({ "x-partner-id": "p9" })).code).to.equal("OK");
        for (const h of <Headers[]>[{ "X-Partner-ID": "p9" }, { "x-partner-id": " p9" }, { "x-partner-id": "p9\t" }]) {
            const g = await partner(h);
            expect(g.entries, JSON.stringify(h)).to.deep.equal(["rule=partner", "x-partner-id=p9"]);
            expect(g.code, JSON.stringify(h)).to.equal("OVER_LIMIT");
        }
        expect(await counters("partner")).to.have.length(2); // "" and p9; nothing sent without the header
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    it("whenMissing Ignore (the opt-out): requests without x-session send nothing for the rule and all pass; each session still gets 2 per minute", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        for (let i = 0; i < 6; i++) {
            const r = await send(`/feed?page=${i}`, { clientAddress: "203.0.113.5" });
            expect(r.x.descriptors, "no descriptor: Envoy does not ask the service").to.deep.equal([]);
            expect(r.d).to.equal(undefined);
        }
        expect(await counters("feed"), "nothing counted without the header").to.deep.equal([]);
        expect(
            await okCount(
                4,
                () => "/feed",
                () => ({ headers: { "x-session": "s1" }, clientAddress: "203.0.113.5" }),
            ),
        ).to.equal(2);
        expect(
            await okCount(
                4,
                () => "/feed",
                () => ({ headers: { "x-session": "s2" }, clientAddress: "203.0.113.5" }),
            ),
        ).to.equal(2);
        // An empty x-session is sent, and counted like a value.
        const empty = await send("/feed", { headers: { "x-session": "" }, clientAddress: "203.0.113.5" });
        expect(ruleOf(empty, "feed")!.entries).to.deep.equal(["rule=feed", "x-session="]);
        expect(empty.d!.overallCode).to.equal("OK");
        expect(await counters("feed")).to.have.length(3);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // invert_match + treat_missing_header_as_empty: a request counts when x-env is absent or is
    // anything but `internal`, compared exactly (case-sensitive) after Envoy strips the spaces around
    // the value and lowers the NAME; one counter for all of them. One test: the counter, once spent,
    // stays cached as over the limit in the service process until the minute ends.
    it("header invert: x-env: other, an empty x-env and no x-env share one counter of 3 per minute; then Internal, INTERNAL, 'in ternal', internal-x, spaces only, X-Env: other are refused by it; x-env: internal (also X-Env: internal, ' internal ') is never counted", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        const reports = (headers?: Headers) => send("/reports/daily", { headers, clientAddress: "203.0.113.30" });
        const counted = async (h?: Headers) => {
            const r = await reports(h);
            const rule = ruleOf(r, "external-reports");
            expect(rule?.entries, JSON.stringify(h)).to.deep.equal(["rule=external-reports"]);
            expect(rule!.status.currentLimit?.requestsPerUnit).to.equal(3);
            return r.d!.overallCode;
        };
        const got = [];
        for (const h of [{ "x-env": "other" }, undefined, { "x-env": "" }]) got.push(await counted(h));
        expect(got, "other, absent, empty: 3 of 3").to.deep.equal(["OK", "OK", "OK"]);
        expect(await counters("external-reports"), "one counter for all of them").to.have.length(1);
        // What a client would send to pass as internal: each counts, and is refused now.
        const tries = <(Headers | undefined)[]>[
            { "x-env": "other" },
            undefined,
            { "x-env": "" },
            { "x-env": "   " },
            { "x-env": "Internal" },
            { "x-env": "INTERNAL" },
            { "x-env": "in ternal" },
            { "x-env": "internal-x" },
            { "x-env": "internal," },
            { "X-Env": "other" },
            { "x-envx": "internal" },
        ];
        for (const h of tries) expect(await counted(h), JSON.stringify(h)).to.equal("OVER_LIMIT");
        // x-env: internal, however the client spells the name or pads the value: never counted.
        for (const h of <Headers[]>[
            { "x-env": "internal" },
            { "X-Env": "internal" },
            { "X-ENV": "internal" },
            { "x-env": " internal " },
            { "x-env": "\tinternal" },
        ]) {
            const r = await reports(h);
            expect(r.x.descriptors, JSON.stringify(h)).to.deep.equal([]);
        }
        expect(await counters("external-reports")).to.have.length(1);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    it("with perClientAddress: requests without the header share one counter PER CLIENT ADDRESS (default, 2 each), or are refused per client (Refuse); with the header, per value and client", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        const upload = (addr: string, headers?: Record<string, string>) => send("/upload", { headers, clientAddress: addr });
        const noKeyA = await upload("203.0.113.50");
        expect(ruleOf(noKeyA, "upload")!.entries).to.deep.equal(["rule=upload", "missing_value=shared", "masked_remote_address=203.0.113.50/32"]);
        expect(noKeyA.d!.overallCode).to.equal("OK");
        expect(
            await okCount(
                3,
                () => "/upload/x",
                () => ({ clientAddress: "203.0.113.50" }),
            ),
            "client A without a key: 1 more",
        ).to.equal(1);
        expect(
            await okCount(
                3,
                () => "/upload",
                () => ({ clientAddress: "203.0.113.51" }),
            ),
            "client B without a key: its own 2",
        ).to.equal(2);
        expect(
            await okCount(
                3,
                () => "/upload",
                () => ({ headers: { "x-api-key": "k1" }, clientAddress: "203.0.113.50" }),
            ),
            "client A with k1: its own 2",
        ).to.equal(2);
        expect(
            await okCount(
                3,
                () => "/upload",
                () => ({ headers: { "x-api-key": "k1" }, clientAddress: "203.0.113.51" }),
            ),
            "client B with k1: its own 2",
        ).to.equal(2);
        expect(await counters("upload")).to.have.length(4);
        // Refuse per client: without the header refused from the first request, from each address.
        for (const addr of ["203.0.113.60", "203.0.113.61"]) {
            const r = await send("/b2b/orders", { clientAddress: addr });
            expect(ruleOf(r, "b2b")!.entries).to.deep.equal(["rule=b2b", "missing_value=shared"]);
            expect(ruleOf(r, "b2b")!.status.currentLimit?.requestsPerUnit).to.equal(0);
            expect(r.d!.overallCode).to.equal("OVER_LIMIT");
        }
        expect(
            await okCount(
                3,
                () => "/b2b/orders",
                () => ({ headers: { "x-partner-id": "p1" }, clientAddress: "203.0.113.60" }),
            ),
        ).to.equal(2);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // Envoy (model side, no Envoy here): `request_headers` sends a repeated header's FIRST value
    // (router_ratelimit.cc); `header_value_match` compares all its values joined with ","
    // (HeaderUtility::getAllOfHeaderAsString). A per-value rule sends a value only when that joined
    // text holds no comma; otherwise the rule's untrusted_value=shared counter (an application
    // reading the last value would otherwise be served a value the gateway never counted).
    it("a repeated header, what a client tries instead: per value, a repeated header (a fresh value first or last, an empty first value) sends no value and meets the one untrusted-value counter (0 with Refuse); invert, x-env: internal twice is 'internal,internal' and counted", async () => {
        await ensureWindow(20);
        const t0 = Date.now();
        const at = (path: string, headers: Record<string, string | string[]>) => send(path, { headers, clientAddress: "203.0.113.40" });
        const entriesOf = async (path: string, rule: string, headers: Record<string, string | string[]>) => {
            const r = await at(path, headers);
            const d = ruleOf(r, rule);
            return d ? [...d.entries, d.status.code] : ["nothing sent"];
        };
        // Refusing (0): one counter for all; counting: the client's own guard counter.
        const untrusted = (rule: string, code: string, perClient = false) => [
            `rule=${rule}`,
            "untrusted_value=shared",
            ...(perClient ? ["masked_remote_address=203.0.113.40/32"] : []),
            code,
        ];
        // whenMissing Refuse: one value is counted under it; repeated, in any case, the untrusted counter of 0.
        expect(await entriesOf("/tenant/x", "tenant", { "x-tenant": "t1" })).to.deep.equal(["rule=tenant", "x-tenant=t1", "OK"]);
        expect(await entriesOf("/tenant/x", "tenant", { "x-tenant": ["t1", "t1"] })).to.deep.equal(untrusted("tenant", "OVER_LIMIT"));
        expect(await entriesOf("/tenant/x", "tenant", { "x-tenant": ["t1", "fresh-1"] })).to.deep.equal(untrusted("tenant", "OVER_LIMIT"));
        expect(await entriesOf("/tenant/x", "tenant", { "X-Tenant": ["fresh-2", "t1"] })).to.deep.equal(untrusted("tenant", "OVER_LIMIT"));
        expect(await entriesOf("/tenant/x", "tenant", { "x-tenant": ["", "t9"] })).to.deep.equal(untrusted("tenant", "OVER_LIMIT"));
        expect(await entriesOf("/tenant/x", "tenant", { "x-tenant": "t1,t9" })).to.deep.equal(untrusted("tenant", "OVER_LIMIT"));
        // Negative control: without the comma check the first value would be sent, a fresh one each time a counter of its own.
        const side = perValueSide();
        let fresh = 0;
        for (let i = 0; i < 6; i++) {
            const d = await side.client.shouldRateLimit("shop", [
                [
                    { key: "rule", value: "orders" },
                    { key: "x-key", value: `fresh-${i}` },
                ],
            ]);
            if (d.overallCode === "OK") fresh++;
        }
        expect(fresh).to.equal(6);
        // Per value, default SharedCounter: every repeated header of this client shares its untrusted counter of 2, whatever its values.
        expect(
            await okCount(
                4,
                (i) => `/orders?n=${i}`,
                (i) => ({ headers: { "x-key": [`new-${i}`, "k1"] }, clientAddress: "203.0.113.40" }),
            ),
        ).to.equal(2);
        expect(await entriesOf("/orders", "orders", { "x-key": ["k3", "k1"] })).to.deep.equal(untrusted("orders", "OVER_LIMIT", true));
        expect(await entriesOf("/orders", "orders", { "x-key": "k3" })).to.deep.equal(["rule=orders", "x-key=k3", "OK"]);
        // invert on x-env: internal: the exempt value once is exempt; repeated, or with another value, it is counted.
        expect(await entriesOf("/audit", "audit", { "x-env": "internal" })).to.deep.equal(["nothing sent"]);
        expect(await entriesOf("/audit", "audit", { "x-env": ["internal", "internal"] })).to.deep.equal(["rule=audit", "OK"]);
        expect(await entriesOf("/audit", "audit", { "x-env": ["other", "internal"] })).to.deep.equal(["rule=audit", "OK"]);
        expect(await entriesOf("/audit", "audit", { "X-Env": ["internal", " internal"] })).to.deep.equal(["rule=audit", "OVER_LIMIT"]);
        expect(await entriesOf("/audit", "audit", {})).to.deep.equal(["rule=audit", "OVER_LIMIT"]);
        expect(await entriesOf("/audit", "audit", { "x-env": "internal" })).to.deep.equal(["nothing sent"]);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });
});
