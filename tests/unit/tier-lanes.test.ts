/**
 * The second lane of scripts/test-all.sh (scripts/lib/tier-lanes.sh): the tiers named beside run at
 * the same time as the others, their output comes after the others' and whole, and their counts and
 * summary lines reach the final tally (a failure in the second lane fails the run). The tiers here
 * are stand-ins: a fake `run_named_tier` that sleeps, prints and passes or fails as told.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const ROOT = path.join(__dirname, "..", "..");
const LIB = path.join(ROOT, "scripts", "lib");
/** What every script below starts with: the caller's counters and the two sourced libraries. */
const PREAMBLE = `passed=0 failed=0 skipped=0 summary=()
source "${LIB}/tier-tools.sh"; source "${LIB}/tier-lanes.sh"`;

/** Runs run_lanes over fake tiers; `fail` names the tiers that fail. Prints the tally last. */
function lanes(tiers: string, beside: string, fail: string[] = [], sleep = 0.3): { out: string } {
    const script = `
set -uo pipefail
${PREAMBLE}
fails=" ${fail.join(" ")} "
run_named_tier() {
  echo "start $1"; sleep ${sleep}; echo "end $1"
  if [[ $fails == *" $1 "* ]]; then failed=$((failed + 1)); summary+=("$1: FAILED"); else passed=$((passed + 1)); summary+=("$1: ok"); fi
}
run_lanes "${tiers}" "${beside}"
echo "TALLY passed=$passed failed=$failed skipped=$skipped"
printf 'SUMMARY %s\\n' "\${summary[@]}"
`;
    const env = { ...process.env, MESH_RL_BUILD_STATUS: "", MESH_RL_BUILD_PID: "" };
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8", env, timeout: 30_000 });
    expect(r.status, r.stderr).to.equal(0);
    return { out: r.stdout };
}

const lines = (out: string) => out.trim().split("\n");

describe("scripts/lib/tier-lanes.sh: tiers in a second lane", function () {
    this.timeout(60_000);

    it("the tier beside starts before the others end, and its output follows theirs, whole", () => {
        const { out } = lanes("a b c", "b");
        const l = lines(out);
        // b's own lines come after every line of a and c, together and in order
        const at = (s: string) => l.indexOf(s);
        expect(at("start b")).to.be.greaterThan(at("end c"));
        expect(at("end b")).to.equal(at("start b") + 1);
        expect(out).to.contain("=== tiers beside the others: b");
        expect(out).to.contain("TALLY passed=3 failed=0 skipped=0");
        expect(l.filter((x) => x.startsWith("SUMMARY "))).to.have.members(["SUMMARY a: ok", "SUMMARY b: ok", "SUMMARY c: ok"]);
    });

    it("runs at the same time: a tier that needs the one beside to have started passes (control: in turn it fails)", () => {
        // tier b leaves a mark when it starts; tier c, run before b in the list, waits up to 10 s for it
        const mark = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lanes-")), "b-started");
        const script = `
set -uo pipefail
${PREAMBLE}
run_named_tier() {
  [[ $1 == b ]] && { touch "${mark}"; sleep 1; }
  if [[ $1 == c ]]; then for i in $(seq 100); do [[ -f "${mark}" ]] && break; sleep 0.1; done; fi
  if [[ $1 == c && ! -f "${mark}" ]]; then failed=$((failed + 1)); else passed=$((passed + 1)); fi
}
run_lanes "a c b" "$BESIDE"; rm -f "${mark}"
echo "TALLY passed=$passed failed=$failed"`;
        const run = (beside: string) =>
            spawnSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, MESH_RL_BUILD_STATUS: "", BESIDE: beside }, timeout: 30_000 }).stdout;
        expect(run("b")).to.contain("TALLY passed=3 failed=0");
        expect(run("")).to.contain("TALLY passed=2 failed=1");
    });

    it("a failure in the second lane reaches the tally (control: the same run without the failure)", () => {
        const bad = lanes("a b", "b", ["b"]).out;
        expect(bad).to.contain("TALLY passed=1 failed=1 skipped=0");
        expect(bad).to.contain("SUMMARY b: FAILED");
        expect(lanes("a b", "b").out).to.contain("TALLY passed=2 failed=0 skipped=0");
    });

    it("no lane when nothing is beside, or when every tier is: every tier in turn, in the given order", () => {
        for (const beside of ["", "a b"]) {
            const { out } = lanes("a b", beside);
            expect(out, beside).not.to.contain("tiers beside");
            const l = lines(out);
            expect(l.slice(0, 4), beside).to.deep.equal(["start a", "end a", "start b", "end b"]);
        }
    });

    it("MESH_RL_MAIN_NICE lowers the main lane only; the second lane keeps the caller's niceness (control: without it)", () => {
        const script = `
${PREAMBLE}
run_named_tier() { echo "NICE $1 $(nice)"; }
run_lanes "a b" "b"`;
        const run = (env: Record<string, string>) =>
            spawnSync("nice", ["-n", "0", "bash", "-c", script], {
                encoding: "utf8",
                env: { ...process.env, MESH_RL_BUILD_STATUS: "", ...env },
                timeout: 30_000,
            }).stdout;
        const base = Number(/NICE b (\d+)/.exec(run({}))![1]);
        const lowered = run({ MESH_RL_MAIN_NICE: String(Math.min(base + 7, 19)) });
        expect(lowered).to.contain(`NICE a ${Math.min(base + 7, 19)}`);
        expect(lowered).to.contain(`NICE b ${base}`);
        expect(run({})).to.contain(`NICE a ${base}`);
    });

    it("a lane that ends without its results counts as one failure", () => {
        // run_named_tier kills its own lane (a subshell) for tier b only: no state file is written
        const script = `
set -uo pipefail
${PREAMBLE}
run_named_tier() { if [[ $1 == b ]]; then kill -9 $BASHPID; fi; passed=$((passed + 1)); summary+=("$1: ok"); }
run_lanes "a b" "b"
echo "TALLY passed=$passed failed=$failed"; printf 'SUMMARY %s\\n' "\${summary[@]}"`;
        const r = spawnSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, MESH_RL_BUILD_STATUS: "" }, timeout: 30_000 });
        expect(r.stdout).to.contain("TALLY passed=1 failed=1");
        expect(r.stdout).to.contain("SUMMARY b: FAILED, the lane ended without its results");
    });
});
