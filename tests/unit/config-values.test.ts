/**
 * Each config key's values, key by key (the JSON-valued keys, routes and descriptors, included),
 * through `resolveSettings`: one key changed from the dev stack's
 * config, the WHOLE problem list compared, each fix applied and the config then accepted; and the
 * values each key accepts. Expected texts are written here, not read from the code.
 */
import { expect } from "chai";
import { InputError } from "../../lib/problems";
import { RawConfig } from "../../program/config-problems";
import { planOfConfig, resolveSettings } from "../../program/config-args";
import {
    API_ROUTE,
    BASE,
    BOOL,
    D,
    DESC_FIX,
    GO,
    INT,
    LABEL,
    NEEDS,
    P,
    PATH,
    Plain,
    problemsOf,
    PROTO,
    ROUTES_FIX,
    STYLE,
    SUBDOMAIN,
    WINDOW_CLUSTER_ONLY,
    withFixesApplied,
} from "./stack-config-fixtures";

interface Case {
    name: string;
    set: RawConfig;
    problems: Plain[];
}

const s = (k: string, v: string) => `pulumi config set ${k} ${v}`;

const READER_CASES: Case[] = [
    // oneOf: the closest allowed value, the value as given (trimmed)
    { name: "variant ' b ' (case)", set: { variant: " b " }, problems: [P("variant", "b", "must be one of 'A', 'B'", s("variant", "B"))] },
    {
        name: "variant C: A is assumed, so apiLimit stays allowed",
        set: { variant: "C", apiLimit: "3" },
        problems: [P("variant", "C", "must be one of 'A', 'B'", s("variant", "A"))],
    },
    { name: "apiProfile SEED", set: { apiProfile: "SEED" }, problems: [P("apiProfile", "SEED", "must be one of 'current', 'seed'", s("apiProfile", "seed"))] },
    {
        name: "unit Minutes",
        set: { unit: "Minutes" },
        problems: [P("unit", "Minutes", "must be one of 'second', 'minute', 'hour', 'day', 'week', 'month', 'year'", s("unit", "minute"))],
    },
    {
        name: "pathKey url_path",
        set: { pathKey: "url_path" },
        problems: [P("pathKey", "url_path", "must be one of 'url-path', 'literal'", s("pathKey", "url-path"))],
    },
    {
        name: "pathKey LITERAL",
        set: { pathKey: "LITERAL" },
        problems: [P("pathKey", "LITERAL", "must be one of 'url-path', 'literal'", s("pathKey", "literal"))],
    },
    {
        name: "log level warning",
        set: { ratelimitLogLevel: "warning" },
        problems: [P("ratelimitLogLevel", "warning", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "warn"))],
    },
    {
        name: "log level ERROR",
        set: { ratelimitLogLevel: "ERROR" },
        problems: [P("ratelimitLogLevel", "ERROR", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "error"))],
    },
    {
        name: "log level trace: the default",
        set: { ratelimitLogLevel: "trace" },
        problems: [P("ratelimitLogLevel", "trace", "must be one of 'warn', 'debug', 'info', 'error'", s("ratelimitLogLevel", "warn"))],
    },
    {
        name: "placement all",
        set: { localPlacement: "all" },
        problems: [P("localPlacement", "all", "must be one of 'all-routes', 'single-route'", s("localPlacement", "all-routes"))],
    },
    { name: "port mode TCP", set: { espPortMode: "TCP" }, problems: [P("espPortMode", "TCP", "must be one of 'http', 'tcp'", s("espPortMode", "tcp"))] },

    // int: a fraction → the nearest whole number within the range; not a number → the default
    { name: "limit ' 1.5 '", set: { limitedPathLimit: " 1.5 " }, problems: [P("limitedPathLimit", "1.5", INT, s("limitedPathLimit", "2"))] },
    { name: "limit 0.4 rounds to 0, clamped to 1", set: { catchAllLimit: "0.4" }, problems: [P("catchAllLimit", "0.4", INT, s("catchAllLimit", "1"))] },
    { name: "limit -2.5, clamped to 1", set: { catchAllLimit: "-2.5" }, problems: [P("catchAllLimit", "-2.5", INT, s("catchAllLimit", "1"))] },
    { name: "port 70000.7, clamped to 65535", set: { gatewayPort: "70000.7" }, problems: [P("gatewayPort", "70000.7", INT, s("gatewayPort", "65535"))] },
    { name: "port http: the default", set: { localServicePort: "http" }, problems: [P("localServicePort", "http", INT, s("localServicePort", "9080"))] },
    { name: "replicas two: the default", set: { ratelimitReplicas: "two" }, problems: [P("ratelimitReplicas", "two", INT, s("ratelimitReplicas", "2"))] },
    { name: "bucket many: the variant's default", set: { localBucket: "many" }, problems: [P("localBucket", "many", INT, s("localBucket", "4"))] },
    {
        name: "cache size 1e3: the number it writes",
        set: { localCacheSizeInBytes: "1e3" },
        problems: [P("localCacheSizeInBytes", "1e3", INT, s("localCacheSizeInBytes", "1000"))],
    },
    { name: "pool size Infinity: the default", set: { redisPoolSize: "Infinity" }, problems: [P("redisPoolSize", "Infinity", INT, s("redisPoolSize", "10"))] },
    {
        name: "port beyond the safe integers: the maximum",
        set: { gatewayPort: "99999999999999999999" },
        problems: [P("gatewayPort", "99999999999999999999", INT, s("gatewayPort", "65535"))],
    },
    { name: "limit 0", set: { limitedPathLimit: "0" }, problems: [P("limitedPathLimit", "0", "must be at least 1", s("limitedPathLimit", "1"))] },
    {
        name: "pipeline limit -1",
        set: { redisPipelineLimit: "-1" },
        problems: [P("redisPipelineLimit", "-1", "must be at least 0", s("redisPipelineLimit", "0"))],
    },
    {
        name: "cache size -5",
        set: { localCacheSizeInBytes: "-5" },
        problems: [P("localCacheSizeInBytes", "-5", "must be at least 0", s("localCacheSizeInBytes", "0"))],
    },
    { name: "port 65536", set: { gatewayPort: "65536" }, problems: [P("gatewayPort", "65536", "must be between 1 and 65535", s("gatewayPort", "65535"))] },
    { name: "port 0", set: { localServicePort: "0" }, problems: [P("localServicePort", "0", "must be between 1 and 65535", s("localServicePort", "1"))] },
    {
        name: "replicas 101",
        set: { ratelimitReplicas: "101" },
        problems: [P("ratelimitReplicas", "101", "must be between 1 and 100", s("ratelimitReplicas", "100"))],
    },
    {
        name: "bucket 1000000001",
        set: { localBucket: "1000000001" },
        problems: [P("localBucket", "1000000001", "must be between 1 and 1000000000", s("localBucket", "1000000000"))],
    },
    {
        name: "pool size 10001",
        set: { redisPoolSize: "10001" },
        problems: [P("redisPoolSize", "10001", "must be between 1 and 10000", s("redisPoolSize", "10000"))],
    },
    { name: "pool size 0", set: { redisPoolSize: "0" }, problems: [P("redisPoolSize", "0", "must be between 1 and 10000", s("redisPoolSize", "1"))] },

    // bool: yes/y/on/1 → true, no/n/off/0 → false (any case), anything else → the key's default
    ...["yes", "Y", "ON", "1"].map((v): Case => ({
        name: `shadowMode ${v}`,
        set: { shadowMode: v },
        problems: [P("shadowMode", v, BOOL, s("shadowMode", "true"))],
    })),
    ...["no", "N", "Off", "0"].map((v): Case => ({
        name: `failureModeDeny ${v}`,
        set: { failureModeDeny: v },
        problems: [P("failureModeDeny", v, BOOL, s("failureModeDeny", "false"))],
    })),
    {
        name: "failureModeDeny maybe: its default true",
        set: { failureModeDeny: "maybe" },
        problems: [P("failureModeDeny", "maybe", BOOL, s("failureModeDeny", "true"))],
    },
    {
        name: "prometheus maybe: its default false",
        set: { ratelimitPrometheus: "Maybe" },
        problems: [P("ratelimitPrometheus", "Maybe", BOOL, s("ratelimitPrometheus", "false"))],
    },
    { name: "awaitRollout 2: its default true", set: { awaitRollout: "2" }, problems: [P("awaitRollout", "2", BOOL, s("awaitRollout", "true"))] },
    {
        name: "managedApi maybe: read as its default (true), so the managed-API keys are checked as well",
        set: { managedApi: "maybe", includeIpRanges: undefined, espServiceName: undefined },
        problems: [
            P("managedApi", "maybe", BOOL, s("managedApi", "true")),
            P(
                "includeIpRanges",
                undefined,
                "is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)",
                "pulumi config set includeIpRanges 10.4.0.0/14,10.7.240.0/20   (your cluster's pod and service CIDRs), or pulumi config set managedApi false",
            ),
            P(
                "espServiceName",
                undefined,
                "is required: ESP needs the Cloud Endpoints service it serves (--service)",
                "pulumi config set espServiceName echo-api.endpoints.MY_PROJECT.cloud.goog, or pulumi config set managedApi false",
            ),
        ],
    },

    // path: a leading '/', no white space
    {
        name: "limitedPath productpage",
        set: { limitedPath: "productpage" },
        problems: [P("limitedPath", "productpage", PATH, s("limitedPath", "/productpage"))],
    },
    { name: "pagePath '///a b'", set: { pagePath: "///a b" }, problems: [P("pagePath", "///a b", PATH, s("pagePath", "/ab"))] },
    {
        name: "staticPrefix with a space",
        set: { staticPrefix: "/static files" },
        problems: [P("staticPrefix", "/static files", PATH, s("staticPrefix", "/staticfiles"))],
    },
    { name: "logoutPath with a tab", set: { logoutPath: "/log\tout" }, problems: [P("logoutPath", "/log\tout", PATH, s("logoutPath", "/logout"))] },
    { name: "loginPath 'log  in'", set: { loginPath: "log  in" }, problems: [P("loginPath", "log  in", PATH, s("loginPath", "/login"))] },
    { name: "ingressPath echo", set: { ingressPath: "echo" }, problems: [P("ingressPath", "echo", PATH, s("ingressPath", "/echo"))] },

    // protoDuration (its conversions: field-rules.test.ts): each key's own default and minimum
    { name: "timeout soon: its default", set: { rateLimitTimeout: "soon" }, problems: [P("rateLimitTimeout", "soon", PROTO, s("rateLimitTimeout", "10s"))] },
    {
        name: "timeout 0s",
        set: { rateLimitTimeout: "0s" },
        problems: [P("rateLimitTimeout", "0s", "must be at least 0.001s", s("rateLimitTimeout", "0.001s"))],
    },
    {
        name: "fill interval -1s: its default",
        set: { localFillInterval: "-1s" },
        problems: [P("localFillInterval", "-1s", PROTO, s("localFillInterval", "60s"))],
    },
    {
        name: "fill interval 0.049999999s",
        set: { localFillInterval: "0.049999999s" },
        problems: [P("localFillInterval", "0.049999999s", "must be at least 0.05s", s("localFillInterval", "0.05s"))],
    },

    // goDuration: white space removed when that makes one, else the key's default
    {
        name: "pipeline window '150 us' with Redis Cluster",
        set: { redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: "150 us" },
        problems: [P("redisPipelineWindow", "150 us", GO, s("redisPipelineWindow", "150us"))],
    },
    {
        name: "pipeline window '150 us' with the in-cluster Redis: both problems in one round",
        set: { redisPipelineWindow: "150 us" },
        problems: [
            P("redisPipelineWindow", "150 us", GO, s("redisPipelineWindow", "150us")),
            P("redisPipelineWindow", "150 us", WINDOW_CLUSTER_ONLY, "pulumi config rm redisPipelineWindow, or pulumi config set redisMode cluster"),
        ],
    },
    {
        name: "pipeline window abc: the default 0 (150us is refused without Redis Cluster)",
        set: { redisPipelineWindow: "abc" },
        problems: [P("redisPipelineWindow", "abc", GO, s("redisPipelineWindow", "0"))],
    },
    {
        name: "pipeline window 1d with Redis Cluster: the default 0",
        set: { redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: "1d" },
        problems: [P("redisPipelineWindow", "1d", GO, s("redisPipelineWindow", "0"))],
    },

    // json
    ...[
        ["descriptors", "[{key: PATH}]"],
        ["virtualServiceRoutes", "{"],
    ].map(([k, v]): Case => {
        let message = "";
        try {
            JSON.parse(v);
        } catch (e) {
            message = (e as Error).message;
        }
        return {
            name: `${k} ${v}`,
            set: { [k]: v },
            problems: [
                P(k, v, `is not valid JSON (${message})`, `pulumi config set ${k} '<json>' (docs/configuration.md gives the shape), or pulumi config rm ${k}`),
            ],
        };
    }),

    // dnsName
    {
        name: "meshNamespace Istio.System",
        set: { meshNamespace: "Istio.System" },
        problems: [P("meshNamespace", "Istio.System", LABEL, s("meshNamespace", "istio-system"))],
    },
    {
        name: "gatewayName Book_Info.GW",
        set: { gatewayName: "Book_Info.GW" },
        problems: [P("gatewayName", "Book_Info.GW", SUBDOMAIN, s("gatewayName", "book-info.gw"))],
    },
];

