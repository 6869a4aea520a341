/**
 * A cost no client can turn against the others: a header cost on a counter every client shares (no
 * `perClientAddress`, per-value header or query, or `identity`) is refused at preview unless it is
 * bounded (a request header: `maxCost`, at most the rule's budget; a response header: the risk
 * accepted by name), in GlobalRateLimit and in PlatformRateLimit's defaults and overrides; each
 * refusal with its control (the same rule per client, or bounded, accepted). The preview prints,
 * per cost rule, the most one request takes and whose budget it takes it from. And `explain`
 * counts a platform override's cost as the gateway does (fixtures/platform-cost-program: 100 a
 * minute every client shares, `x-cost` at most 50), where a cost of 1 would give other decisions.
 */
import { expect } from "chai";
import * as path from "path";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { explainProgram, ExplainRequest } from "../../prove/api";
import { formatExplanation } from "../../prove/format";
import { G } from "./global-ratelimit-fixtures";

const H = LimitUnit.Hour;
const SHARED: RateLimitRuleArgs = { name: "search", path: { prefix: "/search" }, requestsPerUnit: 100, unit: H, cost: { requestHeader: "x-cost" } };
const RESPONSE: RateLimitRuleArgs = { name: "tokens", path: { prefix: "/chat" }, requestsPerUnit: 1000, unit: H, cost: { responseHeader: "x-tokens-used" } };
const problemsOf = (rules: RateLimitRuleArgs[]) => planGlobalRateLimit(G({ rules })).problems;
const gateway = { selector: { istio: "ingressgateway" } };

describe("shared cost: a request-header cost on a counter every client shares needs maxCost", () => {
    it("refused under rules[0].cost.maxCost: what one request does to everyone, and a fix that makes the plan valid", () => {
        const [p, ...rest] = problemsOf([SHARED]);
        expect(rest).to.deep.equal([]);
        expect(p!.key).to.equal("rules[0].cost.maxCost");
        expect(p!.problem).to.contain("request header x-cost on one counter the 100 a hour every client shares");
        expect(p!.problem).to.contain("one request with x-cost: 999999999 adds 999,999,999 and every client is refused for the rest of the hour");
        expect(p!.fix).to.contain("set rules[0].cost.maxCost to 10").and.to.contain("rules[0].perClientAddress: true");
        expect(problemsOf([{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 10 } }]), "the fix").to.deep.equal([]);
    });

    it("controls: the same rule per client address, per x-api-key value, or with maxCost is accepted", () => {
        expect(problemsOf([{ ...SHARED, perClientAddress: true }])).to.deep.equal([]);
        expect(problemsOf([{ ...SHARED, header: { name: "x-api-key", perValue: true }, unit: LimitUnit.Minute }])).to.deep.equal([]);
        expect(problemsOf([{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 100 } }])).to.deep.equal([]);
    });

    it("a maxCost over the rule's whole budget is refused on a shared counter (one refused request would still take it all); control: per client", () => {
        const big = { ...SHARED, cost: { requestHeader: "x-cost", maxCost: 101 } };
        expect(problemsOf([big]).map((p) => [p.key, p.problem])).to.deep.equal([
            ["rules[0].cost.maxCost", "is more than the 100 a hour every client shares: one request could still take all of it (refused, and counted)"],
        ]);
        expect(problemsOf([{ ...big, perClientAddress: true }])).to.deep.equal([]);
    });

    it("PlatformRateLimit: the same refusal under defaults.rules[0] and overrides.rules[0]; control: with maxCost, accepted", () => {
        const keys = (x: object) => planPlatformRateLimit({ gateway, ...x }).problems.map((p) => p.key);
        expect(keys({ defaults: { rules: [SHARED] } })).to.deep.equal(["defaults.rules[0].cost.maxCost"]);
        expect(keys({ overrides: { rules: [SHARED] } })).to.deep.equal(["overrides.rules[0].cost.maxCost"]);
        expect(keys({ overrides: { rules: [{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 10 } }] } })).to.deep.equal([]);
    });
});

