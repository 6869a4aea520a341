/**
 * How the stack's config is refused, exactly: the fix styles and error text, key and value
 * suggestions, reading the raw config (unknown keys, secrets), the small validators and DNS-name
 * suggestions, the derived defaults (each key's values: config-values.test.ts).
 *
 * Expected values are written from the README, the doc comments and config-schema.ts defaults, not
 * read from the code; everything is computed inside each `it` (Stryker's per-test coverage).
 */
import { expect } from "chai";
import { defaultApiRegex, defaultRoutes } from "../../builders/routes";
import { dnsNameProblem, isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { FixStyle } from "../../lib/fix-style";
import { compileFullMatch, isCidr, protoDurationSeconds } from "../../lib/formats";
import { closestKey, formatConfigProblems as formatProblems, configProblem as problem, PULUMI_FIX } from "../../program/config-problems";
import { shellQuote } from "../../mesh/arg-problems";
import { closestValue } from "../../lib/edit-distance";
import { inboundVhostName } from "../../mesh/mesh-checks";
import { resolveSettings } from "../../program/config-args";
import { rawConfigFromAll } from "../../program/stack-config";
import { BASE, LABEL, P, plain, problemsOf, STYLE, SUBDOMAIN } from "./stack-config-fixtures";

describe("stack config: fix styles and error text", () => {
    it("shellQuote leaves shell-safe words alone", () => {
        expect(shellQuote("abc")).to.equal("abc");
        expect(shellQuote("A-Z_0.9/x:y,z=w@v+u%t")).to.equal("A-Z_0.9/x:y,z=w@v+u%t");
        expect(shellQuote("10.4.0.0/14,10.7.240.0/20")).to.equal("10.4.0.0/14,10.7.240.0/20");
    });

    it("shellQuote single-quotes anything else, the empty string and embedded quotes included", () => {
        expect(shellQuote("")).to.equal("''");
        expect(shellQuote("a b")).to.equal("'a b'");
        expect(shellQuote(" a")).to.equal("' a'");
        expect(shellQuote("a ")).to.equal("'a '");
        expect(shellQuote("$HOME")).to.equal("'$HOME'");
        expect(shellQuote("a*b")).to.equal("'a*b'");
        expect(shellQuote("~")).to.equal("'~'");
        expect(shellQuote("a\nb")).to.equal("'a\nb'");
        expect(shellQuote('{"k":1}')).to.equal(`'{"k":1}'`);
        expect(shellQuote("it's")).to.equal(`'it'\\''s'`);
        expect(shellQuote("''")).to.equal(`''\\'''\\'''`);
    });

    it("PULUMI_FIX: set (quoted when needed), rm, header singular and plural", () => {
        expect(PULUMI_FIX.set("unit", "minute")).to.equal("pulumi config set unit minute");
        expect(PULUMI_FIX.set("pagePath", "/a b")).to.equal("pulumi config set pagePath '/a b'");
        expect(PULUMI_FIX.rm("apiLimit")).to.equal("pulumi config rm apiLimit");
        expect(PULUMI_FIX.header(1)).to.equal("invalid stack configuration (1 problem); nothing was created:");
        expect(PULUMI_FIX.header(2)).to.equal("invalid stack configuration (2 problems); nothing was created:");
        expect(PULUMI_FIX.header(0)).to.equal("invalid stack configuration (0 problems); nothing was created:");
    });

    it("PULUMI_FIX.rename keeps the value in single quotes (README), a quote inside it escaped", () => {
        expect(PULUMI_FIX.rename("varient", "variant", "B")).to.equal("pulumi config rm varient && pulumi config set variant 'B'");
        expect(PULUMI_FIX.rename("servicelabel", "serviceLabel", "a b")).to.equal("pulumi config rm servicelabel && pulumi config set serviceLabel 'a b'");
        // 'it's' would be an unterminated quote in the shell: the fix could not even be pasted.
        expect(PULUMI_FIX.rename("servicelabel", "serviceLabel", "it's")).to.equal(
            `pulumi config rm servicelabel && pulumi config set serviceLabel 'it'\\''s'`,
        );
    });

    it("problem(): a fixed text has no fixWith; a style function is phrased for pulumi and kept", () => {
        const fixed = problem("unit", "weeks", "bad", "do this");
        expect(fixed).to.deep.equal({ key: "unit", value: "weeks", problem: "bad", fix: "do this" });
        expect(fixed).not.to.have.property("fixWith");
        const f = (s: FixStyle) => `${s.rm("apiLimit")}, or ${s.set("variant", "A")}`;
        const styled = problem("apiLimit", undefined, "only A", f);
        expect(styled).to.deep.equal({
            key: "apiLimit",
            value: undefined,
            problem: "only A",
            fix: "pulumi config rm apiLimit, or pulumi config set variant A",
            fixWith: f,
        });
        expect(styled.fixWith!(STYLE)).to.equal("RM apiLimit, or SET variant=A");
    });

    it("formatProblems: one problem, value shown as JSON", () => {
        expect(formatProblems([P("unit", "minutes", "must be one of 'second', 'minute', 'hour', 'day'", "pulumi config set unit minute")])).to.equal(
            "invalid stack configuration (1 problem); nothing was created:\n" +
                `  - mesh-ratelimit:unit = "minutes": must be one of 'second', 'minute', 'hour', 'day'\n` +
                "    fix: pulumi config set unit minute",
        );
    });

    it("formatProblems: several problems, an unset value and a value with quotes", () => {
        const text = formatProblems([
            P("espServiceName", undefined, "is required", "set it"),
            P("domain", 'a"b\\c', "bad chars", "pulumi config set domain abc"),
        ]);
        expect(text).to.equal(
            "invalid stack configuration (2 problems); nothing was created:\n" +
                "  - mesh-ratelimit:espServiceName = (not set): is required\n" +
                "    fix: set it\n" +
                '  - mesh-ratelimit:domain = "a\\"b\\\\c": bad chars\n' +
                "    fix: pulumi config set domain abc",
        );
    });

    it("formatProblems in another style: its header, its phrasing where the problem has one, the fixed text otherwise", () => {
        const styled = problem("unit", "weeks", "bad unit", (s) => s.set("unit", "minute"));
        const fixed = problem("descriptors", "[]", "empty", "remove one");
        expect(formatProblems([styled, fixed], STYLE)).to.equal(
            "H(2)\n" +
                `  - mesh-ratelimit:unit = "weeks": bad unit\n    fix: SET unit=minute\n` +
                `  - mesh-ratelimit:descriptors = "[]": empty\n    fix: remove one`,
        );
        expect(formatProblems([styled])).to.equal(
            `invalid stack configuration (1 problem); nothing was created:\n  - mesh-ratelimit:unit = "weeks": bad unit\n    fix: pulumi config set unit minute`,
        );
    });

    it("the README's example error, word for word", () => {
        const all: Record<string, string> = { "mesh-ratelimit:varient": "B", "mesh-ratelimit:localFillInterval": "1m" };
        for (const [k, v] of Object.entries(BASE)) all[`mesh-ratelimit:${k}`] = v!;
        const { raw, unknown } = rawConfigFromAll(all);
        let message = "";
        try {
            resolveSettings(raw, unknown);
        } catch (e) {
            message = (e as Error).message;
        }
        expect(message).to.equal(
            [
                "invalid stack configuration (2 problems); nothing was created:",
                `  - mesh-ratelimit:varient = "B": unknown configuration key`,
                "    fix: did you mean 'variant'? pulumi config rm varient && pulumi config set variant 'B'",
                `  - mesh-ratelimit:localFillInterval = "1m": must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')`,
                "    fix: pulumi config set localFillInterval 60s",
            ].join("\n"),
        );
    });
});

describe("stack config: suggestions for a mistyped key or value", () => {
    it("closestKey ignores case", () => {
        expect(closestKey("VARIANT")).to.equal("variant");
        expect(closestKey("LOCALBUCKET")).to.equal("localBucket");
        expect(closestKey("varient")).to.equal("variant");
        // Two edits once lower-cased; six (beyond the 5 allowed) if the key's capitals counted.
        expect(closestKey("localcachesizeinbytesxx")).to.equal("localCacheSizeInBytes");
    });

    it("closestKey: short keys allow 2 edits, never fewer", () => {
        expect(closestKey("ui")).to.equal("unit");
        expect(closestKey("unxx")).to.equal("unit");
        expect(closestKey("uxxx")).to.equal(undefined);
        expect(closestKey("frobnicate")).to.equal(undefined);
    });

    it("closestKey: a quarter of the typo's length, rounded down, once that exceeds 2", () => {
        // 9 characters: 2 edits; 'domain' is 3 away.
        expect(closestKey("domainxyz")).to.equal(undefined);
        // 17 characters: 4 edits.
        expect(closestKey("rateLimitTimeXXXX")).to.equal("rateLimitTimeout");
        expect(closestKey("rateLimitTimXXXXX")).to.equal(undefined);
    });

    it("closestKey: a tie goes to the key listed first (the README's order)", () => {
        // Two edits from both ingressName and ingressPath.
        expect(closestKey("ingressPaxe")).to.equal("ingressName");
    });

    it("closestValue: same letters in another case, the allowed spelling returned", () => {
        expect(closestValue("b", ["A", "B"], "A")).to.equal("B");
        expect(closestValue(" Hour ", ["second", "minute", "hour", "day"], "minute")).to.equal("hour");
        expect(closestValue("a", ["A"], "x")).to.equal("A");
    });

    it("closestValue: a prefix either way, from 2 characters on, the closest length first", () => {
        const units = ["second", "minute", "hour", "day"];
        expect(closestValue("se", units, "minute")).to.equal("second");
        expect(closestValue("s", units, "minute")).to.equal("minute");
        expect(closestValue("hours", units, "minute")).to.equal("hour");
        expect(closestValue("SEC", ["Second"], "x")).to.equal("Second");
        expect(closestValue("htt", ["https", "http"], "x")).to.equal("http");
        expect(closestValue("httpsx", ["http", "https"], "x")).to.equal("https");
    });

    it("closestValue: the nearest by edit distance within max(2, a third of the length), else the fallback", () => {
        expect(closestValue("xbc", ["abc"], "fb")).to.equal("abc");
        expect(closestValue("xyc", ["abc"], "fb")).to.equal("abc");
        expect(closestValue("xyz", ["abc"], "fb")).to.equal("fb");
        // 7 characters: 2 edits.
        expect(closestValue("abcdxyz", ["abcdefg"], "fb")).to.equal("fb");
        // 9 characters: 3 edits.
        expect(closestValue("abcdefxyz", ["abcdefghi"], "fb")).to.equal("abcdefghi");
        expect(closestValue("abcdexxyz", ["abcdefghi"], "fb")).to.equal("fb");
        expect(closestValue("secnod", ["Second"], "x")).to.equal("Second");
    });

    it("closestValue: of two equally near values, the first allowed", () => {
        expect(closestValue("aa", ["ab", "ba"], "fb")).to.equal("ab");
        expect(closestValue("aa", ["ba", "ab"], "fb")).to.equal("ba");
    });
});

describe("stack config: rawConfigFromAll", () => {
    it("keeps this project's known keys without the prefix, untouched, and ignores other projects", () => {
        const { raw, unknown } = rawConfigFromAll({
            "mesh-ratelimit:variant": "B",
            "mesh-ratelimit:domain": "  my.domain ",
            "mesh-ratelimit:localBucket": "7",
            "kubernetes:context": "kind",
            "mesh-ratelimit-extra:variant": "A",
            variant: "A",
        });
        expect(raw).to.deep.equal({ variant: "B", domain: "  my.domain ", localBucket: "7" });
        expect(unknown).to.deep.equal([]);
    });

    it("a number or boolean value of a known key becomes its text", () => {
        const { raw } = rawConfigFromAll({ "mesh-ratelimit:localBucket": 7 as unknown as string, "mesh-ratelimit:shadowMode": true as unknown as string });
        expect(raw).to.deep.equal({ localBucket: "7", shadowMode: "true" });
    });

    it("unknown keys of this project: did you mean the nearest key, else remove it; in every style", () => {
        const { raw, unknown } = rawConfigFromAll({
            "mesh-ratelimit:varient": "B",
            "mesh-ratelimit:frobnicate": 5 as unknown as string,
            "mesh-ratelimit:unit": "hour",
        });
        expect(raw).to.deep.equal({ unit: "hour" });
        expect(unknown.map(plain)).to.deep.equal([
            P("varient", "B", "unknown configuration key", "did you mean 'variant'? pulumi config rm varient && pulumi config set variant 'B'"),
            P("frobnicate", "5", "unknown configuration key", "pulumi config rm frobnicate (docs/configuration.md lists every key)"),
        ]);
        expect(unknown.map((p) => p.fixWith!(STYLE))).to.deep.equal([
            "did you mean 'variant'? MV varient->variant=B",
            "RM frobnicate (docs/configuration.md lists every key)",
        ]);
    });
});

describe("stack config: small validators", () => {
    it("protoDurationSeconds: seconds with up to 9 decimals and an 's'", () => {
        expect(protoDurationSeconds("1s")).to.equal(1);
        expect(protoDurationSeconds("10s")).to.equal(10);
        expect(protoDurationSeconds("0s")).to.equal(0);
        expect(protoDurationSeconds("01s")).to.equal(1);
        expect(protoDurationSeconds("0.5s")).to.equal(0.5);
        expect(protoDurationSeconds("123.456s")).to.equal(123.456);
        expect(protoDurationSeconds("1.000000001s")).to.equal(1.000000001);
    });

    it("protoDurationSeconds: anything else is not one", () => {
        for (const bad of ["1.0000000001s", "1", "1m", "1ms", "-1s", ".5s", "1.s", "1S", " 1s", "1s ", "", "s", "1.5", "1 s"]) {
            expect(protoDurationSeconds(bad), bad).to.equal(undefined);
        }
    });

    it("compileFullMatch: anchored at both ends, an alternation included", () => {
        const re = compileFullMatch("/a|/b");
        expect(re.test("/a")).to.equal(true);
        expect(re.test("/b")).to.equal(true);
        expect(re.test("/a/b")).to.equal(false);
        expect(re.test("/ax")).to.equal(false);
        expect(re.test("x/b")).to.equal(false);
        expect(compileFullMatch("").test("")).to.equal(true);
        expect(compileFullMatch("").test("x")).to.equal(false);
    });

    it("compileFullMatch throws on what RE2 (and so Envoy) rejects", () => {
        for (const bad of ["/api/(?=v1)", "/api/([0-9]", "/api/\\", "[z-a]", "(a)\\1"]) expect(() => compileFullMatch(bad), bad).to.throw();
    });

    it("compileFullMatch: a ')' ... '(' that only the anchoring group balances is still invalid", () => {
        // '/a)|(/b' is no RE2 expression (Envoy refuses it), although '^(?:/a)|(/b)$' would compile.
        expect(() => compileFullMatch("/a)|(/b")).to.throw();
    });

    it("isCidr: IPv4 with prefix 0..32, octets 0..255 without leading zeros", () => {
        for (const ok of ["0.0.0.0/0", "10.4.0.0/14", "10.4.0.0/9", "255.255.255.255/32", "192.168.1.1/32"]) expect(isCidr(ok), ok).to.equal(true);
        for (const bad of [
            "10.4.0.0/33",
            "10.4.0.0/100",
            "256.0.0.0/8",
            "10.04.0.0/8",
            "010.4.0.0/8",
            "10.4.0/8",
            "10.4.0.0.0/8",
            "10.4.0.0",
            "10.4.0.0/",
            "/8",
            "10.4.0.0/14/1",
            "pods/14",
            "",
        ]) {
            expect(isCidr(bad), bad).to.equal(false);
        }
    });

    it("isCidr: no spaces, signs or other digits in the prefix length", () => {
        for (const bad of [" 10.4.0.0/14", "10.4.0.0/14 ", "10.4.0.0 /14", "10.4.0.0/ 14", "10.4.0.0/-1", "10.4.0.0/+8", "10.4.0.0/1000", "fd00::/0x8"]) {
            expect(isCidr(bad), bad).to.equal(false);
        }
    });

    it("isCidr: a prefix length with a leading zero is refused (Istio parses with Go's netip.ParsePrefix, which refuses it)", () => {
        for (const bad of ["10.4.0.0/014", "10.0.0.0/08", "10.0.0.0/00", "fd00::/08", "::/0128"]) expect(isCidr(bad), bad).to.equal(false);
    });

    it("isCidr: IPv6 with prefix 0..128", () => {
        for (const ok of ["fd00::/8", "FD00::/8", "::/0", "::1/128", "2001:db8::/32", "1:2:3:4:5:6:7:8/64", "1:2:3:4:5:6:7::/112"])
            expect(isCidr(ok), ok).to.equal(true);
        for (const bad of ["::/129", "1::2::3/64", "fd00::g/8", "fe80::1%eth0/64"]) expect(isCidr(bad), bad).to.equal(false);
    });

    it("isCidr: colons and hex digits alone do not make an IPv6 address", () => {
        for (const bad of [":/8", ":::/8", "1:2:3:4:5:6:7:8:9/64", "12345::/16", "1:2/64"]) expect(isCidr(bad), bad).to.equal(false);
    });

    it("isDnsName: a label is lower-case letters, digits and inner '-', at most 63 characters", () => {
        for (const ok of ["a", "a-b", "a--b", "0", "a".repeat(63)]) expect(isDnsName(ok, "label"), ok).to.equal(true);
        for (const bad of ["", "A", "-a", "a-", "a.b", "a_b", "a".repeat(64), 5, undefined, null]) expect(isDnsName(bad, "label"), String(bad)).to.equal(false);
    });

    it("isDnsName: a subdomain is dot-separated labels, at most 253 characters", () => {
        for (const ok of ["a.b", "a-b.c-d.e", "a".repeat(64), "a".repeat(253)]) expect(isDnsName(ok, "subdomain"), ok).to.equal(true);
        for (const bad of ["", "a..b", "a.", ".a", "a.-b", "A.b", "a".repeat(254), 7]) expect(isDnsName(bad, "subdomain"), String(bad)).to.equal(false);
    });

    it("dnsNameProblem names the kind and its characters", () => {
        expect(dnsNameProblem("label")).to.equal(LABEL);
        expect(dnsNameProblem("subdomain")).to.equal(SUBDOMAIN);
    });

    it("suggestedDnsName: lower case, other characters '-', a label's dots too, empty parts dropped", () => {
        expect(suggestedDnsName("Shop.Prod", "label")).to.equal("shop-prod");
        expect(suggestedDnsName("Shop.Prod", "subdomain")).to.equal("shop.prod");
        expect(suggestedDnsName("rate..limits.", "subdomain")).to.equal("rate.limits");
        expect(suggestedDnsName("-a-.-b-", "subdomain")).to.equal("a.b");
        expect(suggestedDnsName("My_Secret", "subdomain")).to.equal("my-secret");
        expect(suggestedDnsName("a__b", "label")).to.equal("a--b");
        expect(suggestedDnsName("Café", "label")).to.equal("caf");
        expect(suggestedDnsName(42, "label")).to.equal("42");
    });

    it("suggestedDnsName: nothing left is 'name'", () => {
        expect(suggestedDnsName("_._", "subdomain")).to.equal("name");
        expect(suggestedDnsName("...", "label")).to.equal("name");
        expect(suggestedDnsName("", "label")).to.equal("name");
        expect(suggestedDnsName(undefined, "label")).to.equal("name");
        expect(suggestedDnsName(null, "subdomain")).to.equal("name");
    });

    it("suggestedDnsName: cut at 63 / 253 characters, never ending in '-' or '.'", () => {
        expect(suggestedDnsName("a".repeat(63), "label")).to.equal("a".repeat(63));
        expect(suggestedDnsName("a".repeat(64), "label")).to.equal("a".repeat(63));
        expect(suggestedDnsName(`${"a".repeat(62)}-bc`, "label")).to.equal("a".repeat(62));
        expect(suggestedDnsName(`${"a".repeat(61)}--b`, "label")).to.equal("a".repeat(61));
        expect(suggestedDnsName("a".repeat(253), "subdomain")).to.equal("a".repeat(253));
        expect(suggestedDnsName(`${"a".repeat(252)}.b`, "subdomain")).to.equal("a".repeat(252));
        expect(suggestedDnsName(`${"a".repeat(251)}-b.c`, "subdomain")).to.equal(`${"a".repeat(251)}-b`);
    });

    it("every suggestion is itself a valid name of its kind", () => {
        for (const v of ["Shop.Prod", "rate..limits.", "_._", "a".repeat(300), `${"a".repeat(62)}-bc`, "-x-", "A B C", "é.é"]) {
            for (const kind of ["label", "subdomain"] as const) expect(isDnsName(suggestedDnsName(v, kind), kind), `${kind} ${v}`).to.equal(true);
        }
    });
});

describe("stack config: derived defaults", () => {
    const paths = { limited: "/l", page: "/p", login: "/in", logout: "/out", staticPrefix: "/s", apiPrefix: "/api" };

    it("defaultApiRegex: <apiPrefix>/[1-9][0-9]? (README), n from 1 to 99 without a leading zero", () => {
        expect(defaultApiRegex("/api/v1/products")).to.equal("/api/v1/products/[1-9][0-9]?");
        const re = compileFullMatch(defaultApiRegex("/p"));
        for (const ok of ["/p/1", "/p/9", "/p/10", "/p/90", "/p/99"]) expect(re.test(ok), ok).to.equal(true);
        for (const bad of ["/p/0", "/p/07", "/p/100", "/p/", "/p", "/p/1/x", "/q/1"]) expect(re.test(bad), bad).to.equal(false);
    });

    it("defaultRoutes, split (variant A): page/login/logout/static, then the api route by its name", () => {
        expect(defaultRoutes(paths, true, "products")).to.deep.equal([
            { exact: ["/p", "/in", "/out"], prefix: ["/s"] },
            { name: "products", exact: [], prefix: ["/api"] },
        ]);
    });

    it("defaultRoutes, not split (variant B): one unnamed route with every match", () => {
        expect(defaultRoutes(paths, false, "api")).to.deep.equal([{ exact: ["/p", "/in", "/out"], prefix: ["/s", "/api"] }]);
    });

    it("defaultRoutes lists an exact path once", () => {
        expect(defaultRoutes({ ...paths, login: "/p", logout: "/p" }, false, "api")).to.deep.equal([{ exact: ["/p"], prefix: ["/s", "/api"] }]);
    });

    it("resolved settings use them: routes from the paths, the api route and regex", () => {
        const a = resolveSettings({ ...BASE, apiRoute: "products", apiPrefix: "/v2" });
        expect(a.bookinfo.routes).to.deep.equal([
            { exact: ["/productpage", "/login", "/logout"], prefix: ["/static"] },
            { name: "products", exact: [], prefix: ["/v2"] },
        ]);
        expect(a.global.apiRoute).to.deep.equal({ route: "products", regex: "/v2/[1-9][0-9]?", descriptorValue: "api" });
        const b = resolveSettings({ ...BASE, variant: "B" });
        expect(b.bookinfo.routes).to.deep.equal([{ exact: ["/productpage", "/login", "/logout"], prefix: ["/static", "/api/v1/products"] }]);
        expect(b.global.apiRoute).to.equal(undefined);
    });

    it("virtual host names: 'inbound|http|<localServicePort>' (README); gatewayHosts read as a list", () => {
        const s = resolveSettings({ ...BASE, gatewayPort: "8443", localServicePort: "9081", gatewayHosts: "bookinfo.example.com, *.shop.example.com" });
        expect(inboundVhostName(s)).to.equal("inbound|http|9081");
        expect(s.bookinfo.hosts).to.deep.equal(["bookinfo.example.com", "*.shop.example.com"]);
        const d = resolveSettings(BASE);
        expect(inboundVhostName(d)).to.equal("inbound|http|9080");
        expect(d.bookinfo.hosts).to.deep.equal(["*"]);
    });
});

describe("stack config: checks a mutation run showed untested (docs/proof/mutation.md)", () => {
    it("a service label of exactly 63 characters is accepted; 64 is not", () => {
        expect(problemsOf({ serviceLabel: "a".repeat(63) })).to.deep.equal([]);
        expect(problemsOf({ serviceLabel: "a".repeat(64) }).map((p) => p.key)).to.deep.equal(["serviceLabel"]);
    });

    it("several invalid CIDRs are listed comma-separated", () => {
        expect(problemsOf({ includeIpRanges: "10.0.0.0/8,ten,11.0.0.0/33" })).to.deep.equal([
            P(
                "includeIpRanges",
                "10.0.0.0/8,ten,11.0.0.0/33",
                "has invalid CIDR(s): ten, 11.0.0.0/33",
                "pulumi config set includeIpRanges 10.4.0.0/14,10.7.240.0/20   (your cluster's pod and service CIDRs)",
            ),
        ]);
    });

    it("a domain with spaces: the fix joins its words with '-'", () => {
        expect(problemsOf({ domain: "shop limits" })).to.deep.equal([
            P("domain", "shop limits", "must be non-empty and use only letters, digits, '_', '.', '-'", "pulumi config set domain shop-limits"),
        ]);
    });

    it("an invalid RE2 regex: the engine's message without its generic prefix", () => {
        const [p] = problemsOf({ apiRouteRegex: "/api/(?=v1)" });
        expect(p.key).to.equal("apiRouteRegex");
        expect(p.problem).to.match(/^is not a valid RE2 regular expression \(/);
        expect(p.problem).to.not.include("Invalid regular expression:");
        expect(p.problem.length).to.be.greaterThan("is not a valid RE2 regular expression ()".length);
    });

    it('a descriptor value "" is one problem (its own), not also a duplicate of the catch-all', () => {
        const descriptors = JSON.stringify([
            { key: "PATH", unit: "minute", requestsPerUnit: 5 },
            { key: "PATH", value: "", unit: "minute", requestsPerUnit: 1 },
        ]);
        expect(problemsOf({ descriptors }).map((p) => p.problem)).to.deep.equal(["descriptor #2 has an empty or non-string 'value'"]);
    });

    it("two unnamed routes are fine (only names must be distinct)", () => {
        expect(problemsOf({ virtualServiceRoutes: '[{"exact":["/a"]},{"prefix":["/b"]},{"name":"api","prefix":["/api/v1/products"]}]' })).to.deep.equal([]);
    });

    it("the api descriptor value may equal limitedPath in variant B, where there is no api limit", () => {
        expect(problemsOf({ variant: "B", apiDescriptorValue: "/productpage" }).filter((p) => p.problem.includes("collide"))).to.deep.equal([]);
    });

    it("protobuf-duration fixes: a leading-dot number converted, trailing garbage gives the default", () => {
        expect(problemsOf({ localFillInterval: ".25" }).map((p) => p.fix)).to.deep.equal(["pulumi config set localFillInterval 0.25s"]);
        expect(problemsOf({ localFillInterval: "2mx" }).map((p) => p.fix)).to.deep.equal(["pulumi config set localFillInterval 60s"]);
    });

    it("Go-duration fixes with Redis Cluster: spaces removed when that makes it valid, else the default", () => {
        const cluster = { redisMode: "cluster", redisAddress: "r-0:6379,r-1:6379" };
        expect(problemsOf({ ...cluster, redisPipelineWindow: "1 ms" }).map((p) => p.fix)).to.deep.equal(["pulumi config set redisPipelineWindow 1ms"]);
        expect(problemsOf({ ...cluster, redisPipelineWindow: "1 d" }).map((p) => p.fix)).to.deep.equal(["pulumi config set redisPipelineWindow 0"]);
    });

    it("suggested DNS names drop every leading and trailing '-' of each part", () => {
        expect(suggestedDnsName("--shop", "label")).to.equal("shop");
        expect(suggestedDnsName("a--.b", "subdomain")).to.equal("a.b");
    });

    it("closest value among several prefixed ones: the nearest length, whichever order they are listed in", () => {
        expect(closestValue("minu", ["minutes", "minute"], "second")).to.equal("minute");
        expect(closestValue("minu", ["minute", "minutes"], "second")).to.equal("minute");
        expect(closestValue("minutesx", ["min", "minute", "minutes"], "second")).to.equal("minutes");
    });
});

describe("stack config: rules stated once, by the component that owns the field", () => {
    it("statusOnError with failureModeDeny=false: GlobalRateLimit's problem under the stack's key, the fix a config command", () => {
        expect(problemsOf({ statusOnError: "ServiceUnavailable", failureModeDeny: "false" })).to.deep.equal([
            P(
                "statusOnError",
                "ServiceUnavailable",
                "has no effect unless failureModeDeny is true (the request passes when the service cannot answer)",
                "pulumi config rm statusOnError, or pulumi config set failureModeDeny true",
            ),
        ]);
        expect(problemsOf({ statusOnError: "ServiceUnavailable" })).to.deep.equal([]);
    });
});