const VSR = "virtualServiceRoutes";
const ROUTE_CASES: Case[] = [
    {
        name: "an object, not a list",
        set: { [VSR]: '{"exact":["/a"]}' },
        problems: [P(VSR, '{"exact":["/a"]}', "must be a non-empty JSON list of routes", ROUTES_FIX)],
    },
    { name: "an empty list", set: { [VSR]: " [] " }, problems: [P(VSR, "[]", "must be a non-empty JSON list of routes", ROUTES_FIX)] },
    // No route is left: the default routes stand, so the api route is not reported missing as well.
    { name: "an entry that is a number", set: { [VSR]: " [1] " }, problems: [P(VSR, "[1]", NEEDS(1), ROUTES_FIX)] },
    { name: "an entry that is null", set: { [VSR]: "[null]" }, problems: [P(VSR, "[null]", NEEDS(1), ROUTES_FIX)] },
    { name: "an entry that is a list", set: { [VSR]: '[["/a"]]' }, problems: [P(VSR, '[["/a"]]', NEEDS(1), ROUTES_FIX)] },
    ...[
        '{"exact":"/productpage"}',
        '{"exact":["productpage"]}',
        '{"prefix":[7]}',
        '{"exact":[],"prefix":[]}',
        '{"name":"main"}',
        '{"exact":["/a"],"prefix":"/b"}',
    ].map((bad): Case => ({
        name: `second route ${bad}`,
        set: { [VSR]: `[${API_ROUTE},${bad}]` },
        problems: [P(VSR, `[${API_ROUTE},${bad}]`, NEEDS(2), ROUTES_FIX)],
    })),
    ...['{"name":"","exact":["/p"]}', '{"name":5,"exact":["/p"]}', '{"name":null,"exact":["/p"]}'].map((bad): Case => ({
        name: `second route ${bad}`,
        set: { [VSR]: `[${API_ROUTE},${bad}]` },
        problems: [P(VSR, `[${API_ROUTE},${bad}]`, "route #2 has an invalid 'name'", ROUTES_FIX)],
    })),
    {
        name: "a name used twice",
        set: { [VSR]: '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]' },
        problems: [
            P(VSR, '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]', "route name 'api' appears twice", "give every route a distinct name"),
        ],
    },
];

