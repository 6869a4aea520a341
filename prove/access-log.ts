/**
 * Access log readers: Istio's default text format, Envoy's own default text format, and the JSON
 * format (Istio's `accessLogEncoding: JSON` keys). Each line becomes a request with its time, or a
 * bad line with its number and the reason; nothing is dropped silently. Pure.
 *
 * Istio's default text format (mesh config `accessLogFormat` unset):
 *   [%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
 *   %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%
 *   "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION%
 *   %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%"
 *   "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW%
 *   %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS%
 *   %REQUESTED_SERVER_NAME% %ROUTE_NAME%
 * Envoy's default text format stops after "%UPSTREAM_HOST%" without the response code details, the
 * termination details and the transport failure reason, and has no client address.
 * `%DOWNSTREAM_REMOTE_ADDRESS%` is the address Envoy trusted (X-Forwarded-For already applied), so it
 * is what a `remote_address` rule counts.
 */
import { METHOD_TOKEN } from "../builders/request-match";
import { parseIp } from "../builders/client-cidr";

/** One request read from a log line. */
export interface LogRequest {
    /** 1-based line number in the log. */
    line: number;
    timeMs: number;
    method: string;
    path: string;
    host?: string;
    /** The trusted client address (DOWNSTREAM_REMOTE_ADDRESS without its port). */
    clientAddress?: string;
    xForwardedFor?: string;
    /** The upstream cluster (`outbound|<port>||<service>.<namespace>.svc.cluster.local`). */
    upstream?: string;
    /** Request headers the log recorded (names in lower case), as a custom format's `%REQ(...)%` gives them. */
    headers?: Record<string, string>;
    /** The status the log recorded (what happened then, not what the model decides now). */
    loggedStatus?: number;
    /** The claims of the verified token the log recorded (`%DYNAMIC_METADATA(envoy.filters.http.jwt_authn:payload:<claim>)%`); absent: none. */
    claims?: Record<string, string>;
}

export interface BadLine {
    line: number;
    reason: string;
    /** The line as read, cut to 200 characters. */
    text: string;
}

export interface ParsedLog {
    requests: LogRequest[];
    bad: BadLine[];
    /** Lines holding only white space. */
    blank: number;
}

const dash = (v: string | undefined) => (v === undefined || v === "-" || v === "" ? undefined : v);

/** An IPv4 address written as the model writes it (no leading zeros), with an optional port: the common case, read without parsing. */
const PLAIN_IPV4 = /^((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})(?::\d{1,5})?$/;

/** `ip:port` or `[ipv6]:port` (or a bare address) → the address; undefined when it is none. */
export function addressOf(s: string | undefined): string | undefined {
    const v = dash(s);
    if (v === undefined) return undefined;
    const plain = PLAIN_IPV4.exec(v);
    if (plain) return plain[1];
    const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
    const candidate = bracket ? bracket[1]! : parseIp(v) ? v : v.replace(/:\d+$/, "");
    return parseIp(candidate) ? candidate : undefined;
}

/** The last whole second read and its time: a log's lines share their second, and Date.parse is slow. */
let lastSecond = "";
let lastSecondMs = NaN;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d{1,9}))?Z$/;

/** An RFC 3339 start time (Envoy's `%START_TIME%`) in ms since the epoch; NaN when it is none. */
export function timeOf(s: string): number {
    const m = ISO_UTC.exec(s);
    if (!m) return Date.parse(s);
    const second = s.slice(0, 19);
    if (second !== lastSecond) {
        lastSecondMs = Date.parse(`${second}Z`);
        lastSecond = second;
    }
    return lastSecondMs + (m[1] ? Number(m[1].slice(0, 3).padEnd(3, "0")) : 0);
}

/** Where each field of a text line starts and ends (reused: a line's reading makes no array of its own). */
const STARTS = new Int32Array(32);
const ENDS = new Int32Array(32);

/**
 * The fields of a line after its `[time]` at `from`: quoted fields as one (quotes dropped), others
 * split on spaces; their offsets go to STARTS and ENDS (the first 32), and their number is returned.
 */
function fieldSpans(text: string, from: number): number {
    const n = text.length;
    let count = 0;
    let i = from;
    while (i < n) {
        const c = text.charCodeAt(i);
        if (c === 32 || c === 9) {
            i++;
            continue;
        }
        let start = i;
        let end: number;
        if (c === 34) {
            // An unclosed quote: the rest of the line is the last field, its quote kept.
            const close = text.indexOf('"', i + 1);
            if (close >= 0) start = i + 1;
            end = close < 0 ? n : close;
            i = close < 0 ? n : close + 1;
        } else {
            let j = i;
            while (j < n && text.charCodeAt(j) !== 32 && text.charCodeAt(j) !== 9) j++;
            end = j;
            i = j;
        }
        if (count < 32) {
            STARTS[count] = start;
            ENDS[count] = end;
        }
        count++;
    }
    return count;
}

/** Checks the fields every format shares; a reason when one is wrong. */
function problemOf(r: { timeMs: number; method: string; path: string }, time: string): string | undefined {
    if (!Number.isFinite(r.timeMs)) return `the start time '${time}' is not a timestamp`;
    if (!METHOD_TOKEN.test(r.method)) return `the method '${r.method}' is not an HTTP method`;
    if (!r.path.startsWith("/")) return `the path '${r.path}' does not start with '/'`;
    return undefined;
}

