/**
 * A minimal Redis (RESP2) client over one TCP connection, enough for the tests (AUTH, FLUSHALL,
 * KEYS, PING) and for the benchmark's raw INCRBY+EXPIRE round trips. Replies are matched to
 * commands in order (Redis answers in order on one connection).
 */
import * as net from "net";

export type Reply = string | number | null | Error | Reply[];

export class RespClient {
    private sock!: net.Socket;
    private buf: Buffer = Buffer.alloc(0);
    private waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
    private closedError?: Error;

    static async connect(port: number, password?: string, host = "127.0.0.1"): Promise<RespClient> {
        const c = new RespClient();
        await new Promise<void>((resolve, reject) => {
            c.sock = net.createConnection({ host, port }, () => resolve());
            c.sock.setNoDelay(true);
            c.sock.once("error", reject);
        });
        c.sock.on("data", (d) => c.onData(d));
        const fail = (e: Error) => {
            c.closedError = e;
            for (const w of c.waiting.splice(0)) w.reject(e);
        };
        c.sock.on("error", fail);
        c.sock.on("close", () => fail(new Error("connection closed")));
        if (password !== undefined) {
            const r = await c.command("AUTH", password);
            if (r instanceof Error) throw r;
        }
        return c;
    }

    /** Sends one command; resolves with its reply (a Redis error reply resolves as an Error). */
    command(...args: (string | number)[]): Promise<Reply> {
        return this.pipeline([args]).then((r) => r[0]);
    }

    /** Sends several commands in one write; resolves with all replies. */
    pipeline(cmds: (string | number)[][]): Promise<Reply[]> {
        if (this.closedError) return Promise.reject(this.closedError);
        const parts: string[] = [];
        const promises = cmds.map((args) => {
            parts.push(`*${args.length}\r\n`);
            for (const a of args) {
                const s = String(a);
                parts.push(`$${Buffer.byteLength(s)}\r\n${s}\r\n`);
            }
            return new Promise<Reply>((resolve, reject) => this.waiting.push({ resolve, reject }));
        });
        this.sock.write(parts.join(""));
        return Promise.all(promises);
    }

    close(): void {
        this.sock.destroy();
    }

    private onData(d: Buffer): void {
        this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
        for (;;) {
            const parsed = parse(this.buf, 0);
            if (!parsed) return;
            this.buf = this.buf.subarray(parsed.next);
            const w = this.waiting.shift();
            if (w) w.resolve(parsed.value);
        }
    }
}

function parse(b: Buffer, i: number): { value: Reply; next: number } | undefined {
    if (i >= b.length) return undefined;
    const eol = b.indexOf("\r\n", i);
    if (eol < 0) return undefined;
    const line = b.toString("utf8", i + 1, eol);
    const type = String.fromCharCode(b[i]);
    switch (type) {
        case "+":
            return { value: line, next: eol + 2 };
        case "-":
            return { value: new Error(line), next: eol + 2 };
        case ":":
            return { value: Number(line), next: eol + 2 };
        case "$": {
            const n = Number(line);
            if (n < 0) return { value: null, next: eol + 2 };
            if (b.length < eol + 2 + n + 2) return undefined;
            return { value: b.toString("utf8", eol + 2, eol + 2 + n), next: eol + 2 + n + 2 };
        }
        case "*": {
            const n = Number(line);
            if (n < 0) return { value: null, next: eol + 2 };
            const arr: Reply[] = [];
            let next = eol + 2;
            for (let k = 0; k < n; k++) {
                const p = parse(b, next);
                if (!p) return undefined;
                arr.push(p.value);
                next = p.next;
            }
            return { value: arr, next };
        }
        default:
            throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
    }
}