const DS = "descriptors";
const DESCRIPTOR_CASES: Case[] = [
    { name: "an object, not a list", set: { [DS]: D("") }, problems: [P(DS, D(""), "must be a non-empty JSON list of descriptors", DESC_FIX)] },
    { name: "an empty list", set: { [DS]: "[]" }, problems: [P(DS, "[]", "must be a non-empty JSON list of descriptors", DESC_FIX)] },
    ...["1", "null", '"PATH"'].map((e): Case => ({
        name: `an entry ${e}`,
        set: { [DS]: `[${D("")},${e}]` },
        problems: [P(DS, `[${D("")},${e}]`, `descriptor #2 is not an object`, DESC_FIX)],
    })),
    {
        name: "unknown fields",
        set: { [DS]: `[${D(',"limit":5,"x":1')}]` },
        problems: [P(DS, `[${D(',"limit":5,"x":1')}]`, "descriptor #1 has unknown field(s) limit, x", "allowed fields: key, value, unit, requestsPerUnit")],
    },
    ...['{"unit":"minute","requestsPerUnit":1}', '{"key":"","unit":"minute","requestsPerUnit":1}', '{"key":5,"unit":"minute","requestsPerUnit":1}'].map(
        (d): Case => ({
            name: `key missing or empty: ${d}`,
            set: { [DS]: `[${d}]` },
            problems: [P(DS, `[${d}]`, "descriptor #1 has an empty or missing 'key'", 'set "key":"PATH"')],
        }),
    ),
    {
        name: "a key the gateway never sends",
        set: { [DS]: '[{"key":"path","unit":"minute","requestsPerUnit":1}]' },
        problems: [
            P(
                DS,
                '[{"key":"path","unit":"minute","requestsPerUnit":1}]',
                "descriptor #1 uses key 'path', but the gateway filters only send 'PATH': it would never match",
                'set "key":"PATH"',
            ),
        ],
    },
    ...[',"value":""', ',"value":5', ',"value":null'].map((f): Case => ({
        name: `value${f}`,
        set: { [DS]: `[${D(f)}]` },
        problems: [P(DS, `[${D(f)}]`, "descriptor #1 has an empty or non-string 'value'", "omit 'value' for the catch-all, or give a non-empty string")],
    })),
    ...[
        ['{"key":"PATH","unit":"minutes","requestsPerUnit":1}', 'unit "minutes"'],
        ['{"key":"PATH","unit":"Minute","requestsPerUnit":1}', 'unit "Minute"'],
        ['{"key":"PATH","requestsPerUnit":1}', "unit undefined"],
    ].map(([d, what]): Case => ({
        name: `bad ${what}`,
        set: { [DS]: `[${d}]` },
        problems: [P(DS, `[${d}]`, `descriptor #1 has ${what}`, "use one of second, minute, hour, day, week, month, year")],
    })),
    ...[
        ["0", "0"],
        ["-1", "-1"],
        ["1.5", "1.5"],
        ['"5"', '"5"'],
    ].map(([n, shown]): Case => ({
        name: `requestsPerUnit ${n}`,
        set: { [DS]: `[{"key":"PATH","unit":"minute","requestsPerUnit":${n}}]` },
        problems: [
            P(DS, `[{"key":"PATH","unit":"minute","requestsPerUnit":${n}}]`, `descriptor #1 has requestsPerUnit ${shown}`, "use a whole number of at least 1"),
        ],
    })),
    {
        name: "requestsPerUnit missing",
        set: { [DS]: '[{"key":"PATH","unit":"minute"}]' },
        problems: [P(DS, '[{"key":"PATH","unit":"minute"}]', "descriptor #1 has requestsPerUnit undefined", "use a whole number of at least 1")],
    },
    {
        name: "a value twice",
        set: { [DS]: `[${D(',"value":"/a"')},${D(',"value":"/a"')}]` },
        problems: [
            P(
                DS,
                `[${D(',"value":"/a"')},${D(',"value":"/a"')}]`,
                "descriptor #2 duplicates 'PATH=/a'; the rate-limit service rejects duplicate descriptors",
                "remove one of the two entries",
            ),
        ],
    },
    {
        name: "the catch-all twice",
        set: { [DS]: `[${D("")},${D("")}]` },
        problems: [
            P(
                DS,
                `[${D("")},${D("")}]`,
                "descriptor #2 duplicates the catch-all for 'PATH'; the rate-limit service rejects duplicate descriptors",
                "remove one of the two entries",
            ),
        ],
    },
    {
        name: "every problem of one descriptor at once, in order",
        set: { [DS]: '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]' },
        problems: [
            P(
                DS,
                '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has unknown field(s) x",
                "allowed fields: key, value, unit, requestsPerUnit",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]',
                "descriptor #1 uses key 'path', but the gateway filters only send 'PATH': it would never match",
                'set "key":"PATH"',
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has an empty or non-string 'value'",
                "omit 'value' for the catch-all, or give a non-empty string",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]',
                'descriptor #1 has unit "fortnight"',
                "use one of second, minute, hour, day, week, month, year",
            ),
            P(
                DS,
                '[{"key":"path","value":"","unit":"fortnight","requestsPerUnit":0,"x":1}]',
                "descriptor #1 has requestsPerUnit 0",
                "use a whole number of at least 1",
            ),
        ],
    },
];

