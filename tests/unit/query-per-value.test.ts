/**
 * One counter per value of a query parameter (`query.perValue`): how Envoy's `query_parameters`
 * action reads the parameter (the gateway MODEL, gateway-model/evaluate.ts), the untrusted-value guard
 * that puts every request another reader could see differently on one shared counter (real RE2),
 * what the service's config answers for each (the model's lookup), and the checks of the fields.
 *
 * The attack the guard answers: the action reads the FIRST occurrence of the exact name, split on
 * `&` only, `+` kept. An application that reads the last occurrence, names in any case, `;` as a
 * separator or `+` as a space would serve `?api_key=<fresh>&api_key=<mine>` as `<mine>` while the
 * gateway counts `<fresh>`: a new counter per request. Expected values are written from those
 * rules, not read from the code.
 */
import { expect } from "chai";
import { splitLimits } from "../../builders/counter-stores";
import { ruleSummary } from "../../builders/monitoring";
import { ambiguousQueryRegex, longQueryValueRegex, queryPresentRegex, trustedQueryValueRegex } from "../../builders/request-match";
import { LimitUnit, MissingHeader, RateLimitRuleArgs, ValueCharset } from "../../builders/rule-args";
import { compileGlobalLimits, resolveCheckedLimits } from "../../components/global-ratelimit/limits-plan";
import { envoyFirstQueryValue, envoyPercentDecode, fullMatch } from "../../gateway-model/evaluate";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { shopObjects } from "./rules.test";

const M = LimitUnit.Minute;
// Cached: each compiled RE2 stays in the WebAssembly heap.
const matches = (regex: string, s: string) => fullMatch(regex, s);

describe("query.perValue: Envoy's reading of a parameter (gateway MODEL of query_parameters)", () => {
    it("the first occurrence of the exact, percent-decoded name; the value percent-decoded", () => {
        expect(envoyFirstQueryValue("/a?api_key=k1", "api_key")).to.equal("k1");
        expect(envoyFirstQueryValue("/a?x=1&api_key=k1&api_key=k2", "api_key")).to.equal("k1");
        expect(envoyFirstQueryValue("/a?%61pi_key=k%31", "api_key")).to.equal("k1");
        expect(envoyFirstQueryValue("/a?API_KEY=k1", "api_key")).to.equal(undefined);
        expect(envoyFirstQueryValue("/a?api_keyx=k1", "api_key")).to.equal(undefined);
        expect(envoyFirstQueryValue("/a", "api_key")).to.equal(undefined);
    });
    it("`&` only separates: a `;` stays in the value; a name without `=` has the empty value", () => {
        expect(envoyFirstQueryValue("/a?api_key=k1;x=2", "api_key")).to.equal("k1;x=2");
        expect(envoyFirstQueryValue("/a?x=1;api_key=k1", "api_key")).to.equal(undefined);
        expect(envoyFirstQueryValue("/a?api_key", "api_key")).to.equal("");
        expect(envoyFirstQueryValue("/a?api_key=", "api_key")).to.equal("");
    });
    it("percent-decoding as Envoy's: `+` stays `+`, `%2B` is `+`, `%20` a space, a broken escape stays as written", () => {
        expect(envoyPercentDecode("a+b")).to.equal("a+b");
        expect(envoyPercentDecode("a%2Bb")).to.equal("a+b");
        expect(envoyPercentDecode("a%20b")).to.equal("a b");
        expect(envoyPercentDecode("%zz%4")).to.equal("%zz%4");
        expect(envoyPercentDecode("%c3%a9")).to.equal("é");
    });
});

/**
 * Whether the rule's guard takes the request (real RE2, full match): the parameter ambiguous, or
 * present (any spelling) without one trusted value under its exact name, or that value too long.
 */
function guarded(name: string, p: string, charset: ValueCharset = ValueCharset.Utf8): boolean {
    const present = matches(queryPresentRegex(name), p);
    const trusted = matches(trustedQueryValueRegex(name, charset), p) && !matches(longQueryValueRegex(name), p);
    return matches(ambiguousQueryRegex(name), p) || (present && !trusted);
}

