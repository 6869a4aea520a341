/**
 * Every spelling of a path rule's path, as one RE2 expression on `:path` (full match).
 *
 * The gateway hands the rate-limit actions `:path` after its own normalization (Istio's
 * `pathNormalization`; docs/security.md has what each setting does). What is left may still reach
 * the rule's handler under another spelling: backends route more spellings to one handler than the
 * gateway folds. A path rule with `spellings: PathSpellings.Equivalent` (the default) therefore
 * matches, for `/login`:
 *
 * - ASCII letter case: `/LOGIN`, `/Login` (Express, ASP.NET and Spring with case-insensitive
 *   matching route them together). Explicit classes (`[lL]`), not RE2's `(?i)`, which also folds the
 *   Kelvin sign into `k` and the long s into `s`: no backend reads those as ASCII letters.
 * - Each character literal or percent-encoded, either hex case: `/logi%6E`, `/logi%6e`, `/LOGI%4E`
 *   (the Envoy of Istio 1.30 copies a valid escape as it is; Django, Spring, Go and ASP.NET decode
 *   before they route).
 * - Repeated slashes before, between and after segments, and `%2F` as a slash: `//login`,
 *   `/login//` (BASE keeps them; Tomcat, Django and Go's server fold or redirect them).
 * - `;` parameters after any segment: `/login;jsessionid=x`, `/a;x=1/b` (Tomcat and Spring drop them).
 * - A `.` suffix on the last segment: `/login.`, `/login.json` (Rails' `(.:format)`, Spring's suffix
 *   match, Windows' HTTP server dropping trailing dots); `.` also as `%2E`.
 * - Trailing slashes, each with parameters: `/login/`, `/login/;x` (Express and Rails ignore a
 *   trailing slash).
 * - The query as before: `(?:\?.*)?` after an exact path, and a prefix followed by `/`, `;`, `?` or
 *   the end only (`/api` is not `/apiv2`).
 *
 * Erring towards a match is deliberate: a spelling a backend reads as another path is counted too,
 * stricter, never bypassed. Pure.
 */
import { encodedByte, escapeRe2 } from "./request-match";

/** A slash between segments: `/` or `%2F`. */
const SLASH = "(?:/|%2[fF])";
/** `;` parameters after a segment, up to the next slash or the query. */
const PARAMS = "(?:;[^/?]*)?";
/** A `.` suffix on the last segment (`.`, `%2E`, `.json`). */
const DOT_SUFFIX = "(?:(?:\\.|%2[eE])[^/?;]*)?";

/** The literal forms of one ASCII character: both cases of a letter, the character itself otherwise. */
function literalForms(ch: string): string[] {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    return /^[a-zA-Z]$/.test(ch) ? [lower, upper] : [ch];
}

/** Every way a client may write one character (or one `%XX` escape) of a rule's path segment. */
function unitPattern(unit: string): string {
    const ch = unit.length === 3 ? String.fromCharCode(parseInt(unit.slice(1), 16)) : unit;
    // An escape of a byte other than printable ASCII stays an escape (either hex case).
    if (ch.charCodeAt(0) > 0x7e || ch.charCodeAt(0) < 0x21) return encodedByte(ch.charCodeAt(0));
    const forms = literalForms(ch);
    const literal = forms.length === 2 ? `[${forms[0]}${forms[1]}]` : escapeRe2(forms[0]!);
    return `(?:${[literal, ...forms.map((f) => encodedByte(f.charCodeAt(0)))].join("|")})`;
}

/** The units of a segment: each `%XX` escape one unit, each other character one. */
function segmentUnits(segment: string): string[] {
    return segment.match(/%[0-9a-fA-F]{2}|[^]/g) ?? [];
}

/** The segments of a rule's path: between its slashes, empty ones dropped (`/a//b/` is `a`, `b`). */
function pathSegments(path: string): string[] {
    return path.split("/").filter((s) => s !== "");
}

/** The pattern of a rule's path up to the end of its last segment (parameters and a `.` suffix on it included). */
function segmentsPattern(path: string): string {
    const segs = pathSegments(path).map((s) => segmentUnits(s).map(unitPattern).join(""));
    if (!segs.length) return `/${SLASH}*${PARAMS}`;
    const last = segs.length - 1;
    return `/${SLASH}*${segs.map((s, i) => `${s}${i === last ? DOT_SUFFIX : ""}${PARAMS}`).join(`${SLASH}+`)}`;
}

/** The `:path` regex of every spelling of an exact path, any query after it. */
export function exactSpellingsRegex(path: string): string {
    return `${segmentsPattern(path)}(?:${SLASH}+${PARAMS})*(?:\\?.*)?`;
}

/**
 * The `:path` regex of every spelling of a path prefix: the prefix's segments, then the end, a
 * slash, or the query (`/api` is not `/apiv2`); a prefix ending in `/` needs a slash after its
 * last segment, then anything.
 */
export function prefixSpellingsRegex(prefix: string): string {
    return prefix.endsWith("/") ? `${segmentsPattern(prefix)}${SLASH}.*` : `${segmentsPattern(prefix)}(?:(?:/|%2[fF]|\\?).*)?`;
}

/** The longest `exact` or `prefix` a rule matching every spelling takes (each character becomes a few alternatives in one RE2 program). */
export const MAX_SPELLED_PATH = 1024;

/** What a path rule with `PathSpellings.Equivalent` counts, in a few words (the explain output's header says it). */
export const EVERY_SPELLING_TEXT = "every spelling of its path: letter case, %XX escapes, repeated and trailing slashes, ;parameters, a . suffix";
