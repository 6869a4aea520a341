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
import { untrustedQueryRegex } from "../../builders/request-match";
import { LimitUnit, MissingHeader, RateLimitRuleArgs } from "../../builders/rule-args";
import { compileGlobalLimits } from "../../builders/rules";
import { envoyFirstQueryValue, envoyPercentDecode } from "../../gateway-model/evaluate";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { compileFullMatch } from "../../lib/formats";
import { shopObjects } from "./rules.test";

const M = LimitUnit.Minute;
const matches = (regex: string, s: string) => compileFullMatch(regex).test(s);

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

describe("query.perValue: the untrusted-value guard's :path regex (real RE2, full match)", () => {
    const re = untrustedQueryRegex("api_key");
    const untrusted = [
        "/a?api_key=fresh&api_key=mine",
        "/a?api_key=fresh;api_key=mine",
        "/a?API_KEY=mine&api_key=fresh",
        "/a?api_key=fresh&%61pi_key=mine",
        "/a?x=1&api_key=fresh&y=2&Api_Key=mine",
        "/a?api_key&api_key=mine",
        "/a?api_key=fresh&api_key",
        "/a?api_key=mine;x=1",
        "/a?api_key=a+b",
        "/a?x=1;api_key=a;api_key=b",
        // A percent-encoded byte above 0x7F: it may decode to invalid UTF-8, which the service refuses.
        "/a?api_key=%FF",
        "/a?api_key=ab%c3%a9",
        "/a?api_key=%80x",
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
    ];
    const clear = [
        "/a?api_key=mine",
        "/a?api_key=mine&x=1",
        "/a?x=1;y=2&api_key=mine",
        "/a?api_key=a%2Bb",
        "/a?api_key=a%20b",
        "/a?api_key=mine&api_keyx=2",
        "/a?xapi_key=1&api_key=mine",
        "/a?api_key=mine&x=a+b;c",
        "/a",
        "/a;api_key=1?api_key=2",
        "/a?api_key=%7F%41%25C3",
        "/a?api_key=ok&other=%FF",
    ];
    for (const p of untrusted) it(`untrusted: ${p}`, () => expect(matches(re, p)).to.equal(true));
    it("a name with a titlecase letter keeps its own spelling among its case forms", () => {
        const t = untrustedQueryRegex("ǅk");
        for (const p of ["/a?ǅk=%FF", "/a?ǅk=a&ǅk=b", "/a?ǆk=a&Ǆk=b"]) expect(matches(t, p), p).to.equal(true);
        expect(matches(t, "/a?ǅk=a")).to.equal(false);
    });
    for (const p of clear) it(`trusted: ${p}`, () => expect(matches(re, p)).to.equal(false));
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
            (d) => `${d.entries.map((e) => `${e.key}=${e.value}`).join(",")} -> ${d.limit ? `${d.limit.entry} ${d.limit.requestsPerUnit}` : "no limit"}`,
        );

    it("compiles without problems", () => expect(compileGlobalLimits({ rules }).problems).to.deep.equal([]));
    it("each decoded value its own counter of 5, whatever its spelling", () => {
        expect(sent("/api?api_key=k1")).to.deep.equal(["rule=per-key,query_value=k1 -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api/x?%61pi_key=k%31&y=2")).to.deep.equal(["rule=per-key,query_value=k1 -> rule=per-key / query_value (catch-all) 5"]);
        expect(sent("/api?api_key=a%2Bb")).to.deep.equal(["rule=per-key,query_value=a+b -> rule=per-key / query_value (catch-all) 5"]);
    });
    it("without the parameter under its exact name: the rule's one shared counter of 5", () => {
        for (const p of ["/api", "/api?API_KEY=k1", "/api?x=1;api_key=k1"]) expect(sent(p), p).to.deep.equal(["rule=per-key -> rule=per-key 5"]);
    });
    const GUARD = "rule=per-key,untrusted_value=shared -> rule=per-key / untrusted_value=shared 5";
    it("untrusted (repeated, ';' or '+' in the value, an encoded byte above 0x7F): only the one guard counter shared by all such requests", () => {
        for (const p of [
            "/api?api_key=fresh1&api_key=mine",
            "/api?API_KEY=mine&api_key=fresh2",
            "/api?api_key=mine;x=3",
            "/api?api_key=a+b",
            "/api?api_key=%FF",
            "/api?api_key=caf%C3%A9",
        ])
            expect(sent(p), p).to.deep.equal([GUARD]);
    });
    it("negative control: Envoy's reading would give each attack request a value of its own (a new counter each without the guard)", () => {
        const attacks = ["/api?api_key=f1&api_key=mine", "/api?api_key=mine;x=2", "/api?API_KEY=mine&api_key=f3", "/api?api_key=a+b", "/api?api_key=%FF1"];
        const values = attacks.map((p) => envoyFirstQueryValue(p, "api_key"));
        expect(new Set(values).size, "distinct values as Envoy reads them").to.equal(attacks.length);
        expect(attacks.filter((p) => sent(p).join() === GUARD)).to.deep.equal(attacks);
        // a%20b is the one unambiguous spelling of "a b": its own counter, like any value.
        expect(sent("/api?api_key=a%20b")).to.deep.equal(["rule=per-key,query_value=a b -> rule=per-key / query_value (catch-all) 5"]);
    });
    it("whenMissing Refuse: a missing parameter and an ambiguous one meet a limit of 0", () => {
        expect(sent("/strict")).to.deep.equal(["rule=strict-key -> rule=strict-key 0"]);
        expect(sent("/strict?k=a&k=b")).to.deep.equal(["rule=strict-key,untrusted_value=shared -> rule=strict-key / untrusted_value=shared 0"]);
        expect(sent("/strict?k=a")).to.deep.equal(["rule=strict-key,query_value=a -> rule=strict-key / query_value (catch-all) 5"]);
    });
    it("whenMissing Ignore: a missing parameter sends nothing, but an ambiguous one is still counted on the guard", () => {
        expect(sent("/loose")).to.deep.equal([]);
        expect(sent("/loose?K=a&k=b")).to.deep.equal(["rule=loose-key,untrusted_value=shared -> rule=loose-key / untrusted_value=shared 5"]);
    });
    it("with perClientAddress: per value and client; the missing and the guard counters per client too", () => {
        expect(sent("/both?k=a", "192.0.2.7")).to.deep.equal([
            "rule=key-client,query_value=a,remote_address=192.0.2.7 -> rule=key-client / query_value (catch-all) / remote_address (catch-all) 5",
        ]);
        expect(sent("/both", "192.0.2.7")).to.deep.equal(["rule=key-client,remote_address=192.0.2.7 -> rule=key-client / remote_address (catch-all) 5"]);
        expect(sent("/both?k=a;b", "192.0.2.7")).to.deep.equal([
            "rule=key-client,untrusted_value=shared,remote_address=192.0.2.7 -> rule=key-client / untrusted_value=shared / remote_address (catch-all) 5",
        ]);
    });
    it("counted with the per-value counters (counterStore split), and described so on the dashboard", () => {
        const split = splitLimits({ rules: [...rules, { name: "fixed", path: { exact: "/f" }, requestsPerUnit: 1, unit: M }] });
        expect(split.perValue.configDescriptors.map((d) => d.value)).to.include.members(["per-key", "strict-key", "loose-key", "key-client"]);
        expect(split.fixed.configDescriptors.map((d) => d.value)).to.deep.equal(["fixed"]);
        expect(ruleSummary(rules[0]!)).to.equal("paths under /api; each api_key query value apart (repeated, ambiguous or not plain text: one shared counter)");
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
        for (const name of ["untrusted_value", "query_value", "remote_address", "masked_remote_address"])
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
