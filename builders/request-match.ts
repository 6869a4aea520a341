/**
 * A rule's request conditions beyond its path and header: the method and a query parameter, each
 * an Envoy header matcher (`header_value_match.headers[]`) on a pseudo-header, written so that
 * every spelling an application reads as the same method or parameter matches too.
 *
 * - Method: `:method` against the listed methods, case-insensitively. HTTP/1 lets a client send
 *   `post`; an application that reads methods without regard to case would serve it as `POST`,
 *   so it counts as `POST`.
 * - Query: `:path` against a regular expression of the query string. Each character of the name
 *   and value may be literal or percent-encoded (either hex case); the name also in either letter
 *   case; a space as `+` or `%20`, a `+` as `+` or `%2B`. The parameter may stand anywhere among
 *   `&`- or `;`-separated parameters, so a repeated parameter (`?tier=gold&tier=free`) matches when
 *   any of its occurrences does: whichever occurrence the application reads, the rule counts it.
 *
 * - Per-value query (`query.perValue`): Envoy's `query_parameters` action sends the first
 *   occurrence whose percent-decoded name is exactly the parameter's, with its percent-decoded value
 *   (the query split on `&` only, `+` left as `+`). An application may read another occurrence, split
 *   on `;` as well, read `+` as a space, or decode the whole query before splitting it: then a
 *   client could send a fresh value where Envoy looks and its real one where the application looks,
 *   and get a new counter each time. The untrusted matcher finds those requests (the name twice in
 *   any spelling, a value holding `;`, `+`, an encoded `&` or `;`), and those whose value has a
 *   percent-encoded byte above 0x7F (it may decode to invalid UTF-8), so that they share one counter
 *   instead of sending their value. Names match in every case a case-insensitive reader accepts
 *   (`caseFolds`: the Kelvin sign is a `k` to Go and Java).
 * - Valid UTF-8: the rate-limit service reads descriptor values as protobuf strings and refuses the
 *   whole call when one is not valid UTF-8; a gateway that fails open then lets the request through
 *   every limit of that call. A per-value entry therefore sends a value only when it is valid UTF-8:
 *   an RE2 class of exactly the Unicode scalar values (RE2's `.` or a class spanning U+0080 to
 *   U+10FFFF would also take surrogates, overlong 3- and 4-byte forms and code points past
 *   U+10FFFF, which the service refuses).
 * - Per-value header (`header.perValue`): Envoy's `request_headers` sends the first value of a
 *   repeated header, while an application may read the last: the same trick as a repeated query
 *   parameter. A header matcher sees a repeated header's values joined with `,`, so a header value
 *   is sent only when that text holds no comma: the header given once, without a comma.
 *
 * Erring towards a match is deliberate: a limit that counts a request its application reads
 * differently is stricter, never bypassed. Pure.
 */
import { MAX_VALUE_BYTES, QueryMatchArgs, ValueCharset } from "./rule-args";
import { HeaderMatcher } from "./envoy-types";