/** One line of Istio's or Envoy's default text format; only the fields the model reads are cut from it. */
function textLine(text: string, line: number): LogRequest | BadLine {
    const bad = (reason: string): BadLine => ({ line, reason, text: text.slice(0, 200) });
    const close = text.indexOf("]");
    if (close < 0) return bad("no closing ']' after the start time");
    const time = text.slice(1, close);
    const count = fieldSpans(text, close + 1);
    const istio = count === 21;
    if (!istio && count !== 12)
        return bad(
            `${count} fields after the start time: Istio's default format has 21, Envoy's 12 (a custom accessLogFormat is not read; use the JSON encoding)`,
        );
    const columnText = (k: number) => text.slice(STARTS[k], ENDS[k]);
    // The request field, "<method> <path> <protocol>": two single spaces, no third.
    const s0 = STARTS[0]!;
    const e0 = ENDS[0]!;
    const sp1 = text.indexOf(" ", s0);
    const sp2 = sp1 < 0 || sp1 >= e0 ? -1 : text.indexOf(" ", sp1 + 1);
    const sp3 = sp2 < 0 || sp2 >= e0 ? -1 : text.indexOf(" ", sp2 + 1);
    if (sp1 < 0 || sp1 >= e0 || sp2 < 0 || sp2 >= e0 || (sp3 >= 0 && sp3 < e0))
        return bad(`the request field "${columnText(0)}" is not "<method> <path> <protocol>"`);
    const method = text.slice(s0, sp1);
    const path = text.slice(sp1 + 1, sp2);
    const status = Number(columnText(1));
    const at = (inIstio: number, inEnvoy: number) => dash(columnText(istio ? inIstio : inEnvoy));
    // Built field by field: a spread costs more than the rest of the line's reading.
    const r: LogRequest = { line, timeMs: timeOf(time), method, path };
    if (Number.isInteger(status)) r.loggedStatus = status;
    const host = at(13, 10);
    const xff = at(10, 7);
    if (host) r.host = host;
    if (xff) r.xForwardedFor = xff;
    if (istio) {
        const client = addressOf(columnText(18));
        if (client) r.clientAddress = client;
        const upstream = dash(columnText(15));
        if (upstream) r.upstream = upstream;
    }
    const problem = problemOf(r, time);
    return problem ? bad(problem) : r;
}

/** One JSON line (Istio's JSON encoding: start_time, method, path, authority, downstream_remote_address, ...). */
function jsonLine(text: string, line: number): LogRequest | BadLine {
    const bad = (reason: string): BadLine => ({ line, reason, text: text.slice(0, 200) });
    let o: any;
    try {
        o = JSON.parse(text);
    } catch (e) {
        return bad(`not JSON: ${(e as Error).message}`);
    }
    if (o === null || typeof o !== "object" || Array.isArray(o)) return bad("a JSON line is not an object");
    for (const k of ["start_time", "method", "path"]) if (typeof o[k] !== "string") return bad(`the JSON line has no string '${k}'`);
    const r: LogRequest = { line, timeMs: timeOf(o.start_time), method: o.method, path: o.path };
    const status = Number(o.response_code);
    if (Number.isInteger(status) && status > 0) r.loggedStatus = status;
    const host = dash(o.authority);
    if (host) r.host = host;
    const xff = dash(o.x_forwarded_for);
    if (xff) r.xForwardedFor = xff;
    const client = addressOf(o.downstream_remote_address);
    if (client) r.clientAddress = client;
    const upstream = dash(o.upstream_cluster);
    if (upstream) r.upstream = upstream;
    const problem = problemOf(r, o.start_time);
    return problem ? bad(problem) : r;
}

/** The request of fields read by a custom format (prove/log-format.ts), checked as every format's are. */
export function parsedRequest(
    f: {
        time: string;
        method: string;
        path: string;
        host?: string;
        client?: string;
        xff?: string;
        upstream?: string;
        headers?: Record<string, string>;
        claims?: Record<string, string>;
    },
    text: string,
    line: number,
): LogRequest | BadLine {
    const r: LogRequest = { line, timeMs: timeOf(f.time), method: f.method, path: f.path };
    if (f.host) r.host = f.host;
    const client = addressOf(f.client);
    if (client) r.clientAddress = client;
    if (f.xff) r.xForwardedFor = f.xff;
    if (f.upstream) r.upstream = f.upstream;
    if (f.headers) r.headers = f.headers;
    if (f.claims) r.claims = f.claims;
    const problem = problemOf(r, f.time);
    return problem ? { line, reason: problem, text: text.slice(0, 200) } : r;
}

/** One log line of either format; undefined for a blank line. */
export function parseLogLine(text: string, line: number): LogRequest | BadLine | undefined {
    const s = text.trim();
    if (!s) return undefined;
    if (s.startsWith("{")) return jsonLine(s, line);
    if (s.startsWith("[")) return textLine(s, line);
    return { line, reason: "neither a text access log line (starting '[<start time>]') nor a JSON one (starting '{')", text: s.slice(0, 200) };
}

export function isBadLine(x: LogRequest | BadLine): x is BadLine {
    return "reason" in x;
}

/** Every line of a log. */
export function parseLog(text: string): ParsedLog {
    const out: ParsedLog = { requests: [], bad: [], blank: 0 };
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    lines.forEach((l, i) => {
        const r = parseLogLine(l, i + 1);
        if (r === undefined) out.blank++;
        else if (isBadLine(r)) out.bad.push(r);
        else out.requests.push(r);
    });
    return out;
}
