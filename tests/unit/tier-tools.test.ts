/**
 * The test runner beside a background build (scripts/lib/tier-tools.sh, used by scripts/test-all.sh
 * when `.ci/run` builds the Go tools while the tiers run): every tool a tier waits for is one that
 * scripts/tools/build-all.sh builds, the build order lets each tier start before the next tier's
 * tools are done, and the wait itself ends when the tools have a status, when the build process
 * ends, and at once for a tier without tools.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const ROOT = path.join(__dirname, "..", "..");
const TIER_TOOLS = path.join(ROOT, "scripts", "lib", "tier-tools.sh");
const BUILD_ALL = path.join(ROOT, "scripts", "tools", "build-all.sh");
const TEST_ALL = path.join(ROOT, "scripts", "test-all.sh");

/** The tier → tools table, read by bash itself from the sourced file. */
function tierTools(): Map<string, string[]> {
    const r = spawnSync("bash", ["-c", `source "${TIER_TOOLS}"; for k in "\${!tier_tools[@]}"; do echo "$k:\${tier_tools[$k]}"; done`], {
        encoding: "utf8",
    });
    expect(r.status, r.stderr).to.equal(0);
    return new Map(
        r.stdout
            .trim()
            .split("\n")
            .map((l) => {
                const [tier, tools] = l.split(":");
                return [tier, tools.split(/\s+/).filter(Boolean)] as [string, string[]];
            }),
    );
}

/** build-all.sh's default order (its `all=(...)` line). */
function buildOrder(): string[] {
    const m = /^all=\(([^)]*)\)/m.exec(fs.readFileSync(BUILD_ALL, "utf8"));
    expect(m, "build-all.sh has an all=(...) line").to.not.equal(null);
    return m![1].split(/\s+/).filter(Boolean);
}

/** test-all.sh's default tier order. */
function tierOrder(): string[] {
    const m = /^tiers=\$\{MESH_RL_TIERS:-"([^"]*)"\}/m.exec(fs.readFileSync(TEST_ALL, "utf8"));
    expect(m, "test-all.sh has a default tier list").to.not.equal(null);
    return m![1].split(/\s+/).filter(Boolean);
}

/** Runs await_tools for one tier in a fresh bash; returns its output and how long it took. */
function awaitTier(tier: string, env: Record<string, string>, before = ""): { out: string; ms: number } {
    const t0 = Date.now();
    const r = spawnSync("bash", ["-c", `${before}\nsource "${TIER_TOOLS}"; await_tools ${tier}; echo "waits=\${waits[*]}"`], {
        encoding: "utf8",
        // The runner's own MESH_RL_BUILD_* (set when .ci/run runs this tier beside a build) never leak in.
        env: { ...process.env, MESH_RL_BUILD_STATUS: "", MESH_RL_BUILD_PID: "", MESH_RL_BUILD_POLL: "0.2", ...env },
        timeout: 20_000,
    });
    expect(r.status, r.stderr).to.equal(0);
    return { out: r.stdout, ms: Date.now() - t0 };
}

describe("scripts/lib/tier-tools.sh: the tiers beside a background build", function () {
    this.timeout(20_000);
    it("every tool a tier waits for is built by build-all.sh, and every tier with tools is a tier of test-all.sh", () => {
        const order = buildOrder();
        const tiers = tierOrder();
        const table = tierTools();
        expect([...table.keys()].sort()).to.deep.equal(["cluster", "e2e", "istio", "rls"]);
        for (const [tier, tools] of table) {
            expect(tiers, `tier ${tier}`).to.include(tier);
            for (const t of tools) expect(order, `${tier} waits for ${t}`).to.include(t);
        }
    });

    it("the build order follows the tier order: each tier's last tool comes no later than the next tier's", () => {
        const order = buildOrder();
        const table = tierTools();
        const lastOf = (tier: string) => Math.max(...(table.get(tier) ?? []).map((t) => order.indexOf(t)));
        const withTools = tierOrder().filter((t) => table.has(t));
        for (let i = 1; i < withTools.length; i++) {
            expect(lastOf(withTools[i - 1]), `${withTools[i - 1]} before ${withTools[i]}`).to.be.at.most(lastOf(withTools[i]));
        }
        // Only the last tier waits for the last build.
        expect(lastOf(withTools[withTools.length - 1])).to.equal(order.length - 1);
    });

    it("waits until each of the tier's tools has a status, then names each tool's state", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tier-tools-"));
        try {
            fs.writeFileSync(path.join(dir, "debian"), "ok 3\n");
            const writer = `( sleep 1; echo "ok 5" > "${dir}/ratelimit"; sleep 1; echo "failed 9" > "${dir}/prometheus" ) &`;
            const { out, ms } = awaitTier("rls", { MESH_RL_BUILD_STATUS: dir }, writer);
            expect(ms).to.be.at.least(1900);
            // The seconds it prints are wall-clock and grow on a loaded machine (bash start-up, the
            // polls): that it waited is shown by the time above, not by the printed count.
            expect(out).to.match(/=== tier rls: waited [1-9][0-9]*s for its tools: debian=ok ratelimit=ok prometheus=failed/);
            expect(out).to.match(/waits=rls [1-9][0-9]*s/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("stops waiting when the build process ends without the tools, and when all-done is written", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tier-tools-"));
        try {
            const ended = awaitTier("istio", { MESH_RL_BUILD_STATUS: dir }, "sleep 1 & export MESH_RL_BUILD_PID=$!");
            expect(ended.out).to.include("=== tier istio: the background build ended without: istioctl kube-score");
            expect(ended.out).to.include("istioctl=none kube-score=none");
            expect(ended.ms).to.be.below(10_000);
            fs.writeFileSync(path.join(dir, "all-done"), "failed 10\n");
            const done = awaitTier("e2e", { MESH_RL_BUILD_STATUS: dir, MESH_RL_BUILD_POLL: "5" });
            // No poll: it returns well inside one 5 s poll interval. The printed count is whole seconds of
            // `date +%s`, which may tick once during even a short call, so 0 or 1 both mean "no wait".
            expect(done.ms).to.be.below(4_000);
            expect(done.out).to.match(/=== tier e2e: waited [01]s for its tools: debian=none etcd=none/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    it("does not wait for a tier without Go-built tools, nor without a status folder", () => {
        const unit = awaitTier("unit", { MESH_RL_BUILD_STATUS: "/nonexistent" });
        expect(unit.out.trim()).to.equal("waits=");
        const plain = awaitTier("e2e", { MESH_RL_BUILD_STATUS: "" });
        expect(plain.out.trim()).to.equal("waits=");
    });
});