describe("query.perValue: the guard's :path regexes (real RE2, full match)", () => {
    const untrusted = [
        "/a?api_key=fresh&api_key=mine",
        "/a?api_key=fresh;api_key=mine",
        "/a?API_KEY=mine&api_key=fresh",
        "/a?api_key=fresh&%61pi_key=mine",
        "/a?x=1&api_key=fresh&y=2&Api_Key=mine",
        "/a?api_key&api_key=mine",
        "/a?api_key=fresh&api_key",
        "/a?api_key=mine;x=1",
        "/a?x=1;api_key=a;api_key=b",
        // Under another spelling of the name only: Envoy finds none, a case-insensitive reader does.
        "/a?API_KEY=mine",
        "/a?x=1;api_key=mine",
        // Decoded, not valid UTF-8: the service would refuse the whole call.
        "/a?api_key=%FF",
        "/a?api_key=%80x",
        "/a?api_key=%C3",
        "/a?api_key=%ED%A0%80",
        "/a?api_key=%C0%AF",
        // A control character, decoded (NUL, DEL, a C1 control).
        "/a?api_key=a%00b",
        "/a?api_key=%7F%41%25C3",
        "/a?api_key=%C2%85",
        // An encoded space: a form reader takes the literal + for a space too, and + is sent as written.
        "/a?api_key=a%20b",
        // Names a case-insensitive Go or Java reader takes for api_key: the Kelvin sign, the dotless i.
        "/a?api_key=fresh1&api_%E2%84%AAey=mine",
        "/a?ap%C4%B1_key=mine&api_key=fresh1",
        "/a?api_key=fresh1&api_\u212Aey=mine",
        // A reader that decodes the whole query before splitting it: an encoded & or ;.
        "/a?api_key=mine%26api_key%3Dfresh1",
        "/a?api_key=mine%3bn%3d1",
        // A fragment that reached :path is query text to Envoy's reader.
        "/a?api_key=a#%FF",
        "/a?x#&api_key=f1&api_key=m",
        // Longer than 256 bytes as written (percent-encoded).
        `/a?api_key=${"k".repeat(257)}`,
        `/a?api_key=${"%C3%A9".repeat(43)}`,
        // A literal character beyond ASCII (clients percent-encode it).
        "/a?api_key=café",
    ];
    const clear = [
        "/a?api_key=mine",
        "/a?api_key=mine&x=1",
        "/a?x=1;y=2&api_key=mine",
        "/a?api_key=a%2Bb",
        "/a?api_key=a+b",
        "/a?api_key=caf%C3%A9",
        "/a?api_key=caf%c3%a9&x=%FF",
        "/a?api_key=%F0%9F%98%80",
        "/a?api_key=mine&api_keyx=2",
        "/a?xapi_key=1&api_key=mine",
        "/a?api_key=mine&x=a+b;c",
        "/a",
        "/a;api_key=1?api_key=2",
        "/a?api_key=ok&other=%FF",
        `/a?api_key=${"k".repeat(256)}`,
        `/a?api_key=${"%C3%A9".repeat(42)}`,
    ];
    for (const p of untrusted) it(`guard: ${p.slice(0, 80)}`, () => expect(guarded("api_key", p)).to.equal(true));
    it("a name with a titlecase letter keeps its own spelling among its case forms", () => {
        for (const p of ["/a?ǅk=%FF", "/a?ǅk=a&ǅk=b", "/a?ǆk=a&Ǆk=b"]) expect(guarded("ǅk", p), p).to.equal(true);
        expect(guarded("ǅk", "/a?ǅk=a")).to.equal(false);
    });
    for (const p of clear) it(`own counter: ${p.slice(0, 80)}`, () => expect(guarded("api_key", p)).to.equal(false));
    it("printable ASCII only: a value decoding beyond it goes to the guard; control: the UTF-8 charset gives it a counter", () => {
        for (const p of ["/a?api_key=caf%C3%A9", "/a?api_key=%F0%9F%98%80"]) {
            expect(guarded("api_key", p, ValueCharset.PrintableAscii), p).to.equal(true);
            expect(guarded("api_key", p, ValueCharset.Utf8), p).to.equal(false);
        }
        expect(guarded("api_key", "/a?api_key=Ab-9_~.%21", ValueCharset.PrintableAscii)).to.equal(false);
    });
    it("negative control: without the length matcher a 257-character value gets a counter of its own", () => {
        const p = `/a?api_key=${"k".repeat(257)}`;
        expect(matches(trustedQueryValueRegex("api_key", ValueCharset.Utf8), p) && !matches(ambiguousQueryRegex("api_key"), p)).to.equal(true);
        expect(matches(longQueryValueRegex("api_key"), p)).to.equal(true);
    });
});

