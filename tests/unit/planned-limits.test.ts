/**
 * The pre-limit (builders/pre-limit.ts) and the monitoring's series (builders/monitoring.ts) derive
 * from the limits' plan (`plannedDescriptors`, each limit typed), not from the object built for
 * config.yaml; the config is that plan serialised. Checked here: for every shape of rule, the
 * config as written and read back by the one reader (builders/rendered-config.ts) holds exactly
 * the limits the pre-limit and the series name, in order, with the same limit (the test's own walk
 * over the read-back config is the oracle); a tampered config or plan is caught (negative
 * controls); a config node handed where the plan is expected does not compile; and the dashboard's
 * rule summaries are of the checked rules as given.
 */
import { expect } from "chai";
import { compileProbes } from "./compile-probes";
import { splitLimits } from "../../builders/counter-stores";
import { limitSeries, ruleSummaries } from "../../builders/monitoring";
import { preLimitPlan } from "../../builders/pre-limit";
import { ConfigDescriptor, PlannedDescriptor, ServiceLimit, configYaml } from "../../builders/ratelimit-config";
import { readServiceConfig } from "../../builders/rendered-config";
import { buildGlobalLimits } from "../../builders/rules";
import { GlobalLimitsInput, LimitUnit, MissingHeader, PathKeyMode, RateLimitRuleArgs } from "../../builders/rule-args";
import { MissingIdentity } from "../../builders/missing-identity";
import { RateLimitHeaders } from "../../builders/filter-choices";
import { planGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { resolveGlobalRateLimit, resolveWithFallbacks } from "../../components/global-ratelimit/resolve";
import { G } from "./global-ratelimit-fixtures";

const M = LimitUnit.Minute;
const JWT = { issuer: "https://auth.example.com", jwksUri: "https://auth.example.com/keys", claim: "sub" };

/** Every shape of rule and path limit the plan makes a descriptor tree of. */
const SHAPES: Record<string, GlobalLimitsInput> = {
    "plain and path rules": {
        rules: [
            { name: "all", requestsPerUnit: 100, unit: M },
            { name: "login", path: { exact: "/login" }, methods: ["POST"], requestsPerUnit: 5, unit: LimitUnit.Second },
        ],
    },
    "per client, shadow": {
        rules: [
            { name: "per-client", perClientAddress: true, requestsPerUnit: 10, unit: M },
            { name: "observe", path: { prefix: "/api" }, requestsPerUnit: 1, unit: LimitUnit.Hour, shadow: true },
        ],
    },
    "header per value, each whenMissing": {
        rules: [
            { name: "shared", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 7, unit: LimitUnit.Day },
            { name: "refuse", header: { name: "x-key", perValue: true, whenMissing: MissingHeader.Refuse }, requestsPerUnit: 3, unit: M },
            { name: "ignore", header: { name: "x-team", perValue: true, whenMissing: MissingHeader.Ignore }, requestsPerUnit: 4, unit: M },
        ],
    },
    "query per value with clients": {
        rules: [{ name: "q", query: { name: "api_key", perValue: true }, perClientAddress: true, requestsPerUnit: 20, unit: M }],
    },
    "client CIDRs": {
        rules: [
            { name: "office", clientCidr: { cidrs: ["10.0.0.0/8", "2001:db8::/32"] }, requestsPerUnit: 50, unit: M },
            { name: "lab", clientCidr: { cidr: "192.0.2.0/24", perAddress: true }, requestsPerUnit: 2, unit: LimitUnit.Second },
        ],
    },
    "identity, both missings": {
        rules: [
            { name: "per-user", identity: { jwt: JWT }, requestsPerUnit: 10, unit: M },
            { name: "strict", identity: { jwt: JWT, missing: MissingIdentity.Refuse }, requestsPerUnit: 1, unit: M },
        ],
    },
    "named paths and the catch-all": {
        rules: [{ name: "api", path: { prefix: "/api/" }, requestsPerUnit: 30, unit: M }],
        perPath: { paths: [{ path: "/productpage", requestsPerUnit: 1, unit: M }], eachPath: { requestsPerUnit: 100, unit: M } },
    },
    "literal paths": {
        pathKey: PathKeyMode.Literal,
        perPath: { descriptorKey: "PATH", paths: [{ path: "/a", requestsPerUnit: 2, unit: M }], eachPath: { requestsPerUnit: 9, unit: M } },
    },
};

/** One limit of a config as the service reads it: the chain of entries down to it, and its limit. */
interface Chain {
    entries: { key: string; value?: string }[];
    requests: number;
    unit: string;
    shadow: boolean;
}

/** The oracle: every limited node of a read-back config, depth first, with the entries above it. */
function chainsOf(nodes: readonly ConfigDescriptor<ServiceLimit>[], above: Chain["entries"] = []): Chain[] {
    return nodes.flatMap((n) => {
        const entries = [...above, n.value !== undefined ? { key: n.key, value: n.value } : { key: n.key }];
        const rl = n.rate_limit;
        const own = rl && "requests_per_unit" in rl ? [{ entries, requests: rl.requests_per_unit, unit: rl.unit, shadow: n.shadow_mode === true }] : [];
        return [...own, ...chainsOf(n.descriptors ?? [], entries)];
    });
}

/** Where the config as written and read back and the plan's pre-limit and series disagree (none: they agree). */
function disagreements(configText: string, planned: readonly PlannedDescriptor[]): string[] {
    const chains = chainsOf(readServiceConfig(configText, "test config").descriptors);
    const out: string[] = [];
    const title = (c: Chain) => c.entries.map((e) => (e.value !== undefined ? `${e.key}=${e.value}` : `${e.key} (each value)`)).join(" > ");
    const series = limitSeries("d", planned).map((s) => `${s.title} ${s.requests}/${s.unit}${s.shadow ? " shadow" : ""}`);
    const expected = chains.map((c) => `${title(c)} ${c.requests}/${c.unit}${c.shadow ? " shadow" : ""}`);
    if (JSON.stringify(series) !== JSON.stringify(expected)) out.push(`series ${JSON.stringify(series)} != config ${JSON.stringify(expected)}`);
    // A bucket for each chain named by values alone, not shadow, not 0; every other limit left to the service.
    const pre = preLimitPlan(planned);
    const named = chains.filter((c) => c.entries.every((e) => e.value !== undefined) && !c.shadow && c.requests > 0);
    const buckets = pre.buckets.map((b) => `${b.entries.map((e) => `${e.key}=${e.value}`).join(" > ")} ${b.requests}/${b.unit} max ${b.maxTokens}`);
    const wanted = named.map((c) => `${title(c)} ${c.requests}/${c.unit} max ${2 * c.requests}`);
    if (JSON.stringify(buckets) !== JSON.stringify(wanted)) out.push(`buckets ${JSON.stringify(buckets)} != config ${JSON.stringify(wanted)}`);
    if (pre.unbounded.length !== chains.length - named.length)
        out.push(`${pre.unbounded.length} left to the service, config has ${chains.length - named.length}`);
    return out;
}

/** The plan's trees of a shape: one store, and each side of a split one. */
function treesOf(input: GlobalLimitsInput): Record<string, { planned: PlannedDescriptor[]; config: ConfigDescriptor[] }> {
    const { plan, problems } = planGlobalLimits(input);
    expect(problems).to.deep.equal([]);
    const split = splitLimits(plan);
    const { plannedDescriptors, configDescriptors } = buildGlobalLimits(plan);
    return {
        "one store": { planned: plannedDescriptors, config: configDescriptors },
        "split, fixed": { planned: split.fixed.plannedDescriptors, config: split.fixed.configDescriptors },
        "split, per value": { planned: split.perValue.plannedDescriptors, config: split.perValue.configDescriptors },
    };
}

describe("planned limits: the pre-limit and the series derive from the plan, and agree with config.yaml", () => {
    for (const [shape, input] of Object.entries(SHAPES)) {
        it(`${shape}: every limit of the written config is one series and one pre-limit verdict, in order, with its limit`, () => {
            for (const [side, t] of Object.entries(treesOf(input))) {
                expect(disagreements(configYaml("d", t.config), t.planned), side).to.deep.equal([]);
            }
        });
    }

    it("there is something to agree on: the shapes hold buckets, per-value, shadow and refusing limits", () => {
        const all = Object.values(SHAPES).flatMap((i) => treesOf(i)["one store"].planned);
        const pre = preLimitPlan(all);
        const reasons = new Set(pre.unbounded.map((u) => u.reason.split(":")[0]));
        expect(pre.buckets.length).to.be.greaterThan(5);
        expect([...reasons]).to.include.members(["shadow mode", "a limit of 0"]);
        expect(pre.unbounded.some((u) => u.descriptor.includes("(each value)"))).to.equal(true);
    });

    it("negative control: a config whose limit differs from the plan's, or a plan with a limit flipped to shadow, is caught", () => {
        const t = treesOf(SHAPES["plain and path rules"]!)["one store"];
        const text = configYaml("d", t.config);
        expect(text).to.include("requests_per_unit: 5\n");
        expect(disagreements(text.replace("requests_per_unit: 5\n", "requests_per_unit: 6\n"), t.planned)).to.have.length(2);
        const flipped = t.planned.map((n) => (n.limit ? { ...n, limit: { ...n.limit, shadow: true } } : n));
        expect(disagreements(text, flipped)).to.have.length(3);
        // A node the config has and the plan does not.
        expect(disagreements(configYaml("d", [...t.config, { key: "extra", value: "x", rate_limit: { unit: "minute", requests_per_unit: 1 } }]), t.planned)).to
            .not.be.empty;
    });

    it("a refusing fallback's planned limit is 0 and keeps the rule's unit, window and shadow", () => {
        const { plan } = planGlobalLimits({
            rules: [{ name: "k", header: { name: "x-k", perValue: true, whenMissing: MissingHeader.Refuse }, requestsPerUnit: 3, unit: M, shadow: true }],
        });
        const limits = (nodes: readonly PlannedDescriptor[]): PlannedDescriptor["limit"][] =>
            nodes.flatMap((n) => [...(n.limit ? [n.limit] : []), ...limits(n.descriptors ?? [])]);
        expect(limits(buildGlobalLimits(plan).plannedDescriptors)).to.deep.equal([
            { requests: 3, unit: M, seconds: 60, shadow: true },
            { requests: 0, unit: M, seconds: 60, shadow: true },
            { requests: 0, unit: M, seconds: 60, shadow: true },
        ]);
    });
});

describe("planned limits: a config node is not a plan", function () {
    this.timeout(120000);
    it("handing config.yaml's descriptors to preLimitPlan or limitSeries fails to compile; control: the planned ones compile", () => {
        const probe = (arg: string) => `
import { compileGlobalLimits } from "./components/global-ratelimit/limits-plan";
import { preLimitPlan } from "./builders/pre-limit";
import { limitSeries } from "./builders/monitoring";
const c = compileGlobalLimits({ rules: [] });
preLimitPlan(c.${arg});
limitSeries("d", c.${arg});
`;
        const { config, planned } = compileProbes({ config: probe("configDescriptors"), planned: probe("plannedDescriptors") });
        expect(config).to.have.length(2);
        expect(config!.join("\n")).to.match(/ConfigDescriptor.*is not assignable to .*PlannedDescriptor/);
        expect(planned).to.deep.equal([]);
    });
});

describe("planned limits: the dashboard's rule summaries are of the checked rules, as given", () => {
    const summaries = (change: Record<string, unknown>) => resolveGlobalRateLimit(G(change)).value!.monitoring.input.ruleSummaries;

    it("a shadow rule, and every rule of a filter without headers, read as today (not 'hidden'); a rule that hides itself does", () => {
        const rules: RateLimitRuleArgs[] = [
            { name: "observe", requestsPerUnit: 1, unit: M, shadow: true },
            { name: "quiet", path: { exact: "/q" }, requestsPerUnit: 2, unit: M, rateLimitHeaders: false },
            { name: "plain", requestsPerUnit: 3, unit: M },
        ];
        const hidden = "; hidden from clients (no X-RateLimit headers, not in RateLimit-Policy)";
        const want = { observe: "every request", quiet: `path /q${hidden}`, plain: "every request" };
        expect(summaries({ rules })).to.deep.equal(want);
        expect(summaries({ rules, rateLimitHeaders: RateLimitHeaders.Off })).to.deep.equal(want);
        // Control: the resolved rules would say otherwise (the shadow rule's headers resolve to off).
        const { plan } = planGlobalLimits({ rules, headersOn: true });
        expect(plan.rules.map((r) => r.rateLimitHeaders)).to.deep.equal([false, false, true]);
    });

    it("only rules that passed their checks get a summary; control: the same rule made valid gets one", () => {
        const bad = { name: "bad", path: { exact: "no-slash" }, requestsPerUnit: 1, unit: M };
        const r = resolveWithFallbacks(G({ rules: [{ name: "ok", requestsPerUnit: 1, unit: M }, bad] }));
        expect(r.problems.map((p) => p.key)).to.include("rules[1].path.exact");
        expect(r.value.monitoring.input.ruleSummaries).to.have.keys("ok");
        expect(
            summaries({
                rules: [
                    { name: "ok", requestsPerUnit: 1, unit: M },
                    { ...bad, path: { exact: "/slash" } },
                ],
            }),
        ).to.have.keys("ok", "bad");
        expect(ruleSummaries([{ name: "ok", requestsPerUnit: 1, unit: M }])).to.have.keys("ok");
    });
});
