/**
 * Bad lines never stop a replay and are never counted as requests: a line over the stated bound
 * (a 4 MB path), NUL bytes in a path, a line in no known format, each reported with its number and
 * reason; the reports kept are bounded and every bad line is counted. The lines are split the same
 * whatever the size of the chunks the file arrives in. The requests counted are checked against the
 * generator's own list (the oracle), not against the reader.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { replayLog, replayLogFile } from "../../prove/api";
import { LineSplitter, MAX_LINE_BYTES } from "../../prove/log-input";
import { BAD_LINES_KEPT } from "../../prove/log-table";
import { expectedLoginRefusals, istioText, loginLog } from "./prove-login-log";

const PROGRAM = path.join(__dirname, "..", "..", "examples", "login-limit");

/** The lines a splitter hands on, chunked by `size` bytes. */
function split(bytes: Buffer, size: number): { lines: [number, string][]; bad: [number, string][] } {
    const out = { lines: [] as [number, string][], bad: [] as [number, string][] };
    const s = new LineSplitter({ line: (t, n) => void out.lines.push([n, t]), bad: (n, reason) => void out.bad.push([n, reason]) });
    for (let i = 0; i < bytes.length; i += size) s.push(Buffer.from(bytes.subarray(i, i + size)));
    s.end();
    return out;
}

describe("prove/log-input: bad lines never stop a run and are never requests", function () {
    this.timeout(120_000);

    it("lines are the same whatever the chunks (1 byte to whole), CRLF and a last line without newline included", () => {
        const text = Buffer.from("a\r\nbé\n\nlast", "utf8");
        const whole = split(text, text.length);
        expect(whole.lines).to.deep.equal([
            [1, "a"],
            [2, "bé"],
            [3, ""],
            [4, "last"],
        ]);
        for (const size of [1, 2, 3, 5]) expect(split(text, size)).to.deep.equal(whole);
    });

    it(`a line over ${MAX_LINE_BYTES} bytes is a bad line naming its length and the bound, read in any chunking; one at the bound is read`, () => {
        const at = "x".repeat(MAX_LINE_BYTES);
        const over = "y".repeat(MAX_LINE_BYTES + 1);
        for (const size of [1000, 1 << 20]) {
            const r = split(Buffer.from(`${at}\n${over}\nok\n`), size);
            expect(r.lines.map(([n, t]) => [n, t.length])).to.deep.equal([
                [1, MAX_LINE_BYTES],
                [3, 2],
            ]);
            expect(r.bad).to.deep.equal([[2, `the line is 65,537 bytes long, over the bound of 65,536 bytes a line`]]);
        }
    });

    it("a 4 MB path, NUL bytes in a path and an unknown format: reported by line, the run goes on, the other requests counted as the oracle says", async () => {
        const log = loginLog(300, { seed: 11 });
        const lines = log.text.trimEnd().split("\n");
        const t = log.lines[0]!;
        const huge = istioText({ ...t, path: `/login/${"a".repeat(4 << 20)}` });
        const nul = istioText({ ...t, path: "/login\0\0" });
        const all = [...lines.slice(0, 100), huge, ...lines.slice(100, 200), nul, "GET /login from nowhere", ...lines.slice(200)];
        const r = await replayLog(PROGRAM, all.join("\n") + "\n");
        const oracle = expectedLoginRefusals(log.lines);
        expect(r.requests).to.equal(300);
        expect(r.badCount).to.equal(3);
        expect(r.bad.map((b) => [b.line, b.reason.replace(/\d[\d,]* bytes long/, "N bytes long")])).to.deep.equal([
            [101, "the line is N bytes long, over the bound of 65,536 bytes a line"],
            [
                202,
                `the line holds a NUL byte (at byte ${Buffer.from(nul).indexOf(0) + 1}): a binary file or a damaged log (a log compressed other than with gzip, which is read as it is, must be decompressed first: zstd -dc, xz -dc, bzip2 -dc)`,
            ],
            [203, "neither a text access log line (starting '[<start time>]') nor a JSON one (starting '{')"],
        ]);
        expect(r.bad[0]!.text.length).to.be.at.most(200);
        const login = r.rules.find((x) => x.rule === "login")!;
        expect([login.requests, login.refused]).to.deep.equal([oracle.requests, oracle.refused]);
        // Control: the NUL line's path without its NUL bytes is a request of the rule, so it was kept out only for them.
        const clean = await replayLog(PROGRAM, [...lines, istioText({ ...t, method: "POST", path: "/login" })].join("\n"));
        expect(clean.requests).to.equal(301);
    });

    it(`bad lines: the first ${BAD_LINES_KEPT} kept with their reasons, every one counted, none replayed`, async () => {
        const good = loginLog(50, { seed: 2 });
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bad-lines-")), "access.log");
        fs.writeFileSync(file, good.text + "not a line\n".repeat(5000));
        const r = await replayLogFile(PROGRAM, file);
        expect(r.requests).to.equal(50);
        expect(r.badCount).to.equal(5000);
        expect(r.bad).to.have.length(BAD_LINES_KEPT);
        expect(r.bad[0]!.line).to.equal(51);
        expect(r.lines).to.equal(5050);
        fs.rmSync(path.dirname(file), { recursive: true, force: true });
    });
});
