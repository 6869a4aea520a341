/**
 * Access logs in a custom Envoy format (Istio's mesh config `accessLogFormat`, a Telemetry's or an
 * EnvoyFilter's access log): the format string the gateway wrote the log with, text or JSON, read
 * into a line reader. Its command operators give the request's fields: `%START_TIME%`,
 * `%REQ(:METHOD)%`, `%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%` (or `%REQ(:PATH)%`), `%REQ(:AUTHORITY)%`,
 * `%DOWNSTREAM_REMOTE_ADDRESS%` (with or without `_WITHOUT_PORT`), `%UPSTREAM_CLUSTER%` (or
 * `_RAW`), and any other `%REQ(name)%`: that request header, so a rule counting per header value is
 * replayed per value. Other operators are skipped. `-` (Envoy's "no value") reads as absent. Pure.
 *
 * A text format is read as its literal text with each operator standing for any text up to the
 * literal that follows it: literals between operators (quotes, brackets, spaces) must not occur
 * inside the values they delimit, as in Istio's default format.
 */
import { BadLine, LogRequest, parsedRequest } from "./access-log";

/** Where an operator's value goes in a request. */
type Target = "time" | "method" | "path" | "host" | "client" | "xff" | "upstream" | { header: string } | { claim: string } | undefined;

/** The dynamic metadata Envoy's JWT filter writes a verified token's payload to (Istio's `payload_in_metadata`). */
const JWT_PAYLOAD = /^DYNAMIC_METADATA\(envoy\.filters\.http\.jwt_authn:payload:([^:)]+)\)$/;

/** Whether a format records a verified token's claim (so that a line without one is a request without a verified token). */
export function formatLogsClaims(format: string): boolean {
    return /%DYNAMIC_METADATA\(envoy\.filters\.http\.jwt_authn:payload:[^:)]+\)(?::\d+)?%/.test(format);
}

/** The target of one command operator (`REQ(X?Y):N` → the first header named, its length limit dropped). */
export function targetOf(operator: string): Target {
    const op = operator.replace(/:\d+$/, "");
    if (op === "START_TIME" || op.startsWith("START_TIME(")) return "time";
    if (/^DOWNSTREAM_REMOTE_ADDRESS(_WITHOUT_PORT)?$/.test(op)) return "client";
    if (/^UPSTREAM_CLUSTER(_RAW)?$/.test(op)) return "upstream";
    const claim = JWT_PAYLOAD.exec(op);
    if (claim) return { claim: claim[1]! };
    const req = /^REQ\(([^)]+)\)$/.exec(op);
    if (!req) return undefined;
    const names = req[1]!.toLowerCase().split("?");
    if (names.includes(":method")) return "method";
    if (names.includes(":path")) return "path";
    if (names.includes(":authority") || names.includes("host")) return "host";
    if (names[0] === "x-forwarded-for") return "xff";
    return { header: names[0]! };
}

/** A line reader of one format: a request or a bad line. */
export type FormatReader = (text: string, line: number) => LogRequest | BadLine;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What the fields read from a line make: a request, or a bad line naming the missing or wrong field. */
function fromFields(values: [Target, string][], text: string, line: number): LogRequest | BadLine {
    const f: { time?: string; method?: string; path?: string; host?: string; client?: string; xff?: string; upstream?: string } = {};
    const headers: Record<string, string> = {};
    let claims: Record<string, string> | undefined;
    for (const [t, raw] of values) {
        if (t === undefined || raw === "-" || raw === "") continue;
        if (typeof t !== "object") f[t] = raw;
        else if ("header" in t) headers[t.header] = raw;
        else (claims ??= {})[t.claim] = raw;
    }
    for (const k of ["time", "method", "path"] as const)
        if (f[k] === undefined) return { line, reason: `the format's ${k} field is empty on this line`, text: text.slice(0, 200) };
    const extra = { ...(Object.keys(headers).length ? { headers } : {}), ...(claims ? { claims } : {}) };
    return parsedRequest({ ...f, time: f.time!, method: f.method!, path: f.path!, ...extra }, text, line);
}

/** The reader of a text format string. */
function textReader(format: string): FormatReader {
    const targets: Target[] = [];
    let pattern = "^";
    let last = 0;
    const ops = [...format.matchAll(/%([A-Z_]+(?:\([^)]*\))?(?::\d+)?)%/g)];
    ops.forEach((m, i) => {
        pattern += escape(format.slice(last, m.index)) + (i === ops.length - 1 ? "(.*)" : "(.*?)");
        targets.push(targetOf(m[1]!));
        last = m.index! + m[0].length;
    });
    const re = new RegExp(`${pattern}${escape(format.slice(last).replace(/\n$/, ""))}$`);
    return (text, line) => {
        const m = re.exec(text);
        if (!m) return { line, reason: "the line does not have the shape of the access log format given", text: text.slice(0, 200) };
        return fromFields(
            targets.map((t, i) => [t, m[i + 1]!]),
            text,
            line,
        );
    };
}

/** The reader of a JSON format (`{"key": "%OPERATOR%", ...}`). */
function jsonReader(format: Record<string, unknown>): FormatReader {
    const keys = Object.entries(format).flatMap(([k, v]) => {
        const m = typeof v === "string" ? /^%([A-Z_]+(?:\([^)]*\))?(?::\d+)?)%$/.exec(v) : null;
        return m ? [[k, targetOf(m[1]!)] as [string, Target]] : [];
    });
    return (text, line) => {
        let o: any;
        try {
            o = JSON.parse(text);
        } catch (e) {
            return { line, reason: `not JSON: ${(e as Error).message}`, text: text.slice(0, 200) };
        }
        if (o === null || typeof o !== "object" || Array.isArray(o)) return { line, reason: "a JSON line is not an object", text: text.slice(0, 200) };
        return fromFields(
            keys.map(([k, t]) => [t, o[k] === undefined || o[k] === null ? "" : String(o[k])]),
            text,
            line,
        );
    };
}

/** The reader of a format: JSON when it is a JSON object (Envoy's `json_format`), else text. Throws naming what is missing. */
export function formatReader(format: string): FormatReader {
    const trimmed = format.trim();
    let json: unknown;
    if (trimmed.startsWith("{"))
        try {
            json = JSON.parse(trimmed);
        } catch (e) {
            throw new Error(
                `the access log format starts with '{' but is not JSON (${(e as Error).message}): give a JSON object of keys to %OPERATOR%s, or a text format`,
                { cause: e },
            );
        }
    const targets = json ? Object.values(json as object).map((v) => (typeof v === "string" ? v : "")) : [format];
    const found = new Set(targets.flatMap((t) => [...t.matchAll(/%([A-Z_]+(?:\([^)]*\))?(?::\d+)?)%/g)].map((m) => targetOf(m[1]!))));
    const missing = (["time", "method", "path"] as const).filter((t) => !found.has(t));
    if (missing.length)
        throw new Error(
            `the access log format has no ${missing.join(" or ")} field: replay needs %START_TIME%, %REQ(:METHOD)% and %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% (or %REQ(:PATH)%)`,
        );
    return json ? jsonReader(json as Record<string, unknown>) : textReader(format);
}