describe("query.perValue through the gateway MODEL and the service's config", () => {
    const rules: RateLimitRuleArgs[] = [
        { name: "per-key", path: { prefix: "/api" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 5, unit: M },
        {
            name: "strict-key",
            path: { prefix: "/strict" },
            query: { name: "k", perValue: true, whenMissing: MissingHeader.Refuse },
            requestsPerUnit: 5,
            unit: M,
        },
        { name: "loose-key", path: { prefix: "/loose" }, query: { name: "k", perValue: true, whenMissing: MissingHeader.Ignore }, requestsPerUnit: 5, unit: M },
        { name: "key-client", path: { prefix: "/both" }, query: { name: "k", perValue: true }, perClientAddress: true, requestsPerUnit: 5, unit: M },
    ];
    const model = gatewayModel(shopObjects(rules));
    /** Each descriptor the request sends: its entries, and the config entry and limit that answer it. */
    const sent = (path: string, clientAddress = "192.0.2.1") =>
        explainWith(model, path, { clientAddress }).descriptors.map(
            (d) => `${d.entries.map((e) => `${e.key}=${e.value}`).join(",")} -> ${d.limit ? `${d.limit.entry} ${d.limit.requests}` : "no limit"}`,
        );
    const CLIENT = "masked_remote_address (catch-all)";

    it("compiles without problems", () => expect(compileGlobalLimits({ rules }).problems).to.deep.equal([]));
    it("each decoded value its own counter of 5, whatever its spelling; a + as written, UTF-8 decoded", () => {
        expect(sent("/api?api_key=k1")).to.deep.equal(["rule=per-key,query_value=k1 -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api/x?%61pi_key=k%31&y=2")).to.deep.equal(["rule=per-key,query_value=k1 -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api?api_key=a%2Bb")).to.deep.equal(["rule=per-key,query_value=a+b -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api?api_key=a+b")).to.deep.equal(["rule=per-key,query_value=a+b -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api?api_key=caf%C3%A9")).to.deep.equal(["rule=per-key,query_value=café -> rule=per-key / query_value (catch-all) 5"]);
    });
    it("without the parameter in any spelling: the missing counter of 5, per client", () => {
        for (const p of ["/api", "/api?x=1"])
            expect(sent(p), p).to.deep.equal([
                `rule=per-key,missing_value=shared,masked_remote_address=192.0.2.1/32 -> rule=per-key / missing_value=shared / ${CLIENT} 5`,
            ]);
    });
    const guard = (addr: string) => `rule=per-key,untrusted_value=shared,masked_remote_address=${addr} -> rule=per-key / untrusted_value=shared / ${CLIENT} 5`;
    it("untrusted (repeated, another spelling, ';' or %20 in the value, invalid UTF-8, too long): the guard counter, per client", () => {
        for (const p of [
            "/api?api_key=fresh1&api_key=mine",
            "/api?API_KEY=mine&api_key=fresh2",
            "/api?API_KEY=k1",
            "/api?x=1;api_key=k1",
            "/api?api_key=mine;x=3",
            "/api?api_key=a%20b",
            "/api?api_key=%FF",
            `/api?api_key=${"v".repeat(300)}`,
        ])
            expect(sent(p), p).to.deep.equal([guard("192.0.2.1/32")]);
        expect(sent("/api?api_key=%FF", "2001:db8:1:2::9"), "an IPv6 client's /64").to.deep.equal([guard("2001:db8:1:2::/64")]);
    });
    it("negative control: Envoy's reading would give each attack request a value of its own (a new counter each without the guard)", () => {
        const attacks = ["/api?api_key=f1&api_key=mine", "/api?api_key=mine;x=2", "/api?API_KEY=mine&api_key=f3", "/api?api_key=a%20b", "/api?api_key=%FF1"];
        const values = attacks.map((p) => envoyFirstQueryValue(p, "api_key"));
        expect(new Set(values).size, "distinct values as Envoy reads them").to.equal(attacks.length);
        expect(attacks.filter((p) => sent(p).join() === guard("192.0.2.1/32"))).to.deep.equal(attacks);
    });
    it("whenMissing Refuse: a missing parameter and an untrusted one meet a limit of 0 (for every client)", () => {
        expect(sent("/strict")).to.deep.equal(["rule=strict-key,missing_value=shared -> rule=strict-key / missing_value=shared 0"]);
        expect(sent("/strict?k=a&k=b")).to.deep.equal(["rule=strict-key,untrusted_value=shared -> rule=strict-key / untrusted_value=shared 0"]);
        expect(sent("/strict?k=a")).to.deep.equal(["rule=strict-key,query_value=a -> rule=strict-key / query_value (catch-all) 5"]);
    });
    it("whenMissing Ignore: a missing parameter sends nothing, but an ambiguous one is still counted on the guard", () => {
        expect(sent("/loose")).to.deep.equal([]);
        expect(sent("/loose?K=a&k=b")).to.deep.equal([
            `rule=loose-key,untrusted_value=shared,masked_remote_address=192.0.2.1/32 -> rule=loose-key / untrusted_value=shared / ${CLIENT} 5`,
        ]);
    });
    it("with perClientAddress: per value and client prefix; the missing and the guard counters per client too", () => {
        expect(sent("/both?k=a", "192.0.2.7")).to.deep.equal([
            `rule=key-client,query_value=a,masked_remote_address=192.0.2.7/32 -> rule=key-client / query_value (catch-all) / ${CLIENT} 5`,
        ]);
        expect(sent("/both", "192.0.2.7")).to.deep.equal([
            `rule=key-client,missing_value=shared,masked_remote_address=192.0.2.7/32 -> rule=key-client / missing_value=shared / ${CLIENT} 5`,
        ]);
        expect(sent("/both?k=a;b", "192.0.2.7")).to.deep.equal([
            `rule=key-client,untrusted_value=shared,masked_remote_address=192.0.2.7/32 -> rule=key-client / untrusted_value=shared / ${CLIENT} 5`,
        ]);
    });
    it("counted with the per-value counters (counterStore split), and described so on the dashboard", () => {
        const split = splitLimits(
            resolveCheckedLimits({ rules: [...rules, { name: "fixed", path: { exact: "/f" }, requestsPerUnit: 1, unit: M }], headersOn: true }),
        );
        expect(split.perValue.configDescriptors.map((d) => d.value)).to.include.members(["per-key", "strict-key", "loose-key", "key-client"]);
        expect(split.fixed.configDescriptors.map((d) => d.value)).to.deep.equal(["fixed"]);
        expect(ruleSummary(rules[0]!)).to.equal(
            "paths under /api; each api_key query value apart (repeated, ambiguous, too long or unreadable: a guard counter per client)",
        );
    });
});

describe("query.perValue: bad fields are refused by field, with the fix", () => {
    const problemsOf = (r: Partial<RateLimitRuleArgs>) =>
        compileGlobalLimits({ rules: [{ name: "r", requestsPerUnit: 1, unit: M, ...r } as RateLimitRuleArgs] }).problems.map((p) => `${p.key}: ${p.fix}`);
    it("perValue with a value, not a boolean; whenMissing without perValue, or not a choice", () => {
        expect(problemsOf({ query: { name: "k", value: "v", perValue: true } })).to.deep.equal([
            "rules[0].query.perValue: remove rules[0].query.value, or remove rules[0].query.perValue",
        ]);
        expect(problemsOf({ query: { name: "k", perValue: "yes" as any } })).to.deep.equal(["rules[0].query.perValue: set rules[0].query.perValue to true"]);
        expect(problemsOf({ query: { name: "k", whenMissing: MissingHeader.Refuse } })).to.deep.equal([
            "rules[0].query.whenMissing: remove rules[0].query.whenMissing, or set rules[0].query.perValue to true",
        ]);
        expect(problemsOf({ query: { name: "k", perValue: true, whenMissing: "drop" as any } })).to.deep.equal([
            'rules[0].query.whenMissing: set rules[0].query.whenMissing to "shared-counter"',
        ]);
    });
    it("a name or value over 256 characters (the matchers of every spelling would outgrow Envoy's RE2 limit)", () => {
        expect(problemsOf({ query: { name: "k".repeat(257), perValue: true } })).to.deep.equal([
            "rules[0].query.name: shorten it to 256 characters or fewer, or remove rules[0].query",
        ]);
        expect(problemsOf({ query: { name: "k", value: "é".repeat(257) } })).to.deep.equal([
            "rules[0].query.value: shorten it to 256 characters or fewer, or remove rules[0].query",
        ]);
        expect(problemsOf({ query: { name: "k".repeat(256), value: "😀".repeat(256) } })).to.deep.equal([]);
    });
    it("a per-value header named after a descriptor key the rules use themselves", () => {
        for (const name of ["untrusted_value", "query_value", "remote_address", "masked_remote_address", "missing_value"])
            expect(problemsOf({ header: { name, perValue: true } }), name).to.deep.equal([
                `rules[0].header.name: count the value of another header, e.g. have the application or a filter copy it into x-<name>`,
            ]);
        expect(problemsOf({ header: { name: "x-untrusted_value", perValue: true } })).to.deep.equal([]);
    });
    it("not with header.perValue in the same rule, nor with clientCidr", () => {
        expect(problemsOf({ query: { name: "k", perValue: true }, header: { name: "x-k", perValue: true } })).to.deep.equal([
            "rules[0].query.perValue: make two rules: one per header value, one per query value",
        ]);
        expect(problemsOf({ query: { name: "k", perValue: true }, clientCidr: { cidr: "10.0.0.0/8" } })).to.deep.equal([
            "rules[0].query.perValue: make two rules: one per query value, one with clientCidr",
        ]);
    });
});
