/**
 * Output of the package's commands that reaches a pipe whole before the process ends: text goes to
 * the stream in order, and `finish` waits until every byte written has been handed to the kernel
 * before the process exits with its status. A reader that closes early (`| head`) is not an error:
 * the rest of the output is dropped, no stack trace is printed and the exit status stays the
 * command's own (the answer was computed; the reader chose to stop reading).
 */

type Stream = NodeJS.WriteStream;

const closed = new WeakSet<Stream>();
const guarded = new WeakSet<Stream>();

/** Writing failed for a reason other than a reader that went away (a full disk): exit status 1. */
let failed: Error | undefined;

/** Catches a stream's write errors: EPIPE closes it for good; anything else is remembered. */
function guard(stream: Stream): void {
    if (guarded.has(stream)) return;
    guarded.add(stream);
    stream.on("error", (e: NodeJS.ErrnoException) => {
        closed.add(stream);
        if (e.code !== "EPIPE") failed ??= e;
    });
}

/** Catches write errors on standard output and error, for a command that writes with console.log (see `guard`). */
export function guardPipes(): void {
    guard(process.stdout);
    guard(process.stderr);
}

/** Writes `text` to `stream` (standard output by default) unless its reader has gone. */
export function emit(text: string, stream: Stream = process.stdout): void {
    guard(stream);
    if (!closed.has(stream)) stream.write(text);
}

/** `emit` of one line (a newline added). */
export function emitLine(text: string, stream: Stream = process.stdout): void {
    emit(`${text}\n`, stream);
}

/** Resolves once everything written to `stream` so far has been flushed (or the stream failed). */
function drained(stream: Stream): Promise<void> {
    guard(stream);
    if (closed.has(stream) || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => stream.write("", () => resolve()));
}

/**
 * Ends the process with `code` once standard output and standard error are flushed. A write error
 * other than a closed reader turns a 0 into 1, with one line on standard error when it can be written.
 */
export async function finish(code: number): Promise<never> {
    await drained(process.stdout);
    let status = code;
    if (failed && status === 0) {
        status = 1;
        emitLine(`error: the output could not be written: ${failed.message}`, process.stderr);
    }
    await drained(process.stderr);
    process.exit(status);
}