function caseTest(c: Case) {
    it(c.name, () => {
        const got = problemsOf(c.set);
        expect(got).to.deep.equal(c.problems);
        // A fix that is one plain command must be accepted once applied.
        const fixed = withFixesApplied(c.set, got);
        if (fixed) expect(problemsOf(fixed), `after applying ${got.map((p) => p.fix).join("; ")}`).to.deep.equal([]);
    });
}

describe("stack config values: one key changed (whole problem list)", () => {
    for (const c of READER_CASES) caseTest(c);

    it("every problem's fix is also phrased in another style", () => {
        const err = (() => {
            try {
                resolveSettings({
                    ...BASE,
                    unit: "hours",
                    gatewayPort: "0",
                    shadowMode: "on",
                    pagePath: "p",
                    localFillInterval: "60",
                    redisPipelineWindow: "x",
                    descriptors: "[",
                    meshNamespace: "A",
                });
            } catch (e) {
                return e as InputError;
            }
            throw new Error("accepted");
        })();
        // Text that is no JSON is refused where config is read, before the arguments are checked: first.
        expect(err.problems.map((p) => p.fixWith!(STYLE))).to.deep.equal([
            "SET descriptors=<json> (docs/configuration.md gives the shape), or RM descriptors",
            "SET pagePath=/p",
            "SET unit=hour",
            "SET localFillInterval=60s",
            "SET meshNamespace=a",
            "SET gatewayPort=1",
            "SET redisPipelineWindow=0",
            "SET shadowMode=true",
        ]);
    });
});

