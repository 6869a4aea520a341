/**
 * mesh/settings.ts outside `resolveSettings`' own checks, exactly: the fix styles and error
 * text, key and value suggestions, the raw-config reader, the small validators and DNS-name
 * suggestions, the derived defaults, and every `Reader` method and the `virtualServiceRoutes` /
 * `descriptors` readers as `resolveSettings` reaches them (one key changed from a valid base; the
 * WHOLE problem list compared: key, value, problem, fix). Where a fix is a plain `pulumi config set`
 * or `rm`, the case also applies it and checks the config is then accepted.
 *
 * Expected values are written from the README, the doc comments and config-schema.ts defaults, not
 * read from the code; everything is computed inside each `it` (Stryker's per-test coverage).
 */
import { defaultApiRegex, defaultRoutes } from "../../builders/routes";
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { closestKey, closestValue, formatProblems, problem, PULUMI_FIX, RawConfig, shellQuote, configError } from "../../mesh/config-problems";
import { compileFullMatch, isCidr, protoDurationSeconds } from "../../lib/formats";
import { Problem, isStackConfigError, InputError } from "../../lib/problems";
import { dnsNameProblem, isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { FixStyle } from "../../lib/fix-style";
import { inboundVhostName, resolveSettings } from "../../mesh/settings";
import { rawConfigFromAll } from "../../program/stack-config";

/** The dev stack's config (as in config-errors.test.ts): valid, so each case fails only for what it changes. */
const BASE: RawConfig = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

/** A style whose every command is visibly its own. */
const STYLE: FixStyle = {
    set: (k, v) => `SET ${k}=${v}`,
    rm: (k) => `RM ${k}`,
    rename: (from, to, v) => `MV ${from}->${to}=${v}`,
    header: (n) => `H(${n})`,
};

type Plain = Omit<Problem, "fixWith">;
const P = (key: string, value: string | undefined, text: string, fix: string): Plain => ({ key, value, problem: text, fix });
const plain = ({ fixWith: _f, ...p }: Problem): Plain => p;

/** The problems of BASE + `set`, without the style functions; [] when the config is accepted. */
function problemsOf(set: RawConfig): Plain[] {
    try {
        resolveSettings({ ...BASE, ...set });
    } catch (e) {
        if (!isStackConfigError(e)) throw e;
        return e.problems.map(plain);
    }
    return [];
}

/** The config after applying every fix, when each is one `pulumi config set K V` or `rm K`; else undefined. */
function withFixesApplied(set: RawConfig, problems: Plain[]): RawConfig | undefined {
    const next: RawConfig = { ...set };
    for (const p of problems) {
        const m = /^pulumi config (?:set (\S+) ('(?:[^']|'\\'')*'|[^\s']+)|rm (\S+))$/.exec(p.fix);
        if (!m) return undefined;
        if (m[3] !== undefined) next[m[3]] = undefined;
        else next[m[1]] = m[2].startsWith("'") ? m[2].slice(1, -1).replace(/'\\''/g, "'") : m[2];
    }
    return next;
}

const INT = "must be a whole number";
const BOOL = "must be true or false";
const PATH = "must be a URL path starting with '/' and without spaces";
const PROTO = "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')";
const GO = "must be a Go duration such as '0', '150us' or '2ms'";
const LABEL = "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')";
const SUBDOMAIN = "must be a Kubernetes DNS-1123 subdomain (lower-case letters, digits, '-', '.')";
const WINDOW_CLUSTER_ONLY =
    "has no effect with redisMode in-cluster: the pinned service applies REDIS_PIPELINE_WINDOW to Redis Cluster only (its single and Sentinel clients pipeline each request's commands already)";
const ROUTES_FIX = `pulumi config set virtualServiceRoutes '[{"exact":["/productpage"],"prefix":["/static"]},{"name":"api","prefix":["/api/v1/products"]}]'`;
const DESC_FIX = `pulumi config set descriptors '[{"key":"PATH","value":"/productpage","unit":"minute","requestsPerUnit":1},{"key":"PATH","unit":"minute","requestsPerUnit":100}]'`;
const NEEDS = (i: number) => `route #${i} needs 'exact' and/or 'prefix': non-empty lists of paths starting with '/'`;
const API_ROUTE = '{"name":"api","prefix":["/api/v1/products"]}';
const D = (fields: string) => `{"key":"PATH","unit":"minute","requestsPerUnit":1${fields}}`;

// ---------------------------------------------------------------------------------------------

describe("settings: fix styles and error text", () => {
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

    it("InputError (stack config): a RunError (no stack trace from the CLI) whose message is the formatted problems", () => {
        const problems = [problem("unit", "weeks", "bad unit", (s) => s.set("unit", "minute"))];
        const err = configError(problems);
        expect(err).to.be.instanceOf(pulumi.RunError);
        expect(err).to.be.instanceOf(Error);
        expect(err.name).to.equal("InputError");
        expect(err.problems).to.equal(problems);
        expect(err.message).to.equal(
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

describe("settings: suggestions for a mistyped key or value", () => {
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

describe("settings: rawConfigFromAll", () => {
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

describe("settings: small validators", () => {
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

describe("settings: derived defaults", () => {
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

// ---------------------------------------------------------------------------------------------

interface Case {
    name: string;
    set: RawConfig;
    problems: Plain[];
}

const s = (k: string, v: string) => `pulumi config set ${k} ${v}`;

const READER_CASES: Case[] = [
    // oneOf: the closest allowed value, the value as given (trimmed)
    { name: "variant ' b ' (case)", set: { variant: " b " }, problems: [P("variant", "b", "must be one of 'A', 'B'", s("variant", "B"))] },
    {
        name: "variant C: A is assumed, so apiLimit stays allowed",
        set: { variant: "C", apiLimit: "3" },
        problems: [P("variant", "C", "must be one of 'A', 'B'", s("variant", "A"))],
    },
    { name: "apiProfile SEED", set: { apiProfile: "SEED" }, problems: [P("apiProfile", "SEED", "must be one of 'current', 'seed'", s("apiProfile", "seed"))] },
    {
        name: "unit Minutes",
        set: { unit: "Minutes" },
        problems: [P("unit", "Minutes", "must be one of 'second', 'minute', 'hour', 'day'", s("unit", "minute"))],
    },
    {
        name: "pathKey url_path",
        set: { pathKey: "url_path" },
        problems: [P("pathKey", "url_path", "must be one of 'url-path', 'literal'", s("pathKey", "url-path"))],
    },
    {
        name: "pathKey LITERAL",
        set: { pathKey: "LITERAL" },
        problems: [P("pathKey", "LITERAL", "must be one of 'url-path', 'literal'", s("pathKey", "literal"))],
    },
    {
        name: "log level warning",
        set: { ratelimitLogLevel: "warning" },
        problems: [P("ratelimitLogLevel", "warning", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "warn"))],
    },
    {
        name: "log level ERROR",
        set: { ratelimitLogLevel: "ERROR" },
        problems: [P("ratelimitLogLevel", "ERROR", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "error"))],
    },
    {
        name: "log level trace: the default",
        set: { ratelimitLogLevel: "trace" },
        problems: [P("ratelimitLogLevel", "trace", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "warn"))],
    },
    {
        name: "placement all",
        set: { localPlacement: "all" },
        problems: [P("localPlacement", "all", "must be one of 'all-routes', 'single-route'", s("localPlacement", "all-routes"))],
    },
    { name: "port mode TCP", set: { espPortMode: "TCP" }, problems: [P("espPortMode", "TCP", "must be one of 'http', 'tcp'", s("espPortMode", "tcp"))] },

    // int: a fraction → the nearest whole number within the range; not a number → the default
    { name: "limit ' 1.5 '", set: { limitedPathLimit: " 1.5 " }, problems: [P("limitedPathLimit", "1.5", INT, s("limitedPathLimit", "2"))] },
    { name: "limit 0.4 rounds to 0, clamped to 1", set: { catchAllLimit: "0.4" }, problems: [P("catchAllLimit", "0.4", INT, s("catchAllLimit", "1"))] },
    { name: "limit -2.5, clamped to 1", set: { catchAllLimit: "-2.5" }, problems: [P("catchAllLimit", "-2.5", INT, s("catchAllLimit", "1"))] },
    { name: "port 70000.7, clamped to 65535", set: { gatewayPort: "70000.7" }, problems: [P("gatewayPort", "70000.7", INT, s("gatewayPort", "65535"))] },
    { name: "port http: the default", set: { localServicePort: "http" }, problems: [P("localServicePort", "http", INT, s("localServicePort", "9080"))] },
    { name: "replicas two: the default", set: { ratelimitReplicas: "two" }, problems: [P("ratelimitReplicas", "two", INT, s("ratelimitReplicas", "2"))] },
    { name: "bucket many: the variant's default", set: { localBucket: "many" }, problems: [P("localBucket", "many", INT, s("localBucket", "4"))] },
    {
        name: "cache size 1e3: the number it writes",
        set: { localCacheSizeInBytes: "1e3" },
        problems: [P("localCacheSizeInBytes", "1e3", INT, s("localCacheSizeInBytes", "1000"))],
    },
    { name: "pool size Infinity: the default", set: { redisPoolSize: "Infinity" }, problems: [P("redisPoolSize", "Infinity", INT, s("redisPoolSize", "10"))] },
    {
        name: "port beyond the safe integers: the maximum",
        set: { gatewayPort: "99999999999999999999" },
        problems: [P("gatewayPort", "99999999999999999999", INT, s("gatewayPort", "65535"))],
    },
    { name: "limit 0", set: { limitedPathLimit: "0" }, problems: [P("limitedPathLimit", "0", "must be at least 1", s("limitedPathLimit", "1"))] },
    {
        name: "pipeline limit -1",
        set: { redisPipelineLimit: "-1" },
        problems: [P("redisPipelineLimit", "-1", "must be at least 0", s("redisPipelineLimit", "0"))],
    },
    {
        name: "cache size -5",
        set: { localCacheSizeInBytes: "-5" },
        problems: [P("localCacheSizeInBytes", "-5", "must be at least 0", s("localCacheSizeInBytes", "0"))],
    },
    { name: "port 65536", set: { gatewayPort: "65536" }, problems: [P("gatewayPort", "65536", "must be between 1 and 65535", s("gatewayPort", "65535"))] },
    { name: "port 0", set: { localServicePort: "0" }, problems: [P("localServicePort", "0", "must be between 1 and 65535", s("localServicePort", "1"))] },
    {
        name: "replicas 101",
        set: { ratelimitReplicas: "101" },
        problems: [P("ratelimitReplicas", "101", "must be between 1 and 100", s("ratelimitReplicas", "100"))],
    },
    {
        name: "bucket 1000000001",
        set: { localBucket: "1000000001" },
        problems: [P("localBucket", "1000000001", "must be between 1 and 1000000000", s("localBucket", "1000000000"))],
    },
    {
        name: "pool size 10001",
        set: { redisPoolSize: "10001" },
        problems: [P("redisPoolSize", "10001", "must be between 1 and 10000", s("redisPoolSize", "10000"))],
    },
    { name: "pool size 0", set: { redisPoolSize: "0" }, problems: [P("redisPoolSize", "0", "must be between 1 and 10000", s("redisPoolSize", "1"))] },

    // bool: yes/y/on/1 → true, no/n/off/0 → false (any case), anything else → the key's default
    ...["yes", "Y", "ON", "1"].map((v): Case => ({
        name: `shadowMode ${v}`,
        set: { shadowMode: v },
        problems: [P("shadowMode", v, BOOL, s("shadowMode", "true"))],
    })),
    ...["no", "N", "Off", "0"].map((v): Case => ({
        name: `failureModeDeny ${v}`,
        set: { failureModeDeny: v },
        problems: [P("failureModeDeny", v, BOOL, s("failureModeDeny", "false"))],
    })),
    {
        name: "failureModeDeny maybe: its default true",
        set: { failureModeDeny: "maybe" },
        problems: [P("failureModeDeny", "maybe", BOOL, s("failureModeDeny", "true"))],
    },
    {
        name: "prometheus maybe: its default false",
        set: { ratelimitPrometheus: "Maybe" },
        problems: [P("ratelimitPrometheus", "Maybe", BOOL, s("ratelimitPrometheus", "false"))],
    },
    { name: "awaitRollout 2: its default true", set: { awaitRollout: "2" }, problems: [P("awaitRollout", "2", BOOL, s("awaitRollout", "true"))] },
    {
        name: "managedApi maybe: read as its default (true), so the managed-API keys are checked as well",
        set: { managedApi: "maybe", includeIpRanges: undefined, espServiceName: undefined },
        problems: [
            P("managedApi", "maybe", BOOL, s("managedApi", "true")),
            P(
                "includeIpRanges",
                undefined,
                "is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)",
                "pulumi config set includeIpRanges 10.4.0.0/14,10.7.240.0/20   (your cluster's pod and service CIDRs), or pulumi config set managedApi false",
            ),
            P(
                "espServiceName",
                undefined,
                "is required: ESP needs the Cloud Endpoints service it serves (--service)",
                "pulumi config set espServiceName echo-api.endpoints.MY_PROJECT.cloud.goog, or pulumi config set managedApi false",
            ),
        ],
    },

    // path: a leading '/', no white space
    {
        name: "limitedPath productpage",
        set: { limitedPath: "productpage" },
        problems: [P("limitedPath", "productpage", PATH, s("limitedPath", "/productpage"))],
    },
    { name: "pagePath '///a b'", set: { pagePath: "///a b" }, problems: [P("pagePath", "///a b", PATH, s("pagePath", "/ab"))] },
    {
        name: "staticPrefix with a space",
        set: { staticPrefix: "/static files" },
        problems: [P("staticPrefix", "/static files", PATH, s("staticPrefix", "/staticfiles"))],
    },
    { name: "logoutPath with a tab", set: { logoutPath: "/log\tout" }, problems: [P("logoutPath", "/log\tout", PATH, s("logoutPath", "/logout"))] },
    { name: "loginPath 'log  in'", set: { loginPath: "log  in" }, problems: [P("loginPath", "log  in", PATH, s("loginPath", "/login"))] },
    { name: "ingressPath echo", set: { ingressPath: "echo" }, problems: [P("ingressPath", "echo", PATH, s("ingressPath", "/echo"))] },

    // protoDuration: what was meant, in seconds with 's', at least the minimum
    { name: "timeout 60", set: { rateLimitTimeout: "60" }, problems: [P("rateLimitTimeout", "60", PROTO, s("rateLimitTimeout", "60s"))] },
    { name: "fill interval 1m", set: { localFillInterval: "1m" }, problems: [P("localFillInterval", "1m", PROTO, s("localFillInterval", "60s"))] },
    {
        name: "fill interval 2m is 120s, not 60s",
        set: { localFillInterval: "2m" },
        problems: [P("localFillInterval", "2m", PROTO, s("localFillInterval", "120s"))],
    },
    {
        name: "timeout 500ms is 0.5s (the README's example), not 60s",
        set: { rateLimitTimeout: "500ms" },
        problems: [P("rateLimitTimeout", "500ms", PROTO, s("rateLimitTimeout", "0.5s"))],
    },
    { name: "timeout 1h", set: { rateLimitTimeout: "1h" }, problems: [P("rateLimitTimeout", "1h", PROTO, s("rateLimitTimeout", "3600s"))] },
    { name: "timeout .5s", set: { rateLimitTimeout: ".5s" }, problems: [P("rateLimitTimeout", ".5s", PROTO, s("rateLimitTimeout", "0.5s"))] },
    { name: "fill interval 1.5", set: { localFillInterval: "1.5" }, problems: [P("localFillInterval", "1.5", PROTO, s("localFillInterval", "1.5s"))] },
    { name: "timeout 1.s", set: { rateLimitTimeout: "1.s" }, problems: [P("rateLimitTimeout", "1.s", PROTO, s("rateLimitTimeout", "1s"))] },
    {
        name: "fill interval 0.0000000001ms: the minimum",
        set: { localFillInterval: "0.0000000001ms" },
        problems: [P("localFillInterval", "0.0000000001ms", PROTO, s("localFillInterval", "0.05s"))],
    },
    {
        name: "timeout too long to write in seconds: its default",
        set: { rateLimitTimeout: "99999999999999999999h" },
        problems: [P("rateLimitTimeout", "99999999999999999999h", PROTO, s("rateLimitTimeout", "10s"))],
    },
    { name: "fill interval '90 s'", set: { localFillInterval: "90 s" }, problems: [P("localFillInterval", "90 s", PROTO, s("localFillInterval", "90s"))] },
    {
        name: "timeout with 10 decimals: 9 kept",
        set: { rateLimitTimeout: "1.0000000001s" },
        problems: [P("rateLimitTimeout", "1.0000000001s", PROTO, s("rateLimitTimeout", "1s"))],
    },
    {
        name: "fill interval 0: '0s' would be refused, the minimum",
        set: { localFillInterval: "0" },
        problems: [P("localFillInterval", "0", PROTO, s("localFillInterval", "0.05s"))],
    },
    { name: "timeout 0: the minimum", set: { rateLimitTimeout: "0" }, problems: [P("rateLimitTimeout", "0", PROTO, s("rateLimitTimeout", "0.001s"))] },
    {
        name: "timeout 0.1ms: the minimum",
        set: { rateLimitTimeout: "0.1ms" },
        problems: [P("rateLimitTimeout", "0.1ms", PROTO, s("rateLimitTimeout", "0.001s"))],
    },
    { name: "timeout soon: its default", set: { rateLimitTimeout: "soon" }, problems: [P("rateLimitTimeout", "soon", PROTO, s("rateLimitTimeout", "10s"))] },
    {
        name: "fill interval -1s: its default",
        set: { localFillInterval: "-1s" },
        problems: [P("localFillInterval", "-1s", PROTO, s("localFillInterval", "60s"))],
    },
    {
        name: "fill interval 0.049999999s",
        set: { localFillInterval: "0.049999999s" },
        problems: [P("localFillInterval", "0.049999999s", "must be at least 0.05s", s("localFillInterval", "0.05s"))],
    },
    {
        name: "timeout 0s",
        set: { rateLimitTimeout: "0s" },
        problems: [P("rateLimitTimeout", "0s", "must be at least 0.001s", s("rateLimitTimeout", "0.001s"))],
    },

    // goDuration: white space removed when that makes one, else the key's default
    {
        name: "pipeline window '150 us' with Redis Cluster",
        set: { redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: "150 us" },
        problems: [P("redisPipelineWindow", "150 us", GO, s("redisPipelineWindow", "150us"))],
    },
    {
        name: "pipeline window '150 us' with the in-cluster Redis: both problems in one round",
        set: { redisPipelineWindow: "150 us" },
        problems: [
            P("redisPipelineWindow", "150 us", GO, s("redisPipelineWindow", "150us")),
            P("redisPipelineWindow", "150 us", WINDOW_CLUSTER_ONLY, "pulumi config rm redisPipelineWindow, or pulumi config set redisMode cluster"),
        ],
    },
    {
        name: "pipeline window abc: the default 0 (150us is refused without Redis Cluster)",
        set: { redisPipelineWindow: "abc" },
        problems: [P("redisPipelineWindow", "abc", GO, s("redisPipelineWindow", "0"))],
    },
    {
        name: "pipeline window 1d with Redis Cluster: the default 0",
        set: { redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: "1d" },
        problems: [P("redisPipelineWindow", "1d", GO, s("redisPipelineWindow", "0"))],
    },

    // json
    ...[
        ["descriptors", "[{key: PATH}]"],
        ["virtualServiceRoutes", "{"],
    ].map(([k, v]): Case => {
        let message = "";
        try {
            JSON.parse(v);
        } catch (e) {
            message = (e as Error).message;
        }
        return {
            name: `${k} ${v}`,
            set: { [k]: v },
            problems: [
                P(k, v, `is not valid JSON (${message})`, `pulumi config set ${k} '<json>' (docs/configuration.md gives the shape), or pulumi config rm ${k}`),
            ],
        };
    }),

    // dnsName
    {
        name: "meshNamespace Istio.System",
        set: { meshNamespace: "Istio.System" },
        problems: [P("meshNamespace", "Istio.System", LABEL, s("meshNamespace", "istio-system"))],
    },
    {
        name: "gatewayName Book_Info.GW",
        set: { gatewayName: "Book_Info.GW" },
        problems: [P("gatewayName", "Book_Info.GW", SUBDOMAIN, s("gatewayName", "book-info.gw"))],
    },
];

const VSR = "virtualServiceRoutes";
const ROUTE_CASES: Case[] = [
    {
        name: "an object, not a list",
        set: { [VSR]: '{"exact":["/a"]}' },
        problems: [P(VSR, '{"exact":["/a"]}', "must be a non-empty JSON list of routes", ROUTES_FIX)],
    },
    { name: "an empty list", set: { [VSR]: " [] " }, problems: [P(VSR, "[]", "must be a non-empty JSON list of routes", ROUTES_FIX)] },
    // No route is left: the default routes stand, so the api route is not reported missing as well.
    { name: "an entry that is a number", set: { [VSR]: " [1] " }, problems: [P(VSR, "[1]", NEEDS(1), ROUTES_FIX)] },
    { name: "an entry that is null", set: { [VSR]: "[null]" }, problems: [P(VSR, "[null]", NEEDS(1), ROUTES_FIX)] },
    { name: "an entry that is a list", set: { [VSR]: '[["/a"]]' }, problems: [P(VSR, '[["/a"]]', NEEDS(1), ROUTES_FIX)] },
    ...[
        '{"exact":"/productpage"}',
        '{"exact":["productpage"]}',
        '{"prefix":[7]}',
        '{"exact":[],"prefix":[]}',
        '{"name":"main"}',
        '{"exact":["/a"],"prefix":"/b"}',
    ].map((bad): Case => ({
        name: `second route ${bad}`,
        set: { [VSR]: `[${API_ROUTE},${bad}]` },
        problems: [P(VSR, `[${API_ROUTE},${bad}]`, NEEDS(2), ROUTES_FIX)],
    })),
    ...['{"name":"","exact":["/p"]}', '{"name":5,"exact":["/p"]}', '{"name":null,"exact":["/p"]}'].map((bad): Case => ({
        name: `second route ${bad}`,
        set: { [VSR]: `[${API_ROUTE},${bad}]` },
        problems: [P(VSR, `[${API_ROUTE},${bad}]`, "route #2 has an invalid 'name'", ROUTES_FIX)],
    })),
    {
        name: "a name used twice",
        set: { [VSR]: '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]' },
        problems: [
            P(VSR, '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]', "route name 'api' appears twice", "give every route a distinct name"),
        ],
    },
];

const DS = "descriptors";
const DESCRIPTOR_CASES: Case[] = [
    { name: "an object, not a list", set: { [DS]: D("") }, problems: [P(DS, D(""), "must be a non-empty JSON list of descriptors", DESC_FIX)] },
    { name: "an empty list", set: { [DS]: "[]" }, problems: [P(DS, "[]", "must be a non-empty JSON list of descriptors", DESC_FIX)] },
    ...["1", "null", '"PATH"'].map((e): Case => ({
        name: `an entry ${e}`,
        set: { [DS]: `[${D("")},${e}]` },
        problems: [P(DS, `[${D("")},${e}]`, `descriptor #2 is not an object`, DESC_FIX)],
    })),
    {
        name: "unknown fields",
        set: { [DS]: `[${D(',"limit":5,"x":1')}]` },
        problems: [P(DS, `[${D(',"limit":5,"x":1')}]`, "descriptor #1 has unknown field(s) limit, x", "allowed fields: key, value, unit, requestsPerUnit")],
    },
    ...['{"unit":"minute","requestsPerUnit":1}', '{"key":"","unit":"minute","requestsPerUnit":1}', '{"key":5,"unit":"minute","requestsPerUnit":1}'].map(
        (d): Case => ({
            name: `key missing or empty: ${d}`,
            set: { [DS]: `[${d}]` },
            problems: [P(DS, `[${d}]`, "descriptor #1 has an empty or missing 'key'", 'set "key":"PATH"')],
        }),
    ),
    {
        name: "a key the gateway never sends",
        set: { [DS]: '[{"key":"path","unit":"minute","requestsPerUnit":1}]' },
        problems: [
            P(
                DS,
                '[{"key":"path","unit":"minute","requestsPerUnit":1}]',
                "descriptor #1 uses key 'path', but the gateway filters only send 'PATH': it would never match",
                'set "key":"PATH"',
            ),
        ],
    },
    ...[',"value":""', ',"value":5', ',"value":null'].map((f): Case => ({
        name: `value${f}`,
        set: { [DS]: `[${D(f)}]` },
        problems: [P(DS, `[${D(f)}]`, "descriptor #1 has an empty or non-string 'value'", "omit 'value' for the catch-all, or give a non-empty string")],
    })),
    ...[
        ['{"key":"PATH","unit":"minutes","requestsPerUnit":1}', 'unit "minutes"'],
        ['{"key":"PATH","unit":"Minute","requestsPerUnit":1}', 'unit "Minute"'],
        ['{"key":"PATH","requestsPerUnit":1}', "unit undefined"],
    ].map(([d, what]): Case => ({
        name: `bad ${what}`,
        set: { [DS]: `[${d}]` },
        problems: [P(DS, `[${d}]`, `descriptor #1 has ${what}`, "use one of second, minute, hour, day")],
    })),
    ...[
        ["0", "0"],
        ["-1", "-1"],
        ["1.5", "1.5"],
        ['"5"', '"5"'],
    ].map(([n, shown]): Case => ({
        name: `requestsPerUnit ${n}`,
        set: { [DS]: `[{"key":"PATH","unit":"minute","requestsPerUnit":${n}}]` },
        problems: [
            P(DS, `[{"key":"PATH","unit":"minute","requestsPerUnit":${n}}]`, `descriptor #1 has requestsPerUnit ${shown}`, "use a whole number of at least 1"),
        ],
    })),
    {
        name: "requestsPerUnit missing",
        set: { [DS]: '[{"key":"PATH","unit":"minute"}]' },
        problems: [P(DS, '[{"key":"PATH","unit":"minute"}]', "descriptor #1 has requestsPerUnit undefined", "use a whole number of at least 1")],
    },
    {
        name: "a value twice",
        set: { [DS]: `[${D(',"value":"/a"')},${D(',"value":"/a"')}]` },
        problems: [
            P(
                DS,
                `[${D(',"value":"/a"')},${D(',"value":"/a"')}]`,
                "descriptor #2 duplicates 'PATH=/a'; the rate-limit service rejects duplicate descriptors",
                "remove one of the two entries",
            ),
        ],
    },
    {
        name: "the catch-all twice",
        set: { [DS]: `[${D("")},${D("")}]` },
        problems: [
            P(
                DS,
                `[${D("")},${D("")}]`,
                "descriptor #2 duplicates the catch-all for 'PATH'; the rate-limit service rejects duplicate descriptors",
                "remove one of the two entries",
            ),
        ],
    },
    {
        name: "every problem of one descriptor at once, in order",
        set: { [DS]: '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]' },
        problems: [
            P(
                DS,
                '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has unknown field(s) x",
                "allowed fields: key, value, unit, requestsPerUnit",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]',
                "descriptor #1 uses key 'path', but the gateway filters only send 'PATH': it would never match",
                'set "key":"PATH"',
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has an empty or non-string 'value'",
                "omit 'value' for the catch-all, or give a non-empty string",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]',
                'descriptor #1 has unit "week"',
                "use one of second, minute, hour, day",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"week","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has requestsPerUnit 0",
                "use a whole number of at least 1",
            ),
        ],
    },
];

function caseTest(c: Case) {
    it(c.name, () => {
        const got = problemsOf(c.set);
        expect(got).to.deep.equal(c.problems);
        // A fix that is one plain command must be accepted once applied.
        const fixed = withFixesApplied(c.set, got);
        if (fixed) expect(problemsOf(fixed), `after applying ${got.map((p) => p.fix).join("; ")}`).to.deep.equal([]);
    });
}

describe("settings: Reader methods through resolveSettings, one key changed (whole problem list)", () => {
    for (const c of READER_CASES) caseTest(c);

    it("every problem's fix is also phrased in another style", () => {
        const err = (() => {
            try {
                resolveSettings({
                    ...BASE,
                    unit: "hours",
                    gatewayPort: "0",
                    shadowMode: "on",
                    pagePath: "p",
                    localFillInterval: "60",
                    redisPipelineWindow: "x",
                    descriptors: "[",
                    meshNamespace: "A",
                });
            } catch (e) {
                return e as InputError;
            }
            throw new Error("accepted");
        })();
        expect(err.problems.map((p) => p.fixWith!(STYLE))).to.deep.equal([
            "SET pagePath=/p",
            "SET unit=hour",
            "SET descriptors=<json> (docs/configuration.md gives the shape), or RM descriptors",
            "SET localFillInterval=60s",
            "SET meshNamespace=a",
            "SET gatewayPort=1",
            "SET redisPipelineWindow=0",
            "SET shadowMode=true",
        ]);
    });
});

describe("settings: accepted values", () => {
    it("booleans in any case", () => {
        const t = resolveSettings({
            ...BASE,
            failureModeDeny: "FALSE",
            shadowMode: "True",
            mutualTls: "fAlSe",
            awaitRollout: "TRUE",
            ratelimitPrometheus: "true",
            accessPolicies: "False",
        });
        expect([t.global.failureModeDeny, t.ratelimit.shadowMode, t.mesh.mutualTls, t.awaitRollout, t.ratelimit.prometheus, t.access.enabled]).to.deep.equal([
            false,
            true,
            false,
            true,
            true,
            false,
        ]);
        const d = resolveSettings(BASE);
        expect([d.global.failureModeDeny, d.ratelimit.shadowMode, d.mesh.mutualTls, d.awaitRollout, d.ratelimit.prometheus, d.access.enabled]).to.deep.equal([
            true,
            false,
            true,
            true,
            false,
            true,
        ]);
        expect(resolveSettings({ ...BASE, managedApi: "FALSE" }).managedApi).to.equal(undefined);
    });

    it("whole numbers at both ends of their range, with surrounding spaces", () => {
        const lo = resolveSettings({
            ...BASE,
            limitedPathLimit: " 1 ",
            gatewayPort: "1",
            ratelimitReplicas: "1",
            localBucket: "1",
            redisPipelineLimit: "0",
            localCacheSizeInBytes: "0",
            redisPoolSize: "1",
            localServicePort: "1",
        });
        expect([
            lo.global.descriptors[0].requestsPerUnit,
            lo.bookinfo.gatewayPort,
            lo.ratelimit.replicas,
            lo.local.bucket,
            lo.ratelimit.redisPipelineLimit,
            lo.ratelimit.localCacheSizeInBytes,
            lo.ratelimit.redisPoolSize,
            lo.local.servicePort,
        ]).to.deep.equal([1, 1, 1, 1, 0, 0, 1, 1]);
        const hi = resolveSettings({
            ...BASE,
            gatewayPort: "65535",
            ratelimitReplicas: "100",
            localBucket: "1000000000",
            redisPoolSize: "10000",
            localServicePort: "65535",
            ratelimitGrpcPort: "65535",
        });
        expect([
            hi.bookinfo.gatewayPort,
            hi.ratelimit.replicas,
            hi.local.bucket,
            hi.ratelimit.redisPoolSize,
            hi.local.servicePort,
            hi.ratelimit.grpcPort,
        ]).to.deep.equal([65535, 100, 1000000000, 10000, 65535, 65535]);
    });

    it("unset, empty or blank values are the defaults (the variant's where it has one)", () => {
        for (const blank of [undefined, "", "   "]) {
            const a = resolveSettings({
                ...BASE,
                domain: blank,
                unit: blank,
                limitedPath: blank,
                localBucket: blank,
                apiLimit: blank,
                catchAllLimit: blank,
                localFillInterval: blank,
                redisPipelineWindow: blank,
                failureModeDeny: blank,
            });
            expect(a.global.domain).to.equal("ratelimit");
            expect(a.global.descriptors).to.deep.equal([
                { key: "PATH", value: "/productpage", unit: "minute", requestsPerUnit: 1 },
                { key: "PATH", value: "api", unit: "minute", requestsPerUnit: 2 },
                { key: "PATH", unit: "minute", requestsPerUnit: 100 },
            ]);
            expect([a.local.bucket, a.local.fillInterval, a.ratelimit.redisPipelineWindow, a.global.failureModeDeny]).to.deep.equal([4, "60s", "0", true]);
            const b = resolveSettings({ ...BASE, variant: "B", domain: blank, localBucket: blank });
            expect([b.global.domain, b.local.bucket]).to.deep.equal(["productpage-ratelimit", 10]);
        }
    });

    it("values are trimmed", () => {
        const t = resolveSettings({ ...BASE, variant: " B ", limitedPath: "  /x  ", unit: " hour ", rateLimitTimeout: " 0.5s " });
        expect([t.variant, t.paths.limited, t.global.descriptors[0].unit, t.global.timeout]).to.deep.equal(["B", "/x", "hour", "0.5s"]);
    });

    it("durations at their minimum, Go durations in every unit", () => {
        const t = resolveSettings({ ...BASE, localFillInterval: "0.05s", rateLimitTimeout: "0.001s" });
        expect([t.local.fillInterval, t.global.timeout]).to.deep.equal(["0.05s", "0.001s"]);
        for (const w of ["0", "150us", "2ms", "1µs", "1h2m3.5s", "10ns"]) {
            expect(
                resolveSettings({ ...BASE, redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: w }).ratelimit.redisPipelineWindow,
                w,
            ).to.equal(w);
        }
    });

    it("include ranges: IPv4 and IPv6 CIDRs, spaces around commas", () => {
        expect(resolveSettings({ ...BASE, includeIpRanges: " 10.4.0.0/14 , fd00::/8 ," }).managedApi!.includeIpRanges).to.deep.equal([
            "10.4.0.0/14",
            "fd00::/8",
        ]);
        expect(problemsOf({ includeIpRanges: "10.4.0.0/14,10.0.0.0/08" })).to.deep.equal([
            P("includeIpRanges", "10.4.0.0/14,10.0.0.0/08", "has invalid CIDR(s): 10.0.0.0/08", "use comma-separated CIDRs such as 10.4.0.0/14,10.7.240.0/20"),
        ]);
    });
});

describe("settings: virtualServiceRoutes (readRoutes), whole problem list", () => {
    for (const c of ROUTE_CASES) caseTest(c);

    it("accepted routes are used as written; a route's name is optional", () => {
        const b = resolveSettings({ ...BASE, variant: "B", [VSR]: '[{"exact":["/a"]},{"name":"x","prefix":["/b","/c"]}]' });
        expect(b.bookinfo.routes).to.deep.equal([
            { name: undefined, exact: ["/a"], prefix: [] },
            { name: "x", exact: [], prefix: ["/b", "/c"] },
        ]);
        const a = resolveSettings({ ...BASE, [VSR]: `[{"name":"main","exact":["/productpage"]},${API_ROUTE}]` });
        expect(a.bookinfo.routes).to.deep.equal([
            { name: "main", exact: ["/productpage"], prefix: [] },
            { name: "api", exact: [], prefix: ["/api/v1/products"] },
        ]);
    });
});

describe("settings: descriptors (readDescriptors), whole problem list", () => {
    for (const c of DESCRIPTOR_CASES) caseTest(c);

    it("accepted descriptors are used as written, the catch-all without a value", () => {
        const t = resolveSettings({
            ...BASE,
            [DS]: '[{"key":"PATH","value":"/a","unit":"second","requestsPerUnit":3},{"key":"PATH","value":"/b","unit":"hour","requestsPerUnit":1},{"key":"PATH","unit":"day","requestsPerUnit":1000}]',
        });
        expect(t.global.descriptors).to.deep.equal([
            { key: "PATH", value: "/a", unit: "second", requestsPerUnit: 3 },
            { key: "PATH", value: "/b", unit: "hour", requestsPerUnit: 1 },
            { key: "PATH", value: undefined, unit: "day", requestsPerUnit: 1000 },
        ]);
    });
});

describe("settings: checks a mutation run showed untested (docs/mutation.md)", () => {
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
                "use comma-separated CIDRs such as 10.4.0.0/14,10.7.240.0/20",
            ),
        ]);
    });

    it("a domain with spaces: the fix keeps its valid characters", () => {
        expect(problemsOf({ domain: "shop limits" })).to.deep.equal([
            P("domain", "shop limits", "must be non-empty and use only letters, digits, '_', '.', '-'", "pulumi config set domain shoplimits"),
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
