import * as net from "net";

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on("error", reject);
        srv.listen(0, "127.0.0.1", () => {
            const port = (srv.address() as net.AddressInfo).port;
            srv.close(() => resolve(port));
        });
    });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const s = net.createConnection({ host: "127.0.0.1", port });
        s.once("connect", () => {
            s.destroy();
            resolve(true);
        });
        s.once("error", () => resolve(false));
    });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000, everyMs = 50): Promise<number> {
    const t0 = Date.now();
    for (;;) {
        if (await check()) return Date.now() - t0;
        if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(everyMs);
    }
}
