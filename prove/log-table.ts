/**
 * The requests of an access log held in columns, so that a log of millions of lines takes tens of
 * megabytes: each request is a time, a line number, its client address and its shape (method,
 * path, host, X-Forwarded-For, upstream, request headers), the last two as numbers standing for
 * strings each kept once. A request is rebuilt as a LogRequest when the replay reaches it.
 */
import { BadLine, isBadLine, LogRequest, parseLogLine } from "./access-log";
import { LineSink } from "./log-input";
import { FormatReader } from "./log-format";

/** Distinct strings, each kept once as its own copy (not a slice of the line it was read from); id 0 is "none". */
class Strings {
    private readonly ids = new Map<string, number>();
    readonly values: (string | undefined)[] = [undefined];

    id(s: string | undefined): number {
        if (s === undefined) return 0;
        let i = this.ids.get(s);
        if (i === undefined) {
            const own = Buffer.from(s, "utf8").toString("utf8");
            i = this.values.length;
            this.values.push(own);
            this.ids.set(own, i);
        }
        return i;
    }
}

/** The parts of a request other than its time, line and client, joined: a log repeats few of them. */
const SHAPE = ["method", "path", "host", "xForwardedFor", "upstream"] as const;
const SEP = "\u0001";

/** An IPv4 address written as the model writes it (no leading zeros) → its 32 bits; undefined for anything else. */
export function packIpv4(s: string): number | undefined {
    let n = 0;
    let part = 0;
    let digits = 0;
    let dots = 0;
    for (let k = 0; k < s.length; k++) {
        const c = s.charCodeAt(k);
        if (c === 46) {
            if (!digits || dots === 3) return undefined;
            n = n * 256 + part;
            part = 0;
            digits = 0;
            dots++;
        } else if (c >= 48 && c <= 57) {
            if (digits && part === 0) return undefined;
            part = part * 10 + (c - 48);
            if (++digits > 3 || part > 255) return undefined;
        } else return undefined;
    }
    if (!digits || dots !== 3) return undefined;
    return (n * 256 + part) >>> 0;
}

