/**
 * A rule's method and query conditions (builders/request-match.ts): every spelling a client can
 * send for the method or parameter a rule names is counted, through real RE2 and through the
 * gateway MODEL; the negative controls are the naive matchers a client walks around.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { methodCondition, queryRegex } from "../../builders/request-match";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { compileFullMatch } from "../../lib/formats";
import { shopObjects } from "./rules.test";

const matches = (regex: string, s: string) => compileFullMatch(regex).test(s);

describe("rules: query parameters in every spelling a client can send", () => {
    const tierFree = queryRegex({ name: "tier", value: "free" });
    const counted = [
        "/search?tier=free",
        "/search?q=x&tier=free",
        "/search?tier=free&q=x",
        "/search?q=x;tier=free",
        // The name percent-encoded, in either hex case, and in another letter case.
        "/search?%74ier=free",
        "/search?%74%69%65%72=free",
        "/search?TIER=free",
        "/search?T%49er=free",
        // The value percent-encoded.
        "/search?tier=fr%65e",
        "/search?tier=%66%72%65%65",
        // Repeated: whichever occurrence the application reads, the rule counts the request.
        "/search?tier=gold&tier=free",
        "/search?tier=free&tier=gold",
        "/search?tier=free#frag",
        // Names a case-insensitive Go or Java reader takes for tier: the dotless i, the dotted capital I.
        "/search?t%C4%B1er=free",
        "/search?T%C4%B0ER=free",
    ];
    const notCounted = ["/search", "/search?tier=gold", "/search?tier=freeze", "/search?xtier=free", "/search?tier=FREE", "/search?q=tier=free", "/tier=free"];
    for (const p of counted) it(`counts ${p}`, () => expect(matches(tierFree, p)).to.equal(true));
    for (const p of notCounted) it(`does not count ${p}`, () => expect(matches(tierFree, p)).to.equal(false));

    it("a space in the value as + or %20; a + as + or %2B", () => {
        const re = queryRegex({ name: "q", value: "a b+c" });
        for (const p of ["/?q=a+b%2Bc", "/?q=a%20b+c", "/?q=a%20b%2bc"]) expect(matches(re, p), p).to.equal(true);
        expect(matches(re, "/?q=ab+c")).to.equal(false);
    });

    it("non-ASCII names and values as raw UTF-8 or percent-encoded bytes", () => {
        const re = queryRegex({ name: "città", value: "é" });
        expect(matches(re, "/?citt%C3%A0=%c3%a9")).to.equal(true);
        expect(matches(re, "/?città=é")).to.equal(true);
        expect(matches(re, "/?citta=e")).to.equal(false);
    });

    it("presence: with or without a value, any spelling of the name", () => {
        const re = queryRegex({ name: "debug" });
        for (const p of ["/x?debug", "/x?debug=", "/x?debug=1&a", "/x?a&%64ebug=1"]) expect(matches(re, p), p).to.equal(true);
        for (const p of ["/x", "/x?debugger=1", "/x?a=debug"]) expect(matches(re, p), p).to.equal(false);
    });

    it("negative control: the naive matcher ([?&]tier=free) misses the encoded and differently cased spellings", () => {
        const naive = "[^?]*\\?(?:.*&)?tier=free(?:&.*)?";
        const missed = counted.filter((p) => !matches(naive, p));
        expect(missed).to.include.members(["/search?%74ier=free", "/search?tier=fr%65e", "/search?TIER=free", "/search?q=x;tier=free"]);
    });
});

describe("rules: methods without regard to case", () => {
    const re = (methodCondition(["post", "PUT"]) as any).safe_regex_match.regex as string;
    it("POST, post, Post and PUT are counted; GET and POSTX are not", () => {
        for (const m of ["POST", "post", "Post", "PUT", "put"]) expect(matches(re, m), m).to.equal(true);
        for (const m of ["GET", "POSTX", "XPOST", ""]) expect(matches(re, m), m).to.equal(false);
    });
    it("negative control: an exact POST matcher lets post through", () => {
        expect(matches("POST", "post")).to.equal(false);
    });
});

describe("rules: methods and query through the gateway MODEL", () => {
    const rules: RateLimitRuleArgs[] = [
        { name: "writes", methods: ["POST", "DELETE"], path: { prefix: "/orders" }, requestsPerUnit: 5, unit: LimitUnit.Minute },
        { name: "free-tier", query: { name: "tier", value: "free" }, requestsPerUnit: 2, unit: LimitUnit.Minute, rateLimitHeaders: false },
    ];
    const objects = shopObjects(rules);
    const rulesOf = (path: string, method?: string) =>
        explainWith(gatewayModel(objects), path, method ? { method } : {})
            .descriptors.map((d) => d.entries.find((e) => e.key === "rule")?.value)
            .filter(Boolean);

    it("compiles without problems", () => expect(compileGlobalLimits({ rules }).problems).to.deep.equal([]));
    it("a lower-case post on /orders is counted as a write; GET is not", () => {
        expect(rulesOf("/orders/1", "post")).to.deep.equal(["writes"]);
        expect(rulesOf("/orders/1", "DELETE")).to.deep.equal(["writes"]);
        expect(rulesOf("/orders/1", "GET")).to.deep.equal([]);
    });
    it("an encoded or repeated tier=free is counted as free tier", () => {
        expect(rulesOf("/items?%74ier=fr%65e")).to.deep.equal(["free-tier"]);
        expect(rulesOf("/items?tier=gold&tier=free")).to.deep.equal(["free-tier"]);
        expect(rulesOf("/items?tier=gold")).to.deep.equal([]);
    });
    it("rateLimitHeaders: false puts x_ratelimit_option OFF on the rule's entry only", () => {
        const entries = compileGlobalLimits({ rules }).vhostRateLimits;
        expect(entries.map((e) => e.x_ratelimit_option)).to.deep.equal([undefined, "OFF"]);
    });
});

describe("rules: bad methods and query are refused by field", () => {
    const problemsOf = (r: Partial<RateLimitRuleArgs>) =>
        compileGlobalLimits({ rules: [{ name: "r", requestsPerUnit: 1, unit: LimitUnit.Minute, ...r } as RateLimitRuleArgs] }).problems.map(
            (p) => `${p.key}: ${p.fix}`,
        );
    it("an empty list, a method with a space, a method twice in two cases", () => {
        expect(problemsOf({ methods: [] })[0]).to.match(/^rules\[0\]\.methods: set rules\[0\]\.methods to \["POST"\]/);
        expect(problemsOf({ methods: [" get"] })).to.deep.equal(['rules[0].methods[0]: set rules[0].methods[0] to "GET"']);
        expect(problemsOf({ methods: ["GET", "get"] })).to.deep.equal(['rules[0].methods: set rules[0].methods to ["GET"]']);
    });
    it("a query without a name, with a separator in the name, with an empty value; rateLimitHeaders not a boolean", () => {
        expect(problemsOf({ query: {} as any })[0]).to.match(/^rules\[0\]\.query\.name: /);
        expect(problemsOf({ query: { name: "a&b" } })[0]).to.match(/^rules\[0\]\.query\.name: /);
        expect(problemsOf({ query: { name: "a", value: "" } })[0]).to.match(/^rules\[0\]\.query\.value: remove rules\[0\]\.query\.value/);
        expect(problemsOf({ rateLimitHeaders: "no" as any })[0]).to.match(/^rules\[0\]\.rateLimitHeaders: set rules\[0\]\.rateLimitHeaders to false/);
    });
});
