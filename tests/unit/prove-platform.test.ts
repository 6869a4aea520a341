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
import { explainProgram, ExplainRequest, replayLog } from "../../prove/api";
import { istioText } from "./prove-login-log";
import { formatExplanation } from "../../prove/format";

const COSTS = path.join(__dirname, "fixtures", "cost-program");
const BUDGET = 100;
const COST = 40;

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
        expect(other!.descriptors.map((c) => [c.rule, c.limit?.requests, c.limit?.unit])).to.deep.equal([["platform default per-client", DEFAULT, "minute"]]);
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

    it(`replay counts the platform override's rule apart from the team's: ${OVERRIDE + 1} GET /export and ${TEAM + 1} POST /login in one minute, one refused each`, async () => {
        const lines = [
            ...Array.from({ length: OVERRIDE + 1 }, () => ({ method: "GET", path: "/export" })),
            ...Array.from({ length: TEAM + 1 }, () => ({ method: "POST", path: "/login" })),
        ].map((l, i) => istioText({ ...l, timeMs: NOW + i * 100, client: CLIENT }, i));
        const r = await replayLog(WITH, lines.join("\n"));
        const byRule = Object.fromEntries(r.rules.map((x) => [x.rule, [x.requests, x.refused]]));
        expect(byRule).to.deep.include({ "platform override export-ceiling": [OVERRIDE + 1, 1], login: [TEAM + 1, 1] });
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
        expect(d[OVERRIDE + TEAM + 1]!.refusedBy).to.deep.include({ by: "service", rule: "login" });
        expect(d[OVERRIDE + TEAM + 1]!.refusedBy).to.not.have.property("source");
        expect(d.every((v) => !v.notes.some((n) => n.includes("platform")))).to.equal(true);
        expect(d.at(-1)!.descriptors).to.deep.equal([]);
        expect(d.at(-1)!.notes[0]).to.match(/no gateway of the program serves host other\.example\.com/);
    });
});

describe("prove: rule costs in explain", function () {
    this.timeout(120_000);
    const search = (headers: Record<string, string>): ExplainRequest => ({ host: "api.example.com", path: "/search", clientAddress: CLIENT, headers });

    it(`a request-header cost of ${COST} on a budget of ${BUDGET}: the third request is refused (${3 * COST} > ${BUDGET}), each counted by its cost`, async () => {
        const x = await explainProgram(COSTS, times(3, search({ "x-cost": String(COST) })), { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, false]);
        expect(x.decisions.map((d) => d.descriptors[0]!.count)).to.deep.equal([COST, 2 * COST, 3 * COST]);
        expect(x.decisions[1]!.descriptors[0]!.remaining).to.equal(BUDGET - 2 * COST);
        expect(x.decisions[2]!.refusedBy).to.deep.include({ by: "service", rule: "search" });
        expect(formatExplanation(x)).to.include(`this request costs ${COST}`);
    });

    it("a client leaving the header out, or sending a value that is not a whole number, pays 1 (missingCost), not 0", async () => {
        const x = await explainProgram(COSTS, [search({}), search({ "x-cost": "-5" }), search({ "x-cost": "abc" })], { nowMs: NOW });
        expect(x.decisions.map((d) => d.descriptors[0]!.count)).to.deep.equal([1, 2, 3]);
    });

    it("negative control: without a cost header every request counts 1, so three requests are far from the budget", async () => {
        const x = await explainProgram(COSTS, times(3, search({})), { nowMs: NOW });
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, true]);
        expect(x.decisions.at(-1)!.descriptors[0]!.remaining).to.equal(BUDGET - 3);
    });

    it("a response cost is named as counted when the response is done, not counted by the request", async () => {
        const x = await explainProgram(COSTS, [{ host: "api.example.com", method: "POST", path: "/chat", clientAddress: CLIENT }], { nowMs: NOW });
        expect(x.decisions[0]!.allowed).to.equal(true);
        expect(x.decisions[0]!.notes.join("\n")).to.match(/rule tokens counts a cost from the response .* when the response is done/);
    });
});