/** The address of packIpv4's bits. */
export function unpackIpv4(n: number): string {
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

function grow<T extends Float64Array | Uint32Array | Uint8Array>(a: T, size: number): T {
    const b = new (a.constructor as new (n: number) => T)(size);
    b.set(a);
    return b;
}

export class LogTable {
    /** `keep`: the request headers kept (those the program can read, prove/read-fields.ts); absent: every one. */
    constructor(private readonly keep?: (name: string) => boolean) {}

    private readonly strings = new Strings();
    private time = new Float64Array(1024);
    private lineNo = new Uint32Array(1024);
    /** The id of the request's shape: SHAPE's fields and its headers' JSON, joined by SEP. */
    private shape = new Uint32Array(1024);
    /** The client: an IPv4 address as its 32 bits (clientKind 1), else a string's id (clientKind 0; id 0: none). */
    private client = new Uint32Array(1024);
    private clientKind = new Uint8Array(1024);
    size = 0;
    /** Requests whose time is earlier than the request read before them. */
    outOfOrder = 0;

    add(r: LogRequest): void {
        const i = this.size++;
        if (i === this.time.length) {
            const n = Math.ceil(this.time.length * 1.5);
            this.time = grow(this.time, n);
            this.lineNo = grow(this.lineNo, n);
            this.shape = grow(this.shape, n);
            this.client = grow(this.client, n);
            this.clientKind = grow(this.clientKind, n);
        }
        if (i > 0 && r.timeMs < this.time[i - 1]!) this.outOfOrder++;
        this.time[i] = r.timeMs;
        this.lineNo[i] = r.line;
        const xff = r.xForwardedFor !== undefined && (!this.keep || this.keep("x-forwarded-for")) ? r.xForwardedFor : "";
        const headers = r.headers ? this.kept(r.headers) : undefined;
        const claims = r.claims ? JSON.stringify(r.claims) : "";
        const shape = `${r.method}${SEP}${r.path}${SEP}${r.host ?? ""}${SEP}${xff}${SEP}${r.upstream ?? ""}${SEP}${headers ? JSON.stringify(headers) : ""}${SEP}${claims}`;
        this.shape[i] = this.strings.id(shape);
        // A million distinct clients cost 5 bytes each, not a string each.
        const v4 = r.clientAddress !== undefined ? packIpv4(r.clientAddress) : undefined;
        if (v4 !== undefined) {
            this.client[i] = v4;
            this.clientKind[i] = 1;
        } else this.client[i] = this.strings.id(r.clientAddress);
    }

    /** The headers the program can read, undefined when none is. */
    private kept(h: Record<string, string>): Record<string, string> | undefined {
        if (!this.keep) return h;
        let out: Record<string, string> | undefined;
        for (const k in h) if (this.keep(k)) (out ??= {})[k] = h[k]!;
        return out;
    }

    /** The id of row `i`'s shape: rows of one id differ only in their time, line and client. */
    shapeOf(i: number): number {
        return this.shape[i]!;
    }

    lineOf(i: number): number {
        return this.lineNo[i]!;
    }

    timeOf(i: number): number {
        return this.time[i]!;
    }

    /** Row `i`'s client address; undefined when the line had none. */
    clientOf(i: number): string | undefined {
        return this.clientKind[i] === 1 ? unpackIpv4(this.client[i]!) : this.strings.values[this.client[i]!];
    }

    /** The request at row `i`. */
    at(i: number): LogRequest {
        const parts = this.strings.values[this.shape[i]!]!.split(SEP);
        const r: LogRequest = { line: this.lineNo[i]!, timeMs: this.time[i]!, method: parts[0]!, path: parts[1]! };
        SHAPE.forEach((f, k) => {
            if (k > 1 && parts[k]) r[f as "host"] = parts[k];
        });
        const client = this.clientOf(i);
        if (client !== undefined) r.clientAddress = client;
        if (parts[5]) r.headers = JSON.parse(parts[5]);
        if (parts[6]) r.claims = JSON.parse(parts[6]);
        return r;
    }

    /** The rows in time order (a stable order: requests of one instant keep the log's order). */
    order(): Uint32Array {
        const idx = new Uint32Array(this.size);
        for (let i = 0; i < this.size; i++) idx[i] = i;
        if (!this.outOfOrder) return idx;
        const t = this.time;
        return idx.sort((a, b) => t[a]! - t[b]! || a - b);
    }
}

/** How many bad lines are kept with their number, reason and text (all are counted). */
export const BAD_LINES_KEPT = 100;

/** A log read: its requests, its bad lines (the first BAD_LINES_KEPT, and how many in all), its blank lines. */
export interface ReadLog {
    table: LogTable;
    bad: BadLine[];
    badCount: number;
    blank: number;
    lines: number;
}

/** An empty ReadLog and the sink that fills it from lines (read by `format`, else by the formats parseLogLine knows). */
export function logReader(format?: FormatReader, keep?: (name: string) => boolean): { log: ReadLog; sink: LineSink } {
    const log: ReadLog = { table: new LogTable(keep), bad: [], badCount: 0, blank: 0, lines: 0 };
    const bad = (b: BadLine) => {
        log.badCount++;
        if (log.bad.length < BAD_LINES_KEPT) log.bad.push(b);
    };
    const sink: LineSink = {
        line(text, n) {
            log.lines = n;
            const r = format ? (text.trim() ? format(text, n) : undefined) : parseLogLine(text, n);
            if (r === undefined) log.blank++;
            else if (isBadLine(r)) bad(r);
            else log.table.add(r);
        },
        bad(n, reason, head) {
            log.lines = n;
            bad({ line: n, reason, text: head });
        },
    };
    return { log, sink };
}
