/**
 * Writes a log in the format of a program's own access log (GlobalRateLimit `accessLog`), for the
 * replay figures of docs/proof/benchmarks.md: the format rendered from the program, each operator
 * replaced by a value (GET /api/orders every 3 ms, 500 keys, 200 clients), others null.
 *
 *   npx tsx scripts/write-program-format-log.ts <program dir> <lines> <out file>
 */
import * as fs from "fs";
import { programLogFormat } from "../prove/api";
import { renderProgram } from "../prove/program-runner";

async function main(dir: string, n: number, file: string): Promise<void> {
    const format = programLogFormat((await renderProgram(dir)).objects);
    if (format === undefined) throw new Error(`${dir} sets no access log format`);
    const ops: Record<string, string> = JSON.parse(format);
    const fd = fs.openSync(file, "w");
    const start = Date.UTC(2026, 10, 28, 11, 0, 0);
    for (let i = 0; i < n; i++) {
        const value: Record<string, string> = {
            "%START_TIME%": new Date(start + 3 * (i + 1)).toISOString(),
            "%REQ(:METHOD)%": "GET",
            "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%": "/api/orders",
            "%REQ(:AUTHORITY)%": "api.example.com",
            "%DOWNSTREAM_REMOTE_ADDRESS%": `198.51.100.${i % 200}:5000`,
            "%REQ(X-API-KEY)%": `key-${i % 500}`,
        };
        fs.writeSync(fd, JSON.stringify(Object.fromEntries(Object.entries(ops).map(([k, op]) => [k, value[op] ?? null]))) + "\n");
    }
    fs.closeSync(fd);
}

void main(process.argv[2]!, Number(process.argv[3]), process.argv[4]!);
