/**
 * Reading an access log's bytes as lines, in bounded memory: the file is read in chunks, a line
 * longer than MAX_LINE_BYTES is skipped to its end (never held whole) and reported, and a line
 * holding a NUL byte is reported, never read as a request. The checks that the log is a readable
 * file come first, each with a clear message.
 */
import * as fs from "fs";

/** The longest line read, in bytes (without its newline): an access log line of Envoy is far shorter. */
export const MAX_LINE_BYTES = 65_536;

/** How much of a bad line is kept to show it. */
const HEAD_BYTES = 200;

/** The access log cannot be read (missing, a folder, unreadable, or no request in it): exit status 4. */
export class LogInputError extends Error {}

/** What the splitter hands on: a line's text, or a line it will not read and why. */
export interface LineSink {
    /** Returns true to stop reading (no line after it is handed on). */
    line(text: string, n: number): boolean | void;
    bad(n: number, reason: string, head: string): void;
}

/** Splits chunks of bytes into lines (`\n`, a `\r` before it dropped), holding at most MAX_LINE_BYTES of one line. */
export class LineSplitter {
    private parts: Buffer[] = [];
    private bytes = 0;
    private overlong = false;
    private head = "";
    private n = 0;
    /** A sink asked to stop. */
    stopped = false;

    constructor(private readonly sink: LineSink) {}

    /** Reads one chunk; the chunk may be written over afterwards (a line's start is copied out of it). */
    push(chunk: Buffer): void {
        let start = 0;
        while (!this.stopped) {
            const nl = chunk.indexOf(10, start);
            this.take(chunk, start, nl < 0 ? chunk.length : nl);
            if (nl < 0) {
                if (this.parts.length) this.parts = [Buffer.from(Buffer.concat(this.parts))];
                return;
            }
            this.endLine();
            start = nl + 1;
        }
    }

    /** Ends the input: a last line without a newline is read too. */
    end(): void {
        if (this.bytes > 0 && !this.stopped) this.endLine();
    }

    private take(chunk: Buffer, s: number, e: number): void {
        if (e <= s) return;
        if (!this.overlong && this.bytes + (e - s) > MAX_LINE_BYTES) {
            this.overlong = true;
            this.head = Buffer.concat([...this.parts, chunk.subarray(s, s + HEAD_BYTES)])
                .subarray(0, HEAD_BYTES)
                .toString("utf8");
            this.parts = [];
        }
        if (!this.overlong) this.parts.push(chunk.subarray(s, e));
        this.bytes += e - s;
    }

    private endLine(): void {
        const n = ++this.n;
        if (this.overlong) {
            this.sink.bad(
                n,
                `the line is ${this.bytes.toLocaleString("en")} bytes long, over the bound of ${MAX_LINE_BYTES.toLocaleString("en")} bytes a line`,
                this.head,
            );
        } else {
            let buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
            if (buf.length && buf[buf.length - 1] === 13) buf = buf.subarray(0, buf.length - 1);
            const nul = buf.indexOf(0);
            if (nul >= 0)
                this.sink.bad(
                    n,
                    `the line holds a NUL byte (at byte ${nul + 1}): a binary file or a damaged log (a log compressed other than with gzip, which is read as it is, must be decompressed first: zstd -dc, xz -dc, bzip2 -dc)`,
                    headOf(buf).replace(/\0/g, "\\0"),
                );
            else if (this.sink.line(buf.toString("utf8"), n) === true) this.stopped = true;
        }
        this.parts = [];
        this.bytes = 0;
        this.overlong = false;
        this.head = "";
    }
}

const headOf = (b: Buffer) => b.subarray(0, HEAD_BYTES).toString("utf8");

/** The lines of a text already in memory. */
export function splitText(text: string, sink: LineSink): void {
    const s = new LineSplitter(sink);
    s.push(Buffer.from(text, "utf8"));
    s.end();
}

/** Refuses a log path that is not a readable file, saying what to give instead. */
export function checkLogFile(file: string): void {
    let st: fs.Stats;
    try {
        st = fs.statSync(file);
    } catch {
        throw new LogInputError(`the access log ${file} does not exist: give the path of a log file (a relative path reads from ${process.cwd()})`);
    }
    if (st.isDirectory()) throw new LogInputError(`the access log ${file} is a folder: give the log file inside it, not the folder`);
    try {
        fs.accessSync(file, fs.constants.R_OK);
    } catch (e) {
        throw new LogInputError(`the access log ${file} cannot be read (${(e as NodeJS.ErrnoException).code}): check its permissions`);
    }
}

/** Reads the file's lines through one 1 MiB buffer, never holding the whole file. */
export function readLogFile(file: string, sink: LineSink): void {
    checkLogFile(file);
    let fd: number;
    try {
        fd = fs.openSync(file, "r");
    } catch (e) {
        throw new LogInputError(`the access log ${file} cannot be opened (${(e as NodeJS.ErrnoException).code}): check its permissions`);
    }
    const s = new LineSplitter(sink);
    const chunk = Buffer.allocUnsafe(1 << 20);
    try {
        while (!s.stopped) {
            const got = fs.readSync(fd, chunk, 0, chunk.length, null);
            if (got === 0) break;
            s.push(chunk.subarray(0, got));
        }
    } catch (e) {
        throw new LogInputError(`the access log ${file} could not be read to its end: ${(e as Error).message}`);
    } finally {
        fs.closeSync(fd);
    }
    s.end();
}
