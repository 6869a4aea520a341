/**
 * The valid-UTF-8 matcher of per-value rules (builders/request-match.ts VALID_UTF8_REGEX) against
 * the C++ RE2 library Envoy's `safe_regex` uses (Debian's libre2, default options), on raw bytes:
 * a per-value entry sends a header or query value only when this matcher accepts it, and the
 * rate-limit service refuses a whole call holding a value that is not valid UTF-8 (its protobuf
 * strings; the rls tier shows the refusal). So the matcher must accept exactly the byte strings the
 * service accepts: valid UTF-8 without surrogates, as WHATWG's strict decoder (Node's TextDecoder
 * with `fatal`) and Go's utf8.ValidString read it.
 *
 * And the program size of the query matchers at the longest name and value a rule takes, against
 * the limit Istio's Envoy runs with (`re2.max_program_size.error_level` 32,768 in Istio's
 * bootstrap, pkg/bootstrap: a larger program fails the whole route configuration).
 *
 * Needs g++ and libre2-dev (scripts/tools/install-debian.sh installs them).
 */
import { expect } from "chai";
import {
    LONG_HEADER_VALUE_REGEX,
    VALID_UTF8_REGEX,
    ambiguousQueryRegex,
    headerValueRegex,
    longQueryValueRegex,
    queryPresentRegex,
    queryRegex,
    trustedQueryValueRegex,
} from "../../builders/request-match";
import { ValueCharset } from "../../builders/rule-args";
import { MAX_QUERY_TEXT } from "../../components/rules/rule-field-checks";
import { probe, re2FullMatch, re2ProgramSizes } from "../re2/probe";

const strict = new TextDecoder("utf-8", { fatal: true });
function validUtf8(b: Buffer): boolean {
    try {
        strict.decode(b);
        return true;
    } catch {
        return false;
    }
}

/**
 * Seeded byte strings where UTF-8 goes wrong: ASCII, stray bytes of 0x80–0xFF, and lead bytes
 * followed (mostly) by as many continuation bytes as they announce, which forms valid characters,
 * surrogates (0xED 0xA0–0xBF ..), overlong forms (0xC0, 0xE0 0x80–0x9F ..) and code points past
 * U+10FFFF (0xF4 0x90.., 0xF5–0xF7 ..).
 */
function fuzz(n: number): Buffer[] {
    let seed = 20261126;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const byte = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
    const out: Buffer[] = [];
    for (let i = 0; i < n; i++) {
        const bytes: number[] = [];
        for (let parts = Math.floor(next() * 4); parts > 0; parts--) {
            const k = next();
            if (k < 0.2) bytes.push(byte(0x20, 0x7e));
            else if (k < 0.3) bytes.push(byte(0x80, 0xff));
            else {
                const lead = byte(0xc0, 0xf7);
                const tail = lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : 3;
                bytes.push(lead);
                for (let t = 0; t < tail; t++) if (next() < 0.9) bytes.push(byte(0x80, 0xbf));
            }
        }
        out.push(Buffer.from(bytes));
    }
    // Every well-formed sequence boundary: U+0000, U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
    for (const cp of [0, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff, 0x10000, 0x10ffff]) out.push(Buffer.from(String.fromCodePoint(cp), "utf8"));
    return out;
}

