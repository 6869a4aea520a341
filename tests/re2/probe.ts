/**
 * The C++ RE2 library Envoy uses, through a small probe program built from tests/re2/full-match.cc
 * (g++ and libre2-dev): full matches on raw bytes, which no JavaScript RE2 binding takes (the unit
 * tier's valid-UTF-8 tests and the rls tier's raw-byte :path case).
 */
import { spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const SOURCE = path.join(__dirname, "full-match.cc");

/** Builds the probe once per source version into the temporary directory. */
export function probe(): string {
    const text = fs.readFileSync(SOURCE);
    const dir = path.join(os.tmpdir(), `mesh-ratelimit-re2-${crypto.createHash("sha256").update(text).digest("hex").slice(0, 12)}`);
    const bin = path.join(dir, "full-match");
    if (fs.existsSync(bin)) return bin;
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${bin}.${process.pid}`;
    const r = spawnSync("g++", ["-O1", "-std=c++17", SOURCE, "-o", tmp, "-lre2"], { encoding: "utf8" });
    if (r.error || r.status !== 0)
        throw new Error(
            `cannot build the RE2 probe (${r.error?.message ?? r.stderr.trim()}): install g++ and libre2-dev (bash scripts/tools/install-debian.sh)`,
        );
    fs.renameSync(tmp, bin);
    return bin;
}

/** C++ RE2's program size of each expression (-1: does not compile). */
export function re2ProgramSizes(bin: string, regexes: string[]): number[] {
    const r = spawnSync(bin, ["--program-size"], { input: regexes.join("\n") + "\n", encoding: "utf8" });
    if (r.status !== 0) throw new Error(`RE2 probe failed: ${r.stderr}`);
    return r.stdout.trim().split("\n").map(Number);
}

/** C++ RE2's full match of `regex` on each input. */
export function re2FullMatch(bin: string, regex: string, inputs: Buffer[]): boolean[] {
    const r = spawnSync(bin, [regex], { input: inputs.map((b) => b.toString("hex")).join("\n") + "\n", encoding: "utf8" });
    if (r.status !== 0) throw new Error(`RE2 probe failed: ${r.stderr}`);
    return r.stdout
        .trim()
        .split("\n")
        .map((l) => l === "1");
}