/** RE2-escapes a literal. */
export function escapeRe2(s: string): string {
    return s.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/** An HTTP method: an RFC 9110 token. */
export const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The distinct methods, upper-cased, in the order given. */
export function normalizedMethods(methods: string[]): string[] {
    return [...new Set(methods.map((m) => m.toUpperCase()))];
}

/** The `:method` matcher of a rule's `methods`. */
export function methodCondition(methods: string[]): HeaderMatcher {
    const alternatives = normalizedMethods(methods).map(escapeRe2).join("|");
    return { name: ":method", safe_regex_match: { google_re2: {}, regex: `(?i:${alternatives})` } };
}

/** A percent-encoded byte, either hex case. */
export function encodedByte(b: number): string {
    const hex = b.toString(16).padStart(2, "0");
    return `%${[...hex].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join("")}`;
}

const caseForms = new Map<string, string[]>();

/**
 * The characters a case-insensitive reader takes for `ch`: `ch` itself, its lower and upper case,
 * and every other character (of the Basic Multilingual Plane) with the same lower or upper case,
 * such as the Kelvin sign for `k`, the long s for `s`, the dotless and dotted i for `i` (Go's
 * EqualFold, Java's equalsIgnoreCase).
 */
export function caseFolds(ch: string): string[] {
    let forms = caseForms.get(ch);
    if (forms) return forms;
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    const found = new Set([ch, ...(lower.length === ch.length ? [lower] : []), ...(upper.length === ch.length ? [upper] : [])]);
    if (lower !== upper) {
        for (let c = 0x80; c <= 0xffff; c++) {
            if (c >= 0xd800 && c <= 0xdfff) continue;
            const x = String.fromCharCode(c);
            // Java folds by character: the dotted capital I lowers to "i" there (to "i" and a combining dot here).
            const xl = x.toLowerCase();
            if (xl === lower || x.toUpperCase() === upper || (xl.length > 1 && xl[0] === lower && /^\u0307$/.test(xl.slice(1)))) found.add(x);
        }
    }
    caseForms.set(ch, (forms = [...found]));
    return forms;
}

/** Every way a client may write one character of a query name or value. */
function charPattern(ch: string, anyCase: boolean): string {
    if (ch === " ") return `(?:\\+|${encodedByte(0x20)})`;
    const forms = anyCase ? caseFolds(ch) : [ch];
    const literal = forms.map(escapeRe2);
    const encoded = forms.map((f) => [...Buffer.from(f, "utf8")].map(encodedByte).join(""));
    return `(?:${[...literal, ...encoded].join("|")})`;
}

/** The pattern of a query name (any letter case) or value (exact case), in every spelling. */
export function queryTextPattern(text: string, anyCase: boolean): string {
    return [...text].map((c) => charPattern(c, anyCase)).join("");
}

/** From the start of `:path` to the start of any query parameter. */
const PARAMETER_START = "[^?#]*\\?(?:[^#]*[&;])?";

/** The `:path` regex (RE2, full match) of a request whose query has the parameter (with the value). */
export function queryRegex(q: QueryMatchArgs): string {
    const name = queryTextPattern(q.name, true);
    const rest = q.value === undefined ? "(?:=[^&;#]*)?" : `=${queryTextPattern(q.value, false)}`;
    return `${PARAMETER_START}${name}${rest}(?:[&;#].*)?`;
}

/** A query name in any spelling a reader may take for it, at a parameter start (`?`, `&` or `;` before it), `#` read as query text (Envoy's reader). */
function anyNameAt(name: string): string {
    return `[^?]*\\?(?:.*[&;])?${queryTextPattern(name, true)}`;
}

/**
 * The `:path` regex (RE2, full match) of a request whose parameter `name` readers may see with
 * different values: the name at two parameter starts in any spelling (`&` or `;` before either), an
 * occurrence whose value holds `;`, or an encoded `&`, `;` (a reader that decodes the whole query
 * before splitting it) or space (`%20`: a form reader takes a literal `+` for a space, and `+` is
 * sent as written, so `%20` would be a second counter for the same value).
 */
export function ambiguousQueryRegex(name: string): string {
    const n = queryTextPattern(name, true);
    const twice = `(?:[=&;].*)?[&;]${n}(?:[=&;#].*)?`;
    const split = `=[^&;]*;.*`;
    const encoded = `=[^&]*%(?:26|3[bB]|20).*`;
    return `${anyNameAt(name)}(?:${twice}|${split}|${encoded})`;
}

/** The `:path` regex of a request holding the parameter in any spelling of its name (with or without a value). */
export function queryPresentRegex(name: string): string {
    return `${anyNameAt(name)}(?:[=&;#].*)?`;
}

/** An escape `%XX` of a continuation byte (0x80-0xBF). */
const CONT = "%[89aAbB][0-9a-fA-F]";

/**
 * One unit of a trusted query value: a literal printable ASCII character other than `#`, `%`, `&`,
 * `;` (clients percent-encode the others), or the escape of a printable ASCII byte (`%21`-`%7E`),
 * or (UTF-8) the escapes of one whole well-formed UTF-8 character from U+00A0 on (no overlong form,
 * surrogate or code point past U+10FFFF).
 */
function queryValueUnit(charset: ValueCharset): string {
    const ascii = "!\"$'-:<-~";
    const asciiEscape = "%(?:2[1-9a-fA-F]|[3-6][0-9a-fA-F]|7[0-9a-eA-E])";
    if (charset === ValueCharset.PrintableAscii) return `(?:[${ascii}]|${asciiEscape})`;
    const utf8 = [
        `%[cC]2%[aAbB][0-9a-fA-F]`,
        `%(?:[cC][3-9a-fA-F]|[dD][0-9a-fA-F])${CONT}`,
        `%[eE]0%[aAbB][0-9a-fA-F]${CONT}`,
        `%[eE][1-9a-cA-CeEfF]${CONT}${CONT}`,
        `%[eE][dD]%[89][0-9a-fA-F]${CONT}`,
        `%[fF]0%[9aAbB][0-9a-fA-F]${CONT}${CONT}`,
        `%[fF][1-3]${CONT}${CONT}${CONT}`,
        `%[fF]4%8[0-9a-fA-F]${CONT}${CONT}`,
    ];
    return `(?:[${ascii}]|${asciiEscape}|${utf8.join("|")})`;
}

/**
 * The `:path` regex of a request whose parameter, under exactly `name` (each character literal or
 * percent-encoded, as Envoy's reader decodes names), has a value every unit of which is trusted
 * (`queryValueUnit`). With the request not ambiguous (the name once in any spelling), that one
 * occurrence is the one Envoy's `query_parameters` sends.
 */
export function trustedQueryValueRegex(name: string, charset: ValueCharset): string {
    const exact = [...name].map((c) => (c === " " ? encodedByte(0x20) : charPattern(c, false))).join("");
    return `[^?]*\\?(?:.*&)?${exact}(?:=${queryValueUnit(charset)}*)?(?:&.*)?`;
}

/**
 * The `:path` regex of a request whose parameter (any spelling) has a value of more than
 * `MAX_VALUE_BYTES` bytes as written (percent-encoded: `%C3%A9` is 6). It is asked only of a value
 * the trusted matcher accepts, which is printable ASCII as written: one instruction per byte.
 */
export function longQueryValueRegex(name: string): string {
    return `${anyNameAt(name)}=[\\x{21}-\\x{25}\\x{27}-\\x{7E}]{${MAX_VALUE_BYTES + 1}}.*`;
}

/** A `:path` matcher (`invert`: the requests it does not match). */
export function pathCondition(regex: string, invert = false): HeaderMatcher {
    return { name: ":path", safe_regex_match: { google_re2: {}, regex }, ...(invert ? { invert_match: true } : {}) };
}

/** RE2: one header value a per-value rule may send: valid UTF-8 (or printable ASCII), no comma, no control character; full match. */
export function headerValueRegex(charset: ValueCharset): string {
    const utf8 = charset === ValueCharset.PrintableAscii ? "" : "\\x{A0}-\\x{D7FF}\\x{E000}-\\x{10FFFF}";
    return `[\\x{20}-\\x{2B}\\x{2D}-\\x{7E}${utf8}]*`;
}

/**
 * RE2: a header value of more than `MAX_VALUE_BYTES` bytes; full match. `\\C` is one byte even in
 * UTF-8 mode: one instruction per byte (a character class would take some twenty).
 */
export const LONG_HEADER_VALUE_REGEX = `\\C{${MAX_VALUE_BYTES + 1}}\\C*`;

/** The most hyphens a per-value header's name may hold: each is `-` or `_` in a spelling the guard must see (2^n - 1 matchers). */
export const MAX_HEADER_HYPHENS = 4;

/** The other spellings of a header name with `_` for some or all of its `-` (CGI, WSGI and nginx read them as the same name). */
export function underscoreVariants(name: string): string[] {
    const parts = name.split("-");
    const n = parts.length - 1;
    const out: string[] = [];
    for (let mask = 1; mask < 1 << n; mask++) out.push(parts.reduce((a, p, i) => (i === 0 ? p : `${a}${mask & (1 << (i - 1)) ? "_" : "-"}${p}`), ""));
    return out;
}

/** A header matcher that holds when the header is absent. */
export function headerAbsent(name: string): HeaderMatcher {
    return { name, present_match: true, invert_match: true };
}

/** RE2: a string of Unicode scalar values, i.e. valid UTF-8 (surrogates excluded); full match. */
export const VALID_UTF8_REGEX = "[\\x{0}-\\x{D7FF}\\x{E000}-\\x{10FFFF}]*";

/** RE2: valid UTF-8 without a comma (one header value: Envoy joins a repeated header's values with `,`); full match. */
export const SINGLE_HEADER_VALUE_REGEX = "[\\x{0}-\\x{2B}\\x{2D}-\\x{D7FF}\\x{E000}-\\x{10FFFF}]*";

/**
 * The matcher of a header (or `:path`) that is valid UTF-8 (`single`: and one value, without a
 * comma). `missingMatches`: a missing header counts as the empty value, which matches; `invert`:
 * the header is present and does not match.
 */
export function validUtf8Condition(header: string, o: { invert?: boolean; missingMatches?: boolean; single?: boolean } = {}): HeaderMatcher {
    return {
        name: header,
        safe_regex_match: { google_re2: {}, regex: o.single ? SINGLE_HEADER_VALUE_REGEX : VALID_UTF8_REGEX },
        ...(o.invert ? { invert_match: true } : {}),
        ...(o.missingMatches ? { treat_missing_header_as_empty: true } : {}),
    };
}

/** The `:path` matcher of a rule's `query`. */
export function queryCondition(q: QueryMatchArgs): HeaderMatcher {
    return { name: ":path", safe_regex_match: { google_re2: {}, regex: queryRegex(q) } };
}