describe("stack config values: accepted values", () => {
    it("booleans in any case", () => {
        const t = resolveSettings({
            ...BASE,
            failureModeDeny: "FALSE",
            shadowMode: "True",
            mutualTls: "fAlSe",
            awaitRollout: "TRUE",
            ratelimitPrometheus: "true",
            accessPolicies: "False",
        });
        expect([t.global.failureModeDeny, t.ratelimit.shadowMode, t.mesh.mutualTls, t.awaitRollout, t.ratelimit.prometheus, t.access.enabled]).to.deep.equal([
            false,
            true,
            false,
            true,
            true,
            false,
        ]);
        const d = resolveSettings(BASE);
        expect([d.global.failureModeDeny, d.ratelimit.shadowMode, d.mesh.mutualTls, d.awaitRollout, d.ratelimit.prometheus, d.access.enabled]).to.deep.equal([
            true,
            false,
            true,
            true,
            false,
            true,
        ]);
        expect(resolveSettings({ ...BASE, managedApi: "FALSE" }).managedApi).to.equal(undefined);
    });

    it("whole numbers at both ends of their range, with surrounding spaces", () => {
        const lo = resolveSettings({
            ...BASE,
            limitedPathLimit: " 1 ",
            gatewayPort: "1",
            ratelimitReplicas: "1",
            localBucket: "1",
            redisPipelineLimit: "0",
            localCacheSizeInBytes: "0",
            redisPoolSize: "1",
            localServicePort: "1",
        });
        expect([
            lo.global.descriptors[0].requestsPerUnit,
            lo.bookinfo.gatewayPort,
            lo.ratelimit.replicas,
            lo.local.bucket,
            lo.ratelimit.redisPipelineLimit,
            lo.ratelimit.localCacheSizeInBytes,
            lo.ratelimit.redisPoolSize,
            lo.local.port,
        ]).to.deep.equal([1, 1, 1, 1, 0, 0, 1, 1]);
        const hi = resolveSettings({
            ...BASE,
            gatewayPort: "65535",
            ratelimitReplicas: "100",
            localBucket: "1000000000",
            redisPoolSize: "10000",
            localServicePort: "65535",
            ratelimitGrpcPort: "65535",
        });
        expect([
            hi.bookinfo.gatewayPort,
            hi.ratelimit.replicas,
            hi.local.bucket,
            hi.ratelimit.redisPoolSize,
            hi.local.port,
            hi.ratelimit.grpcPort,
        ]).to.deep.equal([65535, 100, 1000000000, 10000, 65535, 65535]);
    });

    it("unset, empty or blank values are the defaults (the variant's where it has one)", () => {
        for (const blank of [undefined, "", "   "]) {
            const a = resolveSettings({
                ...BASE,
                domain: blank,
                unit: blank,
                limitedPath: blank,
                localBucket: blank,
                apiLimit: blank,
                catchAllLimit: blank,
                localFillInterval: blank,
                redisPipelineWindow: blank,
                failureModeDeny: blank,
            });
            expect(a.global.domain).to.equal("ratelimit");
            expect(a.global.descriptors.map((d) => [d.key, d.value, d.unit, d.requestsPerUnit])).to.deep.equal([
                ["PATH", "/productpage", "minute", 1],
                ["PATH", "api", "minute", 2],
                ["PATH", undefined, "minute", 100],
            ]);
            expect([a.local.bucket, a.local.fillInterval, a.ratelimit.redisPipelineWindow, a.global.failureModeDeny]).to.deep.equal([4, "60s", "0", true]);
            const b = resolveSettings({ ...BASE, variant: "B", domain: blank, localBucket: blank });
            expect([b.global.domain, b.local.bucket]).to.deep.equal(["productpage-ratelimit", 10]);
        }
    });

    it("values are trimmed", () => {
        const p = planOfConfig({ ...BASE, variant: " B ", limitedPath: "  /x  ", unit: " hour ", rateLimitTimeout: " 0.5s " });
        const t = p.settings;
        // The gateway's timeout is GlobalRateLimit's: the plan passes it on as read.
        expect([t.variant, t.paths.limited, t.global.descriptors[0].unit, p.global.args.timeout]).to.deep.equal(["B", "/x", "hour", "0.5s"]);
    });

    it("durations at their minimum, Go durations in every unit", () => {
        const p = planOfConfig({ ...BASE, localFillInterval: "0.05s", rateLimitTimeout: "0.001s" });
        expect([p.settings.local.fillInterval, p.global.args.timeout]).to.deep.equal(["0.05s", "0.001s"]);
        for (const w of ["0", "150us", "2ms", "1µs", "1h2m3.5s", "10ns"]) {
            expect(
                resolveSettings({ ...BASE, redisMode: "cluster", redisAddress: "n0:6379", redisPipelineWindow: w }).ratelimit.redisPipelineWindow,
                w,
            ).to.equal(w);
        }
    });

    it("include ranges: IPv4 and IPv6 CIDRs, spaces around commas", () => {
        expect(resolveSettings({ ...BASE, includeIpRanges: " 10.4.0.0/14 , fd00::/8 ," }).managedApi!.includeIpRanges).to.deep.equal([
            "10.4.0.0/14",
            "fd00::/8",
        ]);
        expect(problemsOf({ includeIpRanges: "10.4.0.0/14,10.0.0.0/08" })).to.deep.equal([
            P(
                "includeIpRanges",
                "10.4.0.0/14,10.0.0.0/08",
                "has invalid CIDR(s): 10.0.0.0/08",
                "pulumi config set includeIpRanges 10.4.0.0/14,10.7.240.0/20   (your cluster's pod and service CIDRs)",
            ),
        ]);
    });
});

