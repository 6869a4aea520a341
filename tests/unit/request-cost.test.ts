/**
 * A rule's cost (builders/request-cost*.ts) and the longer windows: the refused inputs with their
 * field and fix, the entries and filter the builders write (expected values written here from
 * Envoy's API, not read from the code), and the plan's refusal of a cost in the shared layout.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { checkRequestCost, resolveRequestCost } from "../../components/rules/request-cost-checks";
import { costEntries, responseCostPatches, responseCosts } from "../../builders/request-cost";
import { upToPattern } from "../../builders/request-cost-args";
import { LIMIT_UNIT_SECONDS, LimitUnit } from "../../builders/rule-args";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { configYaml } from "../../builders/ratelimit-config";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { Problem } from "../../lib/problems";
import { addendOfText, entryCost } from "../../gateway-model/request-cost-model";
import { formatExplanation } from "../../render/explain-format";
import { G, M } from "./global-ratelimit-fixtures";

const problemsOf = (cost: unknown): Problem[] => {
    const p: Problem[] = [];
    checkRequestCost("rules[0].cost", cost, p);
    return p;
};
const RANGE = "must be a whole number from 0 to 1000000000 (the most Envoy adds for one request)";
const NAME = "must be a header name in lower case (letters, digits and !#$%&'*+.^_`|~-), not a pseudo-header";

describe("request cost: the checks (field, value, problem, fix)", () => {
    const refused: [string, unknown, Problem[]][] = [
        [
            "not an object",
            5,
            [
                {
                    key: "rules[0].cost",
                    value: 5,
                    problem: "must be an object",
                    fix: 'give one of { fixed: 5 }, { requestHeader: "x-cost" }, { responseHeader: "x-tokens-used" }',
                },
            ],
        ],
        [
            "no kind",
            {},
            [{ key: "rules[0].cost", value: {}, problem: "needs exactly one of fixed, requestHeader, responseHeader (has none)", fix: "keep one of them" }],
        ],
        [
            "two kinds",
            { fixed: 1, requestHeader: "x-cost" },
            [
                {
                    key: "rules[0].cost",
                    value: { fixed: 1, requestHeader: "x-cost" },
                    problem: "needs exactly one of fixed, requestHeader, responseHeader (has fixed, requestHeader)",
                    fix: "keep one of them",
                },
            ],
        ],
        ["a fraction", { fixed: 2.5 }, [{ key: "rules[0].cost.fixed", value: 2.5, problem: RANGE, fix: "set rules[0].cost.fixed to e.g. 5" }]],
        ["negative", { fixed: -1 }, [{ key: "rules[0].cost.fixed", value: -1, problem: RANGE, fix: "set rules[0].cost.fixed to e.g. 5" }]],
        [
            "over Envoy's 10^9",
            { fixed: 1_000_000_001 },
            [{ key: "rules[0].cost.fixed", value: 1_000_000_001, problem: RANGE, fix: "set rules[0].cost.fixed to e.g. 5" }],
        ],
        ["a number as text", { fixed: "5" }, [{ key: "rules[0].cost.fixed", value: "5", problem: RANGE, fix: "set rules[0].cost.fixed to e.g. 5" }]],
        ["upper case header", { requestHeader: "X-Cost" }, [{ key: "rules[0].cost.requestHeader", value: "X-Cost", problem: NAME, fix: 'use "x-cost"' }]],
        [
            "pseudo-header",
            { requestHeader: ":path" },
            [{ key: "rules[0].cost.requestHeader", value: ":path", problem: NAME, fix: 'set rules[0].cost.requestHeader to e.g. "x-cost"' }],
        ],
        [
            "space in header",
            { responseHeader: "x tokens" },
            [{ key: "rules[0].cost.responseHeader", value: "x tokens", problem: NAME, fix: 'set rules[0].cost.responseHeader to e.g. "x-tokens-used"' }],
        ],
        [
            "empty header",
            { responseHeader: "" },
            [{ key: "rules[0].cost.responseHeader", value: "", problem: NAME, fix: 'set rules[0].cost.responseHeader to e.g. "x-tokens-used"' }],
        ],
        [
            "missingCost negative",
            { requestHeader: "x-cost", missingCost: -2 },
            [{ key: "rules[0].cost.missingCost", value: -2, problem: RANGE, fix: "set rules[0].cost.missingCost to e.g. 1" }],
        ],
        [
            "missingCost with fixed",
            { fixed: 3, missingCost: 1 },
            [{ key: "rules[0].cost.missingCost", value: 1, problem: "applies only to a header cost", fix: "remove missingCost" }],
        ],
        [
            "a misspelt field",
            { fixd: 3 },
            [
                {
                    key: "rules[0].cost.fixd",
                    value: 3,
                    problem: "is not a field of a cost",
                    fix: "use one of fixed, requestHeader, responseHeader, missingCost, maxCost, acceptSharedBudgetRisk",
                },
                {
                    key: "rules[0].cost",
                    value: { fixd: 3 },
                    problem: "needs exactly one of fixed, requestHeader, responseHeader (has none)",
                    fix: "keep one of them",
                },
            ],
        ],
    ];
    for (const [what, cost, expected] of refused) it(`refuses ${what}`, () => expect(problemsOf(cost)).to.deep.equal(expected));

    const accepted: unknown[] = [
        { fixed: 0 },
        { fixed: 1_000_000_000 },
        { requestHeader: "x-cost", missingCost: 0 },
        { responseHeader: "x-tokens-used", missingCost: 10 },
    ];
    for (const cost of accepted) it(`accepts ${JSON.stringify(cost)}`, () => expect(problemsOf(cost)).to.deep.equal([]));

    it("compileGlobalLimits reports a bad cost under the rule's index and drops the rule", () => {
        const c = compileGlobalLimits({
            rules: [
                { name: "a", requestsPerUnit: 1, unit: M },
                { name: "b", requestsPerUnit: 1, unit: M, cost: { fixed: -1 } },
            ],
        });
        expect(c.problems.map((p) => p.key)).to.deep.equal(["rules[1].cost.fixed"]);
        expect(c.configDescriptors.map((d) => d.value)).to.deep.equal(["a"]);
    });

    it("the plan refuses a cost in the shared layout (Envoy ignores hits_addend there), and names the rule", () => {
        const rules = [
            { name: "all", requestsPerUnit: 10, unit: M },
            { name: "tokens", requestsPerUnit: 100, unit: M, cost: { fixed: 2 } },
        ];
        expect(planGlobalRateLimit(G({ filterLayout: FilterLayout.Shared, rules })).problems).to.deep.equal([
            {
                key: "rules[1].cost",
                value: { fixed: 2 },
                problem: "needs filterLayout: FilterLayout.PerInstance: with the shared layout Envoy ignores a descriptor's cost and counts every request 1",
                fix: "remove filterLayout (FilterLayout.PerInstance is the default; Istio 1.25 or later), or remove the cost",
            },
        ]);
        expect(planGlobalRateLimit(G({ rules })).problems).to.deep.equal([]);
        // Negative control: the same shared plan without the cost is accepted.
        expect(planGlobalRateLimit(G({ filterLayout: FilterLayout.Shared, rules: [rules[0]] })).problems).to.deep.equal([]);
    });
});

describe("request cost: the entries Envoy reads", () => {
    const entry = { actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: "t" } }] };
    const named = {
        actions: [{ header_value_match: { descriptor_key: "rule", descriptor_value: "t", headers: [{ name: ":method", string_match: { exact: "POST" } }] } }],
    };

    it("no cost: the entries unchanged (a rule without cost sends what it sent before)", () => {
        expect(costEntries(undefined, [entry])).to.deep.equal([entry]);
    });

    it("a fixed cost: hits_addend.number on each entry", () => {
        expect(costEntries(resolveRequestCost({ fixed: 40 }), [entry, named])).to.deep.equal([
            { ...entry, hits_addend: { number: 40 } },
            { ...named, hits_addend: { number: 40 } },
        ]);
    });

    it("a request header cost: a valid number sends %REQ(h)%, anything else (missing included) sends missingCost (default 1)", () => {
        const valid = { name: "x-cost", safe_regex_match: { google_re2: {}, regex: "[0-9]{1,9}" } };
        const invalid = { ...valid, invert_match: true, treat_missing_header_as_empty: true };
        expect(costEntries(resolveRequestCost({ requestHeader: "x-cost" }), [entry])).to.deep.equal([
            {
                actions: [{ header_value_match: { descriptor_key: "rule", descriptor_value: "t", headers: [valid] } }],
                hits_addend: { format: "%REQ(x-cost)%" },
            },
            { actions: [{ header_value_match: { descriptor_key: "rule", descriptor_value: "t", headers: [invalid] } }], hits_addend: { number: 1 } },
        ]);
        const withCondition = costEntries(resolveRequestCost({ requestHeader: "x-cost", missingCost: 7 }), [named]);
        expect(withCondition[0]!.actions[0]).to.deep.equal({
            header_value_match: { descriptor_key: "rule", descriptor_value: "t", headers: [{ name: ":method", string_match: { exact: "POST" } }, valid] },
        });
        expect(withCondition[1]!.hits_addend).to.deep.equal({ number: 7 });
    });

    it("a response header cost: checked with 0 on the request, charged from dynamic metadata at stream done", () => {
        expect(costEntries(resolveRequestCost({ responseHeader: "x-tokens-used" }), [entry])).to.deep.equal([
            { ...entry, hits_addend: { number: 0 } },
            { ...entry, hits_addend: { format: "%DYNAMIC_METADATA(mesh-ratelimit.response-cost:x-tokens-used)%" }, apply_on_stream_done: true },
        ]);
        expect(costEntries(resolveRequestCost({ responseHeader: "x-tokens-used", missingCost: 3 }), [entry])[1]!.hits_addend).to.deep.equal({
            format: "%DYNAMIC_METADATA(mesh-ratelimit.response-cost:x-tokens-used.or-3)%",
        });
    });

    it("the header-to-metadata filter: one response rule per header and missing cost, on each listener port, before the router", () => {
        const costs = responseCosts(
            [
                { responseHeader: "x-tokens-used" },
                undefined,
                { fixed: 1 },
                { responseHeader: "x-tokens-used" },
                { responseHeader: "x-tokens-used", missingCost: 2 },
            ].map((c) => c && resolveRequestCost(c)),
        );
        const patches = responseCostPatches(costs, [80, 8080], "envoy.filters.http.header_to_metadata/shop/ratelimit");
        expect(patches).to.have.length(2);
        expect((patches[1] as any).match.listener.portNumber).to.equal(8080);
        expect((patches[0] as any).match.listener.filterChain.filter.subFilter.name).to.equal("envoy.filters.http.router");
        expect((patches[0] as any).patch).to.deep.equal({
            operation: "INSERT_BEFORE",
            value: {
                name: "envoy.filters.http.header_to_metadata/shop/ratelimit",
                typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config",
                    response_rules: [
                        {
                            header: "x-tokens-used",
                            on_header_present: { metadata_namespace: "mesh-ratelimit.response-cost", key: "x-tokens-used", type: "NUMBER" },
                            remove: false,
                        },
                        {
                            header: "x-tokens-used",
                            on_header_present: { metadata_namespace: "mesh-ratelimit.response-cost", key: "x-tokens-used.or-2", type: "NUMBER" },
                            on_header_missing: { metadata_namespace: "mesh-ratelimit.response-cost", key: "x-tokens-used.or-2", type: "NUMBER", value: "2" },
                            remove: false,
                        },
                    ],
                },
            },
        });
        expect(responseCostPatches([], [80], "x")).to.deep.equal([]);
    });

    it("the plan: a response cost adds the filter to the rate-limit EnvoyFilter; no response cost, no filter", () => {
        const rules = [
            {
                name: "tokens",
                requestsPerUnit: 1000,
                unit: LimitUnit.Day,
                header: { name: "x-api-key", perValue: true },
                cost: { responseHeader: "x-tokens-used" },
            },
        ];
        const names = (r: unknown[]) =>
            planGlobalRateLimit(G({ rules: r }))
                .filters[0]!.spec.configPatches.map((p: any) => p.patch?.value?.name)
                .filter((n: unknown) => typeof n === "string");
        expect(names(rules)).to.include("envoy.filters.http.header_to_metadata/default/ratelimit");
        expect(names([{ ...rules[0], cost: { fixed: 3 } }]).some((n: string) => n.includes("header_to_metadata"))).to.equal(false);
    });
});

describe("longer windows: week, month, year as envoyproxy/ratelimit counts them", () => {
    it("are 7, 30 and 365 days (src/utils/utilities.go UnitToDivider), not calendar months or years", () => {
        expect(LIMIT_UNIT_SECONDS.week).to.equal(7 * 24 * 3600);
        expect(LIMIT_UNIT_SECONDS.month).to.equal(30 * 24 * 3600);
        expect(LIMIT_UNIT_SECONDS.year).to.equal(365 * 24 * 3600);
    });

    it("a rule with unit month is accepted and written to config.yaml as the service's unit name", () => {
        const c = compileGlobalLimits({ rules: [{ name: "budget", requestsPerUnit: 5000, unit: LimitUnit.Month }] });
        expect(c.problems).to.deep.equal([]);
        expect(configYaml("shop", c.configDescriptors)).to.contain("unit: month").and.to.contain("requests_per_unit: 5000");
    });
});

describe("request cost: the gateway model's addend (Envoy's reading of hits_addend)", () => {
    it("a number as it is; a %REQ(h)% format read from the request's header; nothing: the request-level addend", () => {
        expect(entryCost({ hits_addend: { number: 40 } }, {})).to.deep.equal({ kind: "known", hitsAddend: 40 });
        expect(entryCost({ hitsAddend: { format: "%REQ(x-cost)%" } }, { "x-cost": "40" })).to.deep.equal({ kind: "known", hitsAddend: 40 });
        expect(entryCost({ actions: [] }, {})).to.deep.equal({ kind: "none" });
    });

    it("a header Envoy cannot read as a number from 0 to 10^9 drops the descriptor", () => {
        for (const v of [undefined, "", "-5", "abc", "1000000001", "0x10"]) {
            expect(entryCost({ hits_addend: { format: "%REQ(x-cost)%" } }, v === undefined ? {} : { "x-cost": v }), String(v)).to.deep.equal({
                kind: "dropped",
            });
        }
        // What absl::SimpleAtod takes: an exponent, a fraction (cut to a whole number), spaces around.
        expect(addendOfText("1e3")).to.equal(1000);
        expect(addendOfText("2.9")).to.equal(2);
        expect(addendOfText(" 7 ")).to.equal(7);
    });

    it("an apply_on_stream_done entry is after the response: its cost is not known before", () => {
        const f = "%DYNAMIC_METADATA(mesh-ratelimit.response-cost:x-tokens-used)%";
        expect(entryCost({ hits_addend: { format: f }, apply_on_stream_done: true }, {})).to.deep.equal({ kind: "after-response", format: f });
    });

    it("explain prints the cost and the after-the-response line", () => {
        const limit = { entry: "rule=t", unit: "day", requests: 100, unlimited: false, shadow: false };
        const d = { entries: [{ key: "rule", value: "t" }], limit, bucket: "shop_rule_t_{window}", hitsAddend: 0 };
        const text = formatExplanation(
            {
                path: "/llm",
                normalizedPath: "/llm",
                virtualHost: "*:80",
                route: { name: "web", index: 0, match: "prefix /", virtualService: "shop/shop" },
                rateLimitsFrom: { level: "virtual host per-filter", envoyFilter: "shop/x" },
                domain: "shop",
                descriptors: [d],
                calls: [{ filter: "f", service: "", domain: "shop", descriptors: [d], responseHeaders: {} }],
                limited: true,
                afterResponse: [{ filter: "f", service: "", domain: "shop", descriptors: [{ ...d, hitsAddend: undefined, afterResponse: { format: "%X%" } }] }],
            },
            0,
        );
        expect(text).to.contain("    cost: 0 (checked, not counted: the cost is counted after the response)");
        expect(text).to.contain("  after the response: rule=t, counted after the response: not known before (%X%)");
    });
});

describe("request cost: maxCost, the bound of one request's header cost", () => {
    const fullMatch = (pattern: string, text: string) => new RegExp(`^(?:${pattern})$`).test(text);

    it("upToPattern(n) matches exactly the numbers 0..n (zero-padded too), checked for every number to 3n+10 and a sample up to 9 digits", () => {
        for (const n of [1, 9, 10, 11, 19, 20, 99, 100, 101, 250, 1000, 1009]) {
            const p = upToPattern(n);
            for (let v = 0; v <= 3 * n + 10; v++) {
                expect(fullMatch(p, String(v)), `${v} against ${n}`).to.equal(v <= n);
                expect(fullMatch(p, `00${v}`), `00${v} against ${n}`).to.equal(v <= n);
            }
        }
        const p = upToPattern(987654321);
        for (const [v, inside] of [
            ["987654321", true],
            ["987654322", false],
            ["987654320", true],
            ["99999999", true],
            ["999999999", false],
        ] as const)
            expect(fullMatch(p, v), v).to.equal(inside);
        // Control: a pattern that ignored the bound (any digits) would let 11 through against 10.
        expect(fullMatch("[0-9]{1,9}", "11")).to.equal(true);
        expect(fullMatch(upToPattern(10), "11")).to.equal(false);
    });

    it("the entries: a number up to maxCost as sent, a larger number as maxCost, anything else as missingCost (three exclusive forms)", () => {
        const entry = { actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: "t" } }] };
        const digits = { name: "x-cost", safe_regex_match: { google_re2: {}, regex: "[0-9]{1,9}" } };
        const upTo = { name: "x-cost", safe_regex_match: { google_re2: {}, regex: upToPattern(10) } };
        const hvm = (headers: unknown[]) => [{ header_value_match: { descriptor_key: "rule", descriptor_value: "t", headers } }];
        expect(costEntries(resolveRequestCost({ requestHeader: "x-cost", maxCost: 10 }), [entry])).to.deep.equal([
            { actions: hvm([digits, upTo]), hits_addend: { format: "%REQ(x-cost)%" } },
            { actions: hvm([digits, { ...upTo, invert_match: true }]), hits_addend: { number: 10 } },
            { actions: hvm([{ ...digits, invert_match: true, treat_missing_header_as_empty: true }]), hits_addend: { number: 1 } },
        ]);
    });

    const refused: [string, unknown, string, RegExp][] = [
        ["maxCost with a response cost", { responseHeader: "x-tokens-used", maxCost: 10 }, "applies only to requestHeader", /per client/],
        ["maxCost with a fixed cost", { fixed: 5, maxCost: 10 }, "applies only to requestHeader", /remove maxCost/],
        ["maxCost 0", { requestHeader: "x-cost", maxCost: 0 }, "must be a whole number from 1 to 999999999", /e\.g\. 10/],
        ["maxCost a fraction", { requestHeader: "x-cost", maxCost: 2.5 }, "must be a whole number from 1 to 999999999", /e\.g\. 10/],
        ["maxCost below missingCost", { requestHeader: "x-cost", missingCost: 20, maxCost: 10 }, "is below missingCost (20)", /at least 20/],
    ];
    for (const [what, cost, problem, fix] of refused) {
        it(`refuses ${what}, under rules[0].cost.maxCost`, () => {
            const ps = problemsOf(cost);
            expect(ps.map((p) => p.key)).to.deep.equal(["rules[0].cost.maxCost"]);
            expect(ps[0]!.problem).to.include(problem);
            expect(ps[0]!.fix).to.match(fix);
        });
    }

    it("control: maxCost 10 with a request header and the default missingCost is accepted", () => {
        expect(problemsOf({ requestHeader: "x-cost", maxCost: 10 })).to.deep.equal([]);
    });
});
