/**
 * `mesh-ratelimit explain` on a program holding a platform team's limits and a team's own
 * (fixtures/platform-program): which filter refuses (platform override, team rule, platform
 * default), and where the platform's defaults are on. The expected decisions come from the rule
 * numbers written here, not from the model: override 3 a minute per client on /export (every host),
 * defaults 1,000 a minute per client (hosts no team covers), team 5 POST /login a minute per client
 * on shop.example.com. Negative control: the same team program without the platform's limits.
 */
import { expect } from "chai";
import * as path from "path";
import { explainProgram, ExplainRequest } from "../../prove/api";
import { formatExplanation } from "../../prove/format";

const WITH = path.join(__dirname, "fixtures", "platform-program");
const WITHOUT = path.join(__dirname, "fixtures", "platform-program-off");
const NOW = Date.UTC(2026, 10, 27, 16, 0, 10);
const OVERRIDE = 3;
const TEAM = 5;
const DEFAULT = 1000;
const TEAM_HOST = "shop.example.com";
const OTHER_HOST = "other.example.com";
const CLIENT = "203.0.113.7";

const req = (host: string, path: string, method = "GET", client = CLIENT): ExplainRequest => ({ host, path, method, clientAddress: client });
const times = (n: number, r: ExplainRequest) => Array.from({ length: n }, () => r);
/** The decisions of n requests under a limit of `limit`: the first `limit` allowed, the rest refused. */
const expected = (n: number, limit: number) => Array.from({ length: n }, (_, i) => i < limit);

describe("prove: platform defaults and overrides in explain", function () {
    this.timeout(120_000);

    it(`the override (${OVERRIDE}/min per client on /export) refuses the request after the ${OVERRIDE}rd on the team's host, named as the platform override`, async () => {
        const x = await explainProgram(WITH, times(OVERRIDE + 1, req(TEAM_HOST, "/export")), { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal(expected(OVERRIDE + 1, OVERRIDE));
        expect(x.decisions[OVERRIDE]!.refusedBy).to.deep.include({ by: "service", rule: "platform override export-ceiling", source: "platform override" });
        expect(formatExplanation(x)).to.include(
            "REFUSED by rule platform override export-ceiling at the rate-limit service (3 per minute, the platform override limits)",
        );
    });

    it(`the team's rule (${TEAM} POST /login a minute) refuses the ${TEAM + 1}th POST, named as the team's; the override does not count /login`, async () => {
        const x = await explainProgram(WITH, times(TEAM + 1, req(TEAM_HOST, "/login", "POST")), { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal(expected(TEAM + 1, TEAM));
        expect(x.decisions[TEAM]!.refusedBy).to.deep.include({ by: "service", rule: "login", source: "team" });
        expect(x.decisions[0]!.descriptors.map((c) => c.rule)).to.deep.equal(["login"]);
    });

    it("the defaults are off on the team's host and on for another host (its descriptor, 1,000 a minute)", async () => {
        const x = await explainProgram(WITH, [req(TEAM_HOST, "/"), req(OTHER_HOST, "/")], { nowMs: NOW });
        const [team, other] = x.decisions;
        expect(team!.descriptors).to.deep.equal([]);
        expect(team!.notes).to.include(`the platform default limits are off on ${TEAM_HOST}:8080: a team's own limits replace them here`);
        expect(other!.descriptors.map((c) => [c.rule, c.limit?.requestsPerUnit, c.limit?.unit])).to.deep.equal([
            ["platform default per-client", DEFAULT, "minute"],
        ]);
        expect(other!.notes).to.include("the platform default limits apply on *:8080");
        expect(x.gateways[0]!.hosts).to.include("*");
    });

    it(`the defaults refuse request ${DEFAULT + 1} from one client on another host, named as the platform default; another client is allowed`, async () => {
        const x = await explainProgram(WITH, [...times(DEFAULT + 1, req(OTHER_HOST, "/")), req(OTHER_HOST, "/", "GET", "203.0.113.8")], { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([...expected(DEFAULT + 1, DEFAULT), true]);
        expect(x.decisions[DEFAULT]!.refusedBy).to.deep.include({ rule: "platform default per-client", source: "platform default" });
    });

    it("a client cannot get around the override by spreading /export over two hosts: one counter per client across the gateway", async () => {
        const x = await explainProgram(WITH, [req(TEAM_HOST, "/export"), req(OTHER_HOST, "/export"), req(TEAM_HOST, "/export"), req(OTHER_HOST, "/export")], {
            nowMs: NOW,
        });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal(expected(4, OVERRIDE));
        expect(x.decisions[3]!.refusedBy).to.deep.include({ source: "platform override" });
    });

    it("negative control: without the PlatformRateLimit, /export is never refused, only the team's rule refuses, and another host is not served", async () => {
        const x = await explainProgram(
            WITHOUT,
            [...times(OVERRIDE + 1, req(TEAM_HOST, "/export")), ...times(TEAM + 1, req(TEAM_HOST, "/login", "POST")), req(OTHER_HOST, "/")],
            { nowMs: NOW },
        );
        const d = x.decisions;
        expect(d.slice(0, OVERRIDE + 1).map((v) => v.allowed)).to.deep.equal(times(OVERRIDE + 1, true as any));
        expect(d.slice(OVERRIDE + 1, OVERRIDE + TEAM + 2).map((v) => v.allowed)).to.deep.equal(expected(TEAM + 1, TEAM));
        expect(d[OVERRIDE + TEAM + 1]!.refusedBy).to.deep.include({ rule: "login", source: "team" });
        expect(d.at(-1)!.descriptors).to.deep.equal([]);
        expect(d.at(-1)!.notes[0]).to.match(/no gateway of the program serves host other\.example\.com/);
    });
});