describe("per-value rules: the valid-UTF-8 matcher on the C++ RE2 Envoy uses (raw bytes)", function () {
    this.timeout(60_000);
    let bin = "";
    before(() => {
        bin = probe();
    });
    const hex = (h: string) => Buffer.from(h, "hex");

    it("accepts text the service reads: ASCII, NUL, 2- to 4-byte characters, the last before and first after the surrogates, U+10FFFF", () => {
        const ok = ["", "616263", "00", "c3a9", "e282ac", "f09f9880", "ed9fbf", "ee8080", "f48fbfbf", "612c62"].map(hex);
        expect(re2FullMatch(bin, VALID_UTF8_REGEX, ok)).to.deep.equal(ok.map(() => true));
    });
    it("refuses what the service refuses: a stray 0xFF, a lone continuation byte, a cut sequence, an overlong form, a surrogate, a code point past U+10FFFF", () => {
        const bad = ["61ff", "80", "c3", "e282", "c0af", "e080af", "eda080", "edbfbf", "f4908080", "f8888080"].map(hex);
        expect(bad.map(validUtf8), "the strict decoder refuses them too").to.deep.equal(bad.map(() => false));
        expect(re2FullMatch(bin, VALID_UTF8_REGEX, bad)).to.deep.equal(bad.map(() => false));
    });
    it("agrees with the strict UTF-8 decoder on 3,010 byte strings (3,000 seeded, 10 boundary characters)", () => {
        const inputs = fuzz(3000);
        const got = re2FullMatch(bin, VALID_UTF8_REGEX, inputs);
        const disagree = inputs.filter((b, i) => got[i] !== validUtf8(b)).map((b) => b.toString("hex"));
        expect(disagree).to.deep.equal([]);
        expect(inputs.filter(validUtf8).length, "both kinds are tried").to.be.within(100, 2900);
    });
    it("negative control: `(?s:.*)` lets through what the service refuses: surrogates, overlong 3- and 4-byte forms, code points past U+10FFFF", () => {
        const inputs = fuzz(3000);
        const got = re2FullMatch(bin, "(?s:.*)", inputs);
        const disagree = inputs.filter((b, i) => got[i] !== validUtf8(b)).map((b) => b.toString("hex"));
        expect(disagree.length).to.be.greaterThan(0);
        expect(re2FullMatch(bin, "(?s:.*)", ["eda080", "e080af", "f08f8080", "f4908080"].map(hex))).to.deep.equal([true, true, true, true]);
    });

    it("a header's matcher: valid UTF-8 without a comma (Envoy joins a repeated header's values with ',') or a control character", () => {
        const inputs = [...fuzz(3000), ...["00", "09", "1f", "7f", "c280", "c29f", "c2a0"].map(hex)];
        const got = re2FullMatch(bin, headerValueRegex(ValueCharset.Utf8), inputs);
        const control = (c: string) => c.codePointAt(0)! < 0x20 || (c.codePointAt(0)! >= 0x7f && c.codePointAt(0)! <= 0x9f);
        const want = inputs.map((b) => validUtf8(b) && ![...b.toString("utf8")].some((c) => c === "," || control(c)));
        expect(inputs.filter((b, i) => got[i] !== want[i]).map((b) => b.toString("hex"))).to.deep.equal([]);
        expect(re2FullMatch(bin, headerValueRegex(ValueCharset.Utf8), ["6b31", "6b312c6b32", "2c", "", "c3a92b2d", "6100", "61096b"].map(hex))).to.deep.equal([
            true,
            false,
            false,
            true,
            true,
            false,
            false,
        ]);
    });
    it("printable ASCII only: U+0020 to U+007E without the comma; control: the UTF-8 matcher takes é", () => {
        const inputs = ["4162632d395f7e", "20", "c3a9", "7f", "2c"].map(hex);
        expect(re2FullMatch(bin, headerValueRegex(ValueCharset.PrintableAscii), inputs)).to.deep.equal([true, true, false, false, false]);
        expect(re2FullMatch(bin, headerValueRegex(ValueCharset.Utf8), inputs)).to.deep.equal([true, true, true, false, false]);
    });
    it("a header value over 256 bytes: bytes, whatever the characters (\\C is one byte in UTF-8 mode)", () => {
        const inputs = ["a".repeat(256), "a".repeat(257), "é".repeat(128), "é".repeat(128) + "a", "😀".repeat(64), "😀".repeat(64) + "a"].map((t) =>
            Buffer.from(t, "utf8"),
        );
        expect(re2FullMatch(bin, LONG_HEADER_VALUE_REGEX, inputs)).to.deep.equal([false, true, false, true, false, true]);
        // Control: a character count would let 128 two-byte characters (256 of them, 512 bytes) pass as short.
        expect(re2FullMatch(bin, "(?s:.){257}(?s:.)*", [Buffer.from("é".repeat(256), "utf8")])).to.deep.equal([false]);
    });
    it(`the query matchers at the longest name and value (${MAX_QUERY_TEXT} characters) stay under Istio's RE2 program size limit of 32,768, whatever the characters`, () => {
        const worst: string[] = [];
        for (const ch of ["a", "i", "k", "é", "Ω", "😀", "+", " "]) {
            const t = ch.repeat(MAX_QUERY_TEXT);
            worst.push(
                ambiguousQueryRegex(t),
                queryPresentRegex(t),
                trustedQueryValueRegex(t, ValueCharset.Utf8),
                longQueryValueRegex(t),
                queryRegex({ name: t, value: t }),
                queryRegex({ name: t }),
            );
        }
        const sizes = re2ProgramSizes(bin, worst);
        expect(Math.min(...sizes), "every one compiles").to.be.greaterThan(0);
        expect(Math.max(...sizes)).to.be.below(32768 / 2);
        // The value matchers, whatever the name: small.
        const values = re2ProgramSizes(bin, [
            headerValueRegex(ValueCharset.Utf8),
            LONG_HEADER_VALUE_REGEX,
            trustedQueryValueRegex("k", ValueCharset.Utf8),
            longQueryValueRegex("k"),
        ]);
        expect(Math.max(...values)).to.be.below(2000);
        // Control: the measure grows with the text, so a longer one would cross the limit.
        const long = re2ProgramSizes(bin, [ambiguousQueryRegex("😀".repeat(MAX_QUERY_TEXT * 4))]);
        expect(long[0]).to.be.above(32768);
    });
});
