/**
 * `mesh-ratelimit explain` on a platform and its teams (docs/using-the-package.md): the one
 * ownership rule (builders/host-ownership-rule.ts) on the program's own objects. A team's
 * `allVirtualHosts: true` does not turn the platform's defaults off on another team's host
 * (examples/platform-teams); a team that lists a host not assigned to its namespace is refused, as
 * its preview against a cluster and the API server's admission policy refuse it; two teams each on
 * their assigned host run, and the platform's refusals tell the client its limits.
 *
 * The expected figures come from the fixtures' own arguments (2 a minute per client for the
 * defaults, 3 for the overrides), not from the code under test.
 */
import * as path from "path";
import { expect } from "chai";
import { explainProgram, ExplainRequest } from "../../prove/api";
import { formatExplanation } from "../../prove/format";

const EXAMPLE = path.join(__dirname, "..", "..", "examples", "platform-teams");
const LISTED = path.join(__dirname, "fixtures", "platform-teams-listed");
const UNASSIGNED = path.join(__dirname, "fixtures", "platform-unassigned");
const TWO = path.join(__dirname, "fixtures", "platform-two-teams");
const NOW = Date.UTC(2026, 10, 28, 18, 0, 10);
const on = (host: string, clientAddress = "203.0.113.7"): ExplainRequest => ({ host, path: "/", method: "GET", clientAddress });
const req = on("b.example.com");

describe("prove: a team's allVirtualHosts does not switch the platform's defaults off on another team's host", function () {
    this.timeout(120_000);

    it("three requests to b.example.com: the third refused by the platform default (2 a minute per client)", async () => {
        const x = await explainProgram(EXAMPLE, [req, req, req], { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, false]);
        expect(x.decisions[2]!.refusedBy).to.deep.include({ rule: "platform default per-client", source: "platform default" });
    });

    it("team a listing b.example.com, assigned to team b: explain refuses the program, naming the rule, the owner and the fix", async () => {
        let err: Error | undefined;
        await explainProgram(LISTED, [req], { nowMs: NOW }).catch((e: Error) => (err = e));
        expect(err?.message).to.include("the cluster would refuse this program").and.include("defaults-switch-host");
        expect(err?.message).to.include("assigns b.example.com to namespace team-b, not to team-a").and.include('platformDefaults: "merge"');
    });

    it("the issue's case: b.example.com assigned to no one, bound by no route of team a's: refused as well", async () => {
        let err: Error | undefined;
        await explainProgram(UNASSIGNED, [req], { nowMs: NOW }).catch((e: Error) => (err = e));
        expect(err?.message).to.include("b.example.com:8080").and.include("assigns b.example.com to no one");
    });
});

describe("prove: a platform and two teams, each switching the defaults off on its assigned host", function () {
    this.timeout(120_000);

    it("control: the program runs; on each team's host the defaults are off (3 from one client pass the default's 2), elsewhere they refuse the 3rd", async () => {
        const reqs = [
            on("c.example.com"),
            on("c.example.com"),
            on("c.example.com"),
            on("d.example.com", "203.0.113.8"),
            on("d.example.com", "203.0.113.8"),
            on("d.example.com", "203.0.113.8"),
        ];
        const x = await explainProgram(TWO, reqs, { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, true, true, true, true]);
        const text = formatExplanation(x);
        expect(text)
            .to.include("the platform default limits are off on c.example.com:8080")
            .and.include("the platform default limits are off on d.example.com:8080");
        const other = await explainProgram(TWO, [on("e.example.com"), on("e.example.com"), on("e.example.com")], { nowMs: NOW });
        expect(other.decisions.map((d) => d.allowed)).to.deep.equal([true, true, false]);
    });

    it("the platform's refusals carry X-RateLimit-* and the source's RateLimit-Policy, as a team's do", async () => {
        const x = await explainProgram(TWO, [on("e.example.com"), on("e.example.com"), on("e.example.com")], { nowMs: NOW });
        const refused = x.decisions[2]!;
        expect(refused.refusedBy).to.deep.include({ source: "platform default" });
        const h = refused.response.headers;
        expect(h["ratelimit-policy"]).to.equal('"per-client";q=2;w=60');
        expect(h["x-ratelimit-limit"]).to.match(/^2, 2;w=60/);
        expect(h["x-ratelimit-remaining"]).to.equal("0");
        // The override's ceiling (3 a minute) refuses the 4th on a team's host, with its own policy.
        const y = await explainProgram(
            TWO,
            [1, 2, 3, 4].map(() => on("c.example.com")),
            { nowMs: NOW },
        );
        expect(y.decisions[3]!.refusedBy).to.deep.include({ source: "platform override" });
        expect(y.decisions[3]!.response.headers["ratelimit-policy"]).to.equal('"per-client-ceiling";q=3;w=60');
    });
});
