/**
 * Where replay's log comes from, as a CI job gives it: a file, `-` for standard input, either of
 * them gzip-compressed (known by its content, the two bytes gzip starts with, not by its name).
 * Standard input and a compressed log are first written, decompressed, to a file of their own in
 * the temporary folder (replay reads the log twice: its requests, then the refused lines' text),
 * removed when the replay is done. Memory stays bounded: everything is streamed.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { pipeline } from "stream/promises";
import { createGunzip } from "zlib";
import { checkLogFile, LogInputError } from "./log-input";

/** A log ready to read: the file to read, the name to show, and what to remove once done. */
export interface OpenedLog {
    file: string;
    /** How messages name it: the path given, or `standard input`. */
    label: string;
    /** Whether it was gzip-compressed. */
    gzip: boolean;
    /** Removes the temporary copy (none for a plain file). */
    close(): void;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** Whether a file starts with gzip's two bytes. */
function isGzip(file: string): boolean {
    const fd = fs.openSync(file, "r");
    try {
        const head = Buffer.alloc(2);
        const n = fs.readSync(fd, head, 0, 2, 0);
        return n === 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
    } finally {
        fs.closeSync(fd);
    }
}

/** Streams `from` (decompressed when `gunzip`) into a new temporary file. */
async function spool(from: NodeJS.ReadableStream, gunzip: boolean, label: string): Promise<{ file: string; close(): void }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-ratelimit-log-"));
    const file = path.join(dir, "access.log");
    const close = () => fs.rmSync(dir, { recursive: true, force: true });
    try {
        await (gunzip ? pipeline(from, createGunzip(), fs.createWriteStream(file)) : pipeline(from, fs.createWriteStream(file)));
    } catch (e) {
        close();
        throw new LogInputError(
            gunzip
                ? `the access log ${label} starts as a gzip file but does not decompress (${(e as Error).message}): is it cut short? Give the whole file, or the log decompressed`
                : `the access log ${label} could not be read to its end: ${(e as Error).message}`,
        );
    }
    return { file, close };
}

/** Peeks at standard input's first bytes: a readable that yields them again, and whether they are gzip's. */
async function peekStdin(): Promise<{ stream: NodeJS.ReadableStream; gzip: boolean }> {
    const { PassThrough } = await import("stream");
    const out = new PassThrough();
    const first: Buffer = await new Promise((resolve, reject) => {
        const onData = (b: Buffer) => {
            process.stdin.off("end", onEnd);
            process.stdin.pause();
            process.stdin.off("data", onData);
            resolve(b);
        };
        const onEnd = () => resolve(Buffer.alloc(0));
        process.stdin.on("data", onData);
        process.stdin.once("end", onEnd);
        process.stdin.once("error", reject);
    });
    out.write(first);
    if (first.length) process.stdin.pipe(out);
    else out.end();
    return { stream: out, gzip: first.length >= 2 && first[0] === GZIP_MAGIC[0] && first[1] === GZIP_MAGIC[1] };
}

/** Opens the log `given` (`-`: standard input), decompressing it when its content is gzip. */
export async function openLog(given: string): Promise<OpenedLog> {
    if (given === "-") {
        if (process.stdin.isTTY)
            throw new LogInputError("the access log is - (standard input), but standard input is a terminal: pipe the log in (zcat log.gz | ... replay -)");
        const { stream, gzip } = await peekStdin();
        const s = await spool(stream, gzip, "standard input");
        return { ...s, label: "standard input", gzip };
    }
    checkLogFile(given);
    if (!isGzip(given)) return { file: given, label: given, gzip: false, close: () => undefined };
    const s = await spool(fs.createReadStream(given), true, given);
    return { ...s, label: given, gzip: true };
}
