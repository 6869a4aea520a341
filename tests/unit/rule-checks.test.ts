/**
 * The rules' checks (components/rules/rule-checks.ts): each problem names the field path, the value and the
 * fix; every validation problem of a rule, exactly. Expected texts are written here, not read from
 * the code.
 */
import { expect } from "chai";
import { LimitUnit, PathKeyMode, PathSpellings, RateLimitRuleArgs } from "../../builders/rule-args";
import { pathRegex } from "../../builders/rules";
import { compileGlobalLimits, planGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { formatArgsProblems, Problem } from "../../lib/problems";

const M = LimitUnit.Minute;

describe("rules: validation names the field, the value and the fix", () => {
    const problemsOf = (rules: unknown[], extra: object = {}) => compileGlobalLimits({ rules: rules as RateLimitRuleArgs[], ...extra }).problems;
    const cases: [string, unknown[], string, RegExp][] = [
        [
            "two path kinds",
            [{ name: "a", path: { exact: "/a", prefix: "/b" }, requestsPerUnit: 1, unit: M }],
            "rules[0].path",
            /exactly one of exact, prefix, regex \(has exact, prefix\)/,
        ],
        ["prefix without /", [{ name: "a", path: { prefix: "api" }, requestsPerUnit: 1, unit: M }], "rules[0].path.prefix", /starting with '\/'/],
        [
            "exact with a query",
            [{ name: "a", path: { exact: "/a?x=1" }, requestsPerUnit: 1, unit: M }],
            "rules[0].path.exact",
            /without spaces, query or fragment/,
        ],
        ["bad regex", [{ name: "a", path: { regex: "/a(" }, requestsPerUnit: 1, unit: M }], "rules[0].path.regex", /not a valid RE2/],
        ["upper-case header", [{ name: "a", header: { name: "X-Key" }, requestsPerUnit: 1, unit: M }], "rules[0].header.name", /lower-case/],
        [":path header", [{ name: "a", header: { name: ":path" }, requestsPerUnit: 1, unit: M }], "rules[0].header.name", /query string/],
        [
            "value and perValue",
            [{ name: "a", header: { name: "x", value: "1", perValue: true }, requestsPerUnit: 1, unit: M }],
            "rules[0].header.perValue",
            /cannot be combined/,
        ],
        ["name with a slash", [{ name: "/a", requestsPerUnit: 1, unit: M }], "rules[0].name", /letters, digits/],
        ["route without name", [{ name: "a", route: { name: "" }, requestsPerUnit: 1, unit: M }], "rules[0].route.name", /must name a route/],
    ];
    for (const [name, rules, field, text] of cases) {
        it(name, () => {
            const p = problemsOf(rules);
            expect(
                p.map((x) => x.key),
                JSON.stringify(p),
            ).to.include(field);
            const hit = p.find((x) => x.key === field)!;
            expect(hit.problem).to.match(text);
            expect(hit.fix).to.be.a("string").and.not.equal("");
        });
    }
    it("duplicate names: the second rule is named, its index in the path", () => {
        const p = problemsOf([
            { name: "a", requestsPerUnit: 1, unit: M },
            { name: "b", requestsPerUnit: 1, unit: M },
            { name: "a", requestsPerUnit: 2, unit: M },
        ]);
        expect(p.map((x) => x.key)).to.deep.equal(["rules[2].name"]);
    });
    it("every problem is reported at once, and an invalid rule emits nothing", () => {
        const c = compileGlobalLimits({
            rules: [
                { name: "ok", requestsPerUnit: 1, unit: M },
                { name: "bad", path: { prefix: "x" }, requestsPerUnit: 0, unit: M },
            ] as RateLimitRuleArgs[],
        });
        expect(c.problems.map((x) => x.key)).to.deep.equal(["rules[1].path.prefix", "rules[1].requestsPerUnit"]);
        expect(c.configDescriptors.map((d) => d.value)).to.deep.equal(["ok"]);
    });
    it("per-path: duplicate paths and a path with a query are refused", () => {
        const p = compileGlobalLimits({
            perPath: {
                paths: [
                    { path: "/a", requestsPerUnit: 1, unit: M },
                    { path: "/a", requestsPerUnit: 2, unit: M },
                    { path: "/b?x", requestsPerUnit: 1, unit: M },
                ],
            },
        }).problems;
        expect(p.map((x) => x.key)).to.deep.equal(["perPath.paths[1].path", "perPath.paths[2].path"]);
    });
});

describe("rules: every validation problem, exactly (field, value, problem, fix)", () => {
    const R = (extra: object) => ({ name: "a", requestsPerUnit: 1, unit: M, ...extra });
    const UNIT_PROBLEM = "must be one of 'second', 'minute', 'hour', 'day', 'week', 'month', 'year'";
    const cases: [string, Parameters<typeof compileGlobalLimits>[0], Problem[]][] = [
        [
            "a rule that is not an object (and nothing else is checked for it)",
            { rules: [null, R({ name: "b" })] as any },
            [{ key: "rules[0]", value: null, problem: "must be an object", fix: "give { name, requestsPerUnit, unit, ... }" }],
        ],
        [
            "a name with a space",
            { rules: [R({ name: "a b" })] },
            [
                {
                    key: "rules[0].name",
                    value: "a b",
                    problem: "must be a non-empty name of letters, digits, '_', '.', '-' (it is the descriptor value)",
                    fix: 'name it e.g. "rule-0"',
                },
            ],
        ],
        [
            "a name used twice",
            { rules: [R({}), R({})] },
            [
                {
                    key: "rules[1].name",
                    value: "a",
                    problem: "is used by another rule; the service would merge their counters",
                    fix: "give every rule a distinct name",
                },
            ],
        ],
        [
            "path: null",
            { rules: [R({ path: null })] as any },
            [{ key: "rules[0].path", value: null, problem: "needs exactly one of exact, prefix, regex (has none)", fix: "keep one of them" }],
        ],
        [
            "path: {}",
            { rules: [R({ path: {} })] },
            [{ key: "rules[0].path", value: {}, problem: "needs exactly one of exact, prefix, regex (has none)", fix: "keep one of them" }],
        ],
        [
            "an empty regex",
            { rules: [R({ path: { regex: "" } })] },
            [
                {
                    key: "rules[0].path.regex",
                    value: "",
                    problem: "is not a valid RE2 regular expression (empty)",
                    fix: 'write an RE2 expression matching the whole path, e.g. "/items/[0-9]+"',
                },
            ],
        ],
        [
            "a regex that is not a string",
            { rules: [R({ path: { regex: 7 } })] as any },
            [
                {
                    key: "rules[0].path.regex",
                    value: 7,
                    problem: "is not a valid RE2 regular expression (empty)",
                    fix: 'write an RE2 expression matching the whole path, e.g. "/items/[0-9]+"',
                },
            ],
        ],
        [
            "a path with leading slashes and a query: the fix keeps one slash and drops the query",
            { rules: [R({ path: { exact: "//x?y" } })] },
            [
                {
                    key: "rules[0].path.exact",
                    value: "//x?y",
                    problem: "must be a path starting with '/', without spaces, query or fragment",
                    fix: 'use e.g. "/x"',
                },
            ],
        ],
        [
            "header: null",
            { rules: [R({ header: null })] as any },
            [{ key: "rules[0].header.name", value: undefined, problem: "must be a lower-case HTTP header name", fix: 'use "x-api-key"' }],
        ],
        [
            "a header name with capitals and a trailing space: the fix is its lower-case, trimmed form",
            { rules: [R({ header: { name: "X-Key " } })] },
            [{ key: "rules[0].header.name", value: "X-Key ", problem: "must be a lower-case HTTP header name", fix: 'use "x-key"' }],
        ],
        [
            "a header name that cannot be fixed by lower-casing",
            { rules: [R({ header: { name: "x key" } })] },
            [{ key: "rules[0].header.name", value: "x key", problem: "must be a lower-case HTTP header name", fix: 'use "x-api-key"' }],
        ],
        [
            "an empty header value",
            { rules: [R({ header: { name: "x-a", value: "" } })] },
            [
                {
                    key: "rules[0].header.value",
                    value: "",
                    problem: "must be a non-empty string",
                    fix: "omit value to match on presence, or give the exact value",
                },
            ],
        ],
        [
            "a header value that is not a string",
            { rules: [R({ header: { name: "x-a", value: 1 } })] as any },
            [
                {
                    key: "rules[0].header.value",
                    value: 1,
                    problem: "must be a non-empty string",
                    fix: "omit value to match on presence, or give the exact value",
                },
            ],
        ],
        [
            "value with perValue",
            { rules: [R({ header: { name: "x-a", value: "1", perValue: true } })] },
            [
                {
                    key: "rules[0].header.perValue",
                    value: true,
                    problem: "cannot be combined with header.value (one fixed value has one counter)",
                    fix: "remove rules[0].header.value, or remove rules[0].header.perValue",
                },
            ],
        ],
        [
            "route: null",
            { rules: [R({ route: null })] as any },
            [
                {
                    key: "rules[0].route.name",
                    value: undefined,
                    problem: "must name a route (VirtualService http[].name)",
                    fix: "set route.name to the route's name, or remove route",
                },
            ],
        ],
        [
            "a missing limit",
            { rules: [{ name: "a" }] as any },
            [
                { key: "rules[0].requestsPerUnit", value: undefined, problem: "must be a whole number", fix: "set rules[0].requestsPerUnit to 100" },
                { key: "rules[0].unit", value: undefined, problem: UNIT_PROBLEM, fix: 'set rules[0].unit to "minute"' },
            ],
        ],
        [
            "pathKey unknown",
            { rules: [R({})], pathKey: "query" as PathKeyMode },
            [{ key: "pathKey", value: "query", problem: "must be one of 'url-path', 'literal'", fix: 'set pathKey to "url-path"' }],
        ],
        [
            "ruleKey empty",
            { rules: [R({})], ruleKey: "" },
            [{ key: "ruleKey", value: "", problem: "must be a non-empty descriptor key of letters, digits, '_', '.', '-'", fix: 'use "rule"' }],
        ],
        [
            "ruleKey with a space",
            { rules: [R({})], ruleKey: "my key" },
            [{ key: "ruleKey", value: "my key", problem: "must be a non-empty descriptor key of letters, digits, '_', '.', '-'", fix: 'use "rule"' }],
        ],
        [
            "rules not a list",
            { rules: "a" as any },
            [{ key: "rules", value: "a", problem: "must be a list of rules", fix: "give [] or a list of { name, requestsPerUnit, unit, ... }" }],
        ],
        [
            "perPath.descriptorKey empty",
            { perPath: { descriptorKey: "", eachPath: { requestsPerUnit: 1, unit: M } } },
            [{ key: "perPath.descriptorKey", value: "", problem: "must be a non-empty descriptor key", fix: 'use "PATH"' }],
        ],
        [
            "perPath.descriptorKey with a space",
            { perPath: { descriptorKey: "a b", eachPath: { requestsPerUnit: 1, unit: M } } },
            [{ key: "perPath.descriptorKey", value: "a b", problem: "must be a non-empty descriptor key", fix: 'use "PATH"' }],
        ],
        [
            "perPath without paths or eachPath",
            { perPath: {} },
            [{ key: "perPath", value: {}, problem: "limits nothing (no paths and no eachPath)", fix: "give paths and/or eachPath, or remove perPath" }],
        ],
        [
            "perPath with an empty path list",
            { perPath: { paths: [] } },
            [
                {
                    key: "perPath",
                    value: { paths: [] },
                    problem: "limits nothing (no paths and no eachPath)",
                    fix: "give paths and/or eachPath, or remove perPath",
                },
            ],
        ],
        [
            "a per-path entry that is null",
            { perPath: { paths: [null] } } as any,
            [
                {
                    key: "perPath.paths[0].path",
                    value: undefined,
                    problem: "must be a path starting with '/', without spaces, query or fragment",
                    fix: 'use e.g. "/"',
                },
                {
                    key: "perPath.paths[0].requestsPerUnit",
                    value: undefined,
                    problem: "must be a whole number",
                    fix: "set perPath.paths[0].requestsPerUnit to 100",
                },
                { key: "perPath.paths[0].unit", value: undefined, problem: UNIT_PROBLEM, fix: 'set perPath.paths[0].unit to "minute"' },
            ],
        ],
        [
            "a per-path entry twice",
            {
                perPath: {
                    paths: [
                        { path: "/a", requestsPerUnit: 1, unit: M },
                        { path: "/a", requestsPerUnit: 2, unit: M },
                    ],
                },
            },
            [
                {
                    key: "perPath.paths[1].path",
                    value: "/a",
                    problem: "appears twice; the service rejects duplicate descriptors",
                    fix: "remove one of the two entries",
                },
            ],
        ],
        [
            "a bad eachPath limit",
            { perPath: { eachPath: { requestsPerUnit: 0, unit: M } } },
            [{ key: "perPath.eachPath.requestsPerUnit", value: 0, problem: "must be at least 1", fix: "set perPath.eachPath.requestsPerUnit to 1" }],
        ],
        [
            "ruleKey equal to the per-path key with a nested rule",
            { rules: [R({ perClientAddress: true })], ruleKey: "PATH", perPath: { eachPath: { requestsPerUnit: 1, unit: M } } },
            [
                {
                    key: "ruleKey",
                    value: "PATH",
                    problem: "equals perPath.descriptorKey, so rule 'a' (nested descriptors) would share the key with the per-path counters",
                    fix: 'use a different ruleKey, e.g. "rule"',
                },
            ],
        ],
        [
            "ruleKey equal to the per-path key with a header-per-value rule (reported once)",
            {
                rules: [R({ header: { name: "x-a", perValue: true } }), R({ name: "b", perClientAddress: true })],
                ruleKey: "PATH",
                perPath: { eachPath: { requestsPerUnit: 1, unit: M } },
            },
            [
                {
                    key: "ruleKey",
                    value: "PATH",
                    problem: "equals perPath.descriptorKey, so rule 'a' (nested descriptors) would share the key with the per-path counters",
                    fix: 'use a different ruleKey, e.g. "rule"',
                },
            ],
        ],
        [
            "ruleKey equal to the per-path key with flat rules only: allowed",
            { rules: [R({ path: { exact: "/x" } })], ruleKey: "PATH", perPath: { eachPath: { requestsPerUnit: 1, unit: M } } },
            [],
        ],
        ["distinct keys with a nested rule: allowed", { rules: [R({ perClientAddress: true })], perPath: { eachPath: { requestsPerUnit: 1, unit: M } } }, []],
        ["ruleKey equal to the per-path key without perPath: allowed", { rules: [R({ perClientAddress: true })], ruleKey: "PATH" }, []],
    ];
    for (const [name, input, want] of cases) {
        it(name, () => {
            expect(compileGlobalLimits(input).problems.map(({ fixWith: _f, problemWith: _p, ...p }) => p)).to.deep.equal(want);
        });
    }

    it("rules on the same route share one patch; the same route name on another virtual host gets its own", () => {
        const c = compileGlobalLimits({
            rules: [
                R({ name: "a", route: { name: "r", virtualHost: "*:80" } }),
                R({ name: "b", route: { name: "r", virtualHost: "*:80" } }),
                R({ name: "c", route: { name: "r", virtualHost: "*:8080" } }),
                R({ name: "d", route: { name: "s", virtualHost: "*:80" } }),
            ],
        });
        expect(c.routePatches.map((p) => [p.virtualHost, p.route, p.rateLimits.length])).to.deep.equal([
            ["*:80", "r", 2],
            ["*:8080", "r", 1],
            ["*:80", "s", 1],
        ]);
    });

    it("a literal-mode prefix without a trailing slash matches the prefix and what follows a '/'", () => {
        expect(pathRegex({ prefix: "/a" }, PathKeyMode.Literal)).to.equal("/a(?:/.*)?");
        expect(pathRegex({ prefix: "/a", spellings: PathSpellings.Exact }, PathKeyMode.UrlPath)).to.equal("/a(?:[/?].*)?");
    });

    it("formatArgsProblems: one line per problem with the value as JSON or (not set), the fix below it, singular and plural", () => {
        const one: Problem = {
            key: "rules[0].unit",
            value: undefined,
            problem: "must be one of second, minute, hour, day, week, month, year",
            fix: "use LimitUnit.Minute",
        };
        const two: Problem = { key: "domain", value: "a b", problem: "bad", fix: 'use "a-b"' };
        expect(formatArgsProblems("GlobalRateLimit x", [one])).to.equal(
            "GlobalRateLimit x: invalid arguments (1 problem); nothing was created:\n  - rules[0].unit = (not set): must be one of second, minute, hour, day, week, month, year\n    fix: use LimitUnit.Minute",
        );
        expect(formatArgsProblems("C", [one, two])).to.equal(
            'C: invalid arguments (2 problems); nothing was created:\n  - rules[0].unit = (not set): must be one of second, minute, hour, day, week, month, year\n    fix: use LimitUnit.Minute\n  - domain = "a b": bad\n    fix: use "a-b"',
        );
    });
});

describe("rules: each limit resolved once (components/rules/rule-checks.ts resolveLimit)", () => {
    it("a rule, a named path and every other path: requests, unit, the window in seconds and shadow filled in; the given field left behind", () => {
        const { plan, problems } = planGlobalLimits({
            rules: [{ name: "a", path: { prefix: "/a" }, requestsPerUnit: 5, unit: LimitUnit.Hour, rateLimitHeaders: false }],
            perPath: {
                paths: [{ path: "/p", requestsPerUnit: 2, unit: M, shadow: true }],
                eachPath: { requestsPerUnit: 9, unit: LimitUnit.Day },
            },
        });
        expect(problems).to.deep.equal([]);
        expect(plan.rules).to.deep.equal([
            { name: "a", path: { prefix: "/a" }, rateLimitHeaders: false, requests: 5, unit: "hour", seconds: 3600, shadow: false },
        ]);
        expect(plan.perPath).to.deep.equal({
            key: "PATH",
            paths: [{ path: "/p", requests: 2, unit: "minute", seconds: 60, shadow: true }],
            eachPath: { requests: 9, unit: "day", seconds: 86400, shadow: false },
        });
    });
});
