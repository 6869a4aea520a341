/**
 * `mesh-ratelimit explain` on examples/platform-teams (docs/using-the-package.md): a team with
 * `allVirtualHosts: true` and a rule that matches nothing no longer turns the platform's defaults
 * (2 a minute per client) off on another team's host. The negative control names that host in the
 * team's `virtualHosts`: the model (which reads no cluster) then shows the defaults off there, which
 * is the switch GlobalRateLimit's preview refuses for a host its namespace does not own.
 */
import * as path from "path";
import { expect } from "chai";
import { explainProgram, ExplainRequest } from "../../prove/api";
import { formatExplanation } from "../../prove/format";

const EXAMPLE = path.join(__dirname, "..", "..", "examples", "platform-teams");
const LISTED = path.join(__dirname, "fixtures", "platform-teams-listed");
const NOW = Date.UTC(2026, 10, 28, 18, 0, 10);
const req: ExplainRequest = { host: "b.example.com", path: "/", method: "GET", clientAddress: "203.0.113.7" };

describe("prove: a team's allVirtualHosts does not switch the platform's defaults off on another team's host", function () {
    this.timeout(120_000);

    it("three requests to b.example.com: the third refused by the platform default (2 a minute per client)", async () => {
        const x = await explainProgram(EXAMPLE, [req, req, req], { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, false]);
        expect(x.decisions[2]!.refusedBy).to.deep.include({ rule: "platform default per-client", source: "platform default" });
    });

    it("negative control: the host listed in a team's virtualHosts (refused at preview with a cluster) switches them off: all three pass", async () => {
        const x = await explainProgram(LISTED, [req, req, req], { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, true]);
        // The platform is in the program (its overrides still apply): only the defaults are off.
        const text = formatExplanation(x);
        expect(text).to.include("the platform override limits apply on b.example.com:8080");
        expect(text).to.include("the platform default limits are off on b.example.com:8080");
    });
});
