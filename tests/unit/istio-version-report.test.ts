/**
 * What scripts/istio-versions.sh reads from each Istio version's run of the istio tier
 * (scripts/lib/istio-version-report.sh): the ambient section (TestAmbient with
 * PILOT_ENABLE_AMBIENT=true) counted per version, and a version whose run lacks it, ran only part of
 * it, or failed a check of it, reported and failing the command. The lines are the tier's own
 * (tests/istio/run.sh prints them with the label `ambient generator` and asks for the same count).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const ROOT = path.join(__dirname, "..", "..");
const REPORT = path.join(ROOT, "scripts", "lib", "istio-version-report.sh");
const ISTIO_RUN = path.join(ROOT, "tests", "istio", "run.sh");
const VERSIONS = path.join(ROOT, "scripts", "istio-versions.sh");

/** ambient_result on a log with these lines: its exit status and what it prints. */
function ambientResult(lines: string[]): { status: number; out: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-istio-report-"));
    try {
        const log = path.join(dir, "run.log");
        fs.writeFileSync(log, lines.join("\n") + "\n");
        const r = spawnSync("bash", ["-c", `source "${REPORT}"; ambient_result "$1"`, "_", log], { encoding: "utf8" });
        return { status: r.status ?? 1, out: r.stdout.trim() };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** The section's own count (ambient_min_checks reads it from tests/istio/run.sh). */
function minChecks(): number {
    const r = spawnSync("bash", ["-c", `source "${REPORT}"; ambient_min_checks`], { encoding: "utf8" });
    expect(r.status, r.stderr).to.equal(0);
    return Number(r.stdout.trim());
}
const MIN = minChecks();
// As tests/istio/run.sh prints them: four checks per variant, then the waypoint findings.
const CHECKS = ["ingress-filters", "ingress-config", "waypoint-untouched", "control-other-gateway"];
const names = [...["A", "B"].flatMap((v) => CHECKS.map((c) => `${v}/${c}`))];
while (names.length < MIN) names.push(`waypoint-bucket-case-${names.length - 7}`);
const whole = [
    "ok   istioctl validate filter-ratelimit.yaml",
    ...names.map((n) => `ok   ambient generator TestAmbient/${n}: a finding`),
    "765 passed, 0 failed",
];

describe("istio-versions: the ambient section reported per Istio version", () => {
    it("a run with the whole ambient section: its count, exit 0", () => {
        expect(MIN).to.be.at.least(8);
        expect(ambientResult(whole)).to.deep.equal({ status: 0, out: `${MIN} passed, 0 failed` });
    });

    it("control: a run without the ambient section is reported as not run and fails", () => {
        const r = ambientResult(whole.filter((l) => !l.includes("ambient generator")));
        expect(r.status).to.not.equal(0);
        expect(r.out).to.match(/^did not run \(no 'ambient generator' line in .*run\.log/);
    });

    it("control: a run with part of the section, or one failed check, fails", () => {
        const part = ambientResult(whole.filter((l) => !l.includes("TestAmbient/B/")));
        expect(part).to.deep.equal({ status: 1, out: `${MIN - 4} passed, 0 failed, but fewer than the ${MIN} checks the section has` });
        const failed = ambientResult([
            ...whole.filter((l) => !l.includes("A/ingress-config")),
            "FAIL ambient generator TestAmbient/A/ingress-config: no filter",
        ]);
        expect(failed).to.deep.equal({ status: 1, out: `${MIN - 1} passed, 1 failed` });
    });

    it("the lines and the count are the tier's own, and istio-versions.sh runs the section on every version", () => {
        const run = fs.readFileSync(ISTIO_RUN, "utf8");
        expect(run).to.match(/PILOT_ENABLE_AMBIENT=true [^\n]*-test\.run '\^TestAmbient\$'/);
        expect(run).to.contain(`report_subtests "ambient generator" "$alog" 'TestAmbient'`);
        const min = /TestAmbient\/' "\$alog"\) < (\d+)/.exec(run);
        expect(min, "the tier's own minimum count of ambient checks").to.not.equal(null);
        const r = spawnSync("bash", ["-c", `source "${REPORT}"; ambient_min_checks`], { encoding: "utf8" });
        expect(r.stdout.trim(), r.stderr).to.equal(min![1]);
        const versions = fs.readFileSync(VERSIONS, "utf8");
        expect(versions).to.contain('ISTIO_CHECK_AMBIENT=1 ISTIO_CHECK_XDSCHECK_BIN="$bin" bash "$root/tests/istio/run.sh"');
        expect(versions).to.match(/ambient="\$\(ambient_result "\$log"\)" \|\| rc=1/);
    });
});