describe("shared cost: a response-header cost on a counter every client shares needs the risk accepted", () => {
    it("refused under rules[0].cost (one response with a large number spends everyone's budget); the fix names acceptSharedBudgetRisk", () => {
        const [p, ...rest] = problemsOf([RESPONSE]);
        expect(rest).to.deep.equal([]);
        expect(p!.key).to.equal("rules[0].cost");
        expect(p!.problem).to.contain("response header x-tokens-used on one counter the 1,000 a hour every client shares");
        expect(p!.fix).to.contain("set rules[0].cost.acceptSharedBudgetRisk to true");
    });

    it("controls: accepted by name, or counted per client: no problem; acceptSharedBudgetRisk is refused beside a request-header cost", () => {
        expect(problemsOf([{ ...RESPONSE, cost: { responseHeader: "x-tokens-used", acceptSharedBudgetRisk: true } }])).to.deep.equal([]);
        expect(problemsOf([{ ...RESPONSE, perClientAddress: true }])).to.deep.equal([]);
        const misplaced = problemsOf([{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 10, acceptSharedBudgetRisk: true } }]);
        expect(misplaced.map((p) => [p.key, p.problem])).to.deep.equal([["rules[0].cost.acceptSharedBudgetRisk", "applies only to responseHeader"]]);
    });
});

describe("shared cost: the preview prints, per cost rule, the most one request takes and from whose budget", () => {
    it("a shared counter: at most maxCost of the budget, and how many such requests spend it for everyone", () => {
        const lines = planGlobalRateLimit(G({ rules: [{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 30 } }] })).perValueFigures.lines;
        expect(lines).to.deep.equal([
            "cost of 'search' (rules[0], request header x-cost): one request takes at most 30 of the 100 a hour every client shares: 4 such requests spend it for everyone until the hour ends",
        ]);
    });

    it("control: per client, without maxCost, the most is the largest header cost, from the client's own counter; a fixed cost its number", () => {
        const plan = planGlobalRateLimit(
            G({
                rules: [
                    { ...SHARED, perClientAddress: true },
                    { ...SHARED, name: "bulk", cost: { fixed: 40 } },
                ],
            }),
        );
        expect(plan.perValueFigures.lines.filter((l) => l.startsWith("cost of"))).to.deep.equal([
            "cost of 'search' (rules[0], request header x-cost): one request takes at most 999,999,999 of the 100 a hour each client has (its own counter): one client spends only its own",
            "cost of 'bulk' (rules[1], a fixed cost): one request takes at most 40 of the 100 a hour every client shares: 3 such requests spend it for everyone until the hour ends",
        ]);
    });

    it("PlatformRateLimit prints its cost rules under their source", () => {
        const plan = planPlatformRateLimit({ gateway, overrides: { rules: [{ ...SHARED, cost: { requestHeader: "x-cost", maxCost: 10 } }] } });
        expect(plan.perValueFigures.lines[0]).to.match(
            /^cost of 'search' \(overrides\.rules\[0\], request header x-cost\): one request takes at most 10 of the 100/,
        );
    });
});

describe("shared cost: explain counts a platform override's cost as the gateway does", function () {
    this.timeout(120_000);
    const PROGRAM = path.join(__dirname, "fixtures", "platform-cost-program");
    const NOW = Date.UTC(2026, 10, 27, 16, 0, 10);
    const search = (cost?: string, client = "203.0.113.7"): ExplainRequest => ({
        host: "shop.example.com",
        path: "/search",
        clientAddress: client,
        ...(cost !== undefined ? { headers: { "x-cost": cost } } : {}),
    });

    it("x-cost 40 three times from two clients: counted 40, 80, 120 of the shared 100, the third refused (a cost of 1 would allow all three)", async () => {
        const x = await explainProgram(PROGRAM, [search("40"), search("40", "198.51.100.9"), search("40")], { nowMs: NOW });
        expect(x.decisions.map((d) => d.descriptors[0]!.count)).to.deep.equal([40, 80, 120]);
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true, false]);
        expect(x.decisions[2]!.refusedBy).to.deep.include({ by: "service", rule: "platform override search-ceiling", source: "platform override" });
        expect(formatExplanation(x)).to.include("rule platform override search-ceiling: 100 per minute; this request costs 40;");
    });

    it("a request asking for 1,000,000 is counted maxCost (50); one without the header missingCost (1)", async () => {
        const x = await explainProgram(PROGRAM, [search("1000000"), search()], { nowMs: NOW });
        expect(x.decisions.map((d) => d.descriptors[0]!.count)).to.deep.equal([50, 51]);
        expect(x.decisions.map((d) => d.allowed)).to.deep.equal([true, true]);
    });
});