describe("stack config values: virtualServiceRoutes, whole problem list", () => {
    for (const c of ROUTE_CASES) caseTest(c);

    it("accepted routes are used as written; a route's name is optional", () => {
        const b = resolveSettings({ ...BASE, variant: "B", [VSR]: '[{"exact":["/a"]},{"name":"x","prefix":["/b","/c"]}]' });
        expect(b.bookinfo.routes).to.deep.equal([
            { name: undefined, exact: ["/a"], prefix: [] },
            { name: "x", exact: [], prefix: ["/b", "/c"] },
        ]);
        const a = resolveSettings({ ...BASE, [VSR]: `[{"name":"main","exact":["/productpage"]},${API_ROUTE}]` });
        expect(a.bookinfo.routes).to.deep.equal([
            { name: "main", exact: ["/productpage"], prefix: [] },
            { name: "api", exact: [], prefix: ["/api/v1/products"] },
        ]);
    });
});

describe("stack config values: descriptors, whole problem list", () => {
    for (const c of DESCRIPTOR_CASES) caseTest(c);

    it("accepted descriptors are used as written, the catch-all without a value", () => {
        const t = resolveSettings({
            ...BASE,
            [DS]: '[{"key":"PATH","value":"/a","unit":"second","requestsPerUnit":3},{"key":"PATH","value":"/b","unit":"hour","requestsPerUnit":1},{"key":"PATH","unit":"day","requestsPerUnit":1000}]',
        });
        expect(t.global.descriptors.map((d) => [d.key, d.value, d.unit, d.requestsPerUnit])).to.deep.equal([
            ["PATH", "/a", "second", 3],
            ["PATH", "/b", "hour", 1],
            ["PATH", undefined, "day", 1000],
        ]);
    });
});
