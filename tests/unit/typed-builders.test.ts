/**
 * The builders write typed Envoy and Istio objects (builders/envoy-types.ts): a misspelt field in
 * what they build, or in what a caller does with it, fails to compile. Each probe is a small source
 * compiled with the project's compiler options beside the real files; its control is the same
 * source spelt right, which compiles. Also: builders/ neither checks nor falls back to untyped
 * objects (no `Record<string, unknown>`, no `any` cast, no `Problem`), with a control showing the
 * scan finds each of them. And builders/ fills no default: a builder handed an unresolved value
 * (an identity without its claim, a cost without its missingCost) fails to compile, and no line of
 * builders/ fills one with a constant or an enum member.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { compileProbes } from "./compile-probes";
import { resolveGlobalRateLimit } from "../../components/global-ratelimit/resolve";
import { resolvePlatformRateLimit } from "../../components/platform-ratelimit/resolve";
import { G } from "./global-ratelimit-fixtures";
import { PLATFORM } from "./platform-fixtures";

const ROOT = path.join(__dirname, "..", "..");
const BUILDERS = path.join(ROOT, "builders");

const IMPORTS = `
import { EnvoyFilterPatch, HeaderMatcher, RateLimitAction } from "./builders/envoy-types";
import { ratelimitHttpFilter, localBucketValue } from "./builders/envoy-filters";
import { pathDescriptorAction } from "./builders/rules";
import { PathKeyMode } from "./builders/rule-args";
`;
const FILTER = `ratelimitHttpFilter({ target: { selector: { app: "gw" } }, ports: [], clusterName: "c", authority: "a", domain: "d", failureModeDeny: false, timeout: "1s", filterName: "f" })`;

/** Pairs of [right, misspelt] sources and the misspelt field the compiler must name. */
const PAIRS: Record<string, [string, string, string]> = {
    action: [
        `const a: RateLimitAction = { generic_key: { descriptor_key: "k", descriptor_value: "v" } };`,
        `const a: RateLimitAction = { generic_key: { descriptor_key: "k", descripter_value: "v" } };`,
        "descripter_value",
    ],
    matcher: [
        `const m: HeaderMatcher = { name: ":path", safe_regex_match: { google_re2: {}, regex: "/x" }, invert_match: true };`,
        `const m: HeaderMatcher = { name: ":path", safe_regex_match: { google_re2: {}, regex: "/x" }, inverse_match: true };`,
        "inverse_match",
    ],
    patch: [
        `const p: EnvoyFilterPatch = { applyTo: "VIRTUAL_HOST", match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "h:80", route: { action: "ANY" } } } }, patch: { operation: "MERGE", value: { rate_limits: [] } } };`,
        `const p: EnvoyFilterPatch = { applyTo: "VIRTUAL_HOST", match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "h:80", route: { action: "ANY" } } } }, patch: { operation: "MERGE", value: { rate_limit: [] } } };`,
        "rate_limit",
    ],
    "filter-read": [
        `const p = ${FILTER}.configPatches[0]; if (p.applyTo === "HTTP_FILTER") p.patch.value.typed_config;`,
        `const p = ${FILTER}.configPatches[0]; if (p.applyTo === "HTTP_FILTER") p.patch.value.typed_confg;`,
        "typed_confg",
    ],
    "bucket-read": [
        `const n: number | undefined = localBucketValue(4, "60s").token_bucket?.max_tokens;`,
        `const n = localBucketValue(4, "60s").token_bucket?.max_token;`,
        "max_token",
    ],
    "action-read": [
        `const k: string | undefined = pathDescriptorAction(PathKeyMode.Literal, "PATH").request_headers?.descriptor_key;`,
        `const k = pathDescriptorAction(PathKeyMode.Literal, "PATH").request_headers?.descriptorKey;`,
        "descriptorKey",
    ],
};

/** The marks of an untyped or checking builder, and the text each is found in. */
const UNTYPED = [/Record<string, unknown>/, /\bas any\b/, /\bProblem\b/];

function untypedMarks(text: string): string[] {
    return UNTYPED.filter((re) => re.test(text)).map(String);
}

describe("typed builders: the Envoy and Istio subset declared once (builders/envoy-types.ts)", function () {
    this.timeout(120000);
    let diagnostics: Record<string, string[]>;
    before(() => {
        const probes: Record<string, string> = {};
        for (const [name, [right, wrong]] of Object.entries(PAIRS)) {
            probes[`${name}-right`] = `${IMPORTS}\n${right}\nexport {};\n`;
            probes[`${name}-wrong`] = `${IMPORTS}\n${wrong}\nexport {};\n`;
        }
        diagnostics = compileProbes(probes);
    });

    for (const [name, [, , field]] of Object.entries(PAIRS)) {
        it(`${name}: a misspelt field (${field}) fails to compile; control: spelt right, it compiles`, () => {
            expect(diagnostics[`${name}-right`], `${name}, spelt right`).to.deep.equal([]);
            expect(diagnostics[`${name}-wrong`].join("\n"), `${name}, misspelt`).to.contain(field);
        });
    }

    it("builders/ holds no untyped object, no any cast and no problem; control: the scan finds each", () => {
        const found = fs
            .readdirSync(BUILDERS)
            .filter((f) => f.endsWith(".ts"))
            .flatMap((f) => untypedMarks(fs.readFileSync(path.join(BUILDERS, f), "utf8")).map((m) => `${f}: ${m}`));
        expect(found).to.deep.equal([]);
        expect(untypedMarks("const x: Record<string, unknown> = (y as any); const p: Problem[] = [];")).to.have.length(3);
    });
});

/** A builder's argument filled with a default (`?? CONSTANT`, `?? Enum.Member`): the resolve step fills them (components/). */
const FILLED_DEFAULT = /\?\? .*(\b[A-Z][A-Z0-9_]{2,}\b|\b[A-Z][a-z][A-Za-z]*\.[A-Z][A-Za-z]*\b)/;

/** Unresolved values handed to a builder, each with its control (the resolved value), and the field the compiler names. */
const UNRESOLVED: Record<string, [string, string, string]> = {
    identity: [
        `identityActions({ jwt: { issuer: "i", jwksUri: "u", claim: "sub" }, missing: "perClient" }, { generic_key: { descriptor_key: "k", descriptor_value: "v" } });`,
        `identityActions({ jwt: { issuer: "i", jwksUri: "u" }, missing: "perClient" }, { generic_key: { descriptor_key: "k", descriptor_value: "v" } });`,
        "claim",
    ],
    cost: [`costEntries({ requestHeader: "x-cost", missingCost: 1 }, []);`, `costEntries({ requestHeader: "x-cost" }, []);`, "missingCost"],
};

describe("builders fill no default: they take resolved values (components/ resolves them once)", function () {
    this.timeout(120000);
    const imports = `import { identityActions } from "./builders/identity";\nimport { costEntries } from "./builders/request-cost";\n`;
    let diagnostics: Record<string, string[]>;
    before(() => {
        const probes: Record<string, string> = {};
        for (const [name, [right, wrong]] of Object.entries(UNRESOLVED)) {
            probes[`unresolved-${name}-right`] = `${imports}\n${right}\nexport {};\n`;
            probes[`unresolved-${name}-wrong`] = `${imports}\n${wrong}\nexport {};\n`;
        }
        diagnostics = compileProbes(probes);
    });

    for (const [name, [, , field]] of Object.entries(UNRESOLVED)) {
        it(`${name}: without ${field} (a default left to fill) it fails to compile; control: resolved, it compiles`, () => {
            expect(diagnostics[`unresolved-${name}-right`], `${name}, resolved`).to.deep.equal([]);
            expect(diagnostics[`unresolved-${name}-wrong`].join("\n"), `${name}, unresolved`).to.contain(field);
        });
    }

    it("no builder fills a default with a constant or an enum member; control: the scan finds one", () => {
        const found = fs
            .readdirSync(BUILDERS)
            .filter((f) => f.endsWith(".ts"))
            .flatMap((f) =>
                fs
                    .readFileSync(path.join(BUILDERS, f), "utf8")
                    .split("\n")
                    .filter((line) => FILLED_DEFAULT.test(line))
                    .map((line) => `${f}: ${line.trim()}`),
            );
        expect(found).to.deep.equal([]);
        expect(FILLED_DEFAULT.test("pathKey: plan.perPath?.key ?? DEFAULT_PATH_KEY,")).to.equal(true);
        expect(FILLED_DEFAULT.test("return id.missing ?? MissingIdentity.PerClient;")).to.equal(true);
    });
});

const READONLY_IMPORTS = `
import * as pulumi from "@pulumi/pulumi";
import { ResolvedGlobalRateLimit } from "./components/global-ratelimit/resolve";
import { ResolvedPlatformRateLimit } from "./components/platform-ratelimit/resolve";
import { DeepReadonly } from "./lib/frozen";
declare const g: ResolvedGlobalRateLimit;
declare const p: ResolvedPlatformRateLimit;
import { ResolvedBookinfo } from "./builders/bookinfo";
import { ResolvedManagedApi } from "./builders/managed-api";
import { ResolvedLocalRateLimit } from "./components/local-ratelimit/component";
declare const b: ResolvedBookinfo;
declare const m: ResolvedManagedApi;
declare const l: ResolvedLocalRateLimit;
`;

/** Writes into a resolved value's nested arrays and objects, each with its control (the same place read), and what the compiler says. */
const WRITES: Record<string, [string, string, string]> = {
    "array-in-object": [`const n: number = g.service.redis.addresses.length;`, `g.service.redis.addresses.push("redis:6379");`, "'push' does not exist"],
    "object-in-object": [`const n: number = g.service.ratelimit.replicas;`, `g.service.ratelimit.replicas = 3;`, "read-only property"],
    "array-in-array": [
        `const n: number | undefined = g.fixed.vhostRateLimits[0]?.actions.length;`,
        `g.fixed.vhostRateLimits[0]?.actions.push({ generic_key: { descriptor_key: "k", descriptor_value: "v" } });`,
        "'push' does not exist",
    ],
    "object-in-array": [`const s: string | undefined = g.limits.rules[0]?.name;`, `g.limits.rules[0]!.name = "other";`, "read-only property"],
    "per-value-side": [`const s: string | undefined = g.perValue?.endpoint.host;`, `g.perValue!.endpoint.host = "elsewhere";`, "read-only property"],
    "platform-source": [
        `const n: number | undefined = p.sources[0]?.compiled.configDescriptors.length;`,
        `p.sources[0]?.compiled.configDescriptors.splice(0, 1);`,
        "'splice' does not exist",
    ],
    // Bookinfo's, ManagedApi's and LocalRateLimit's values, read-only at every level as written (frozen level by level).
    "bookinfo-route": [`const n: number | undefined = b.routes[0]?.exact.length;`, `b.routes[0]?.exact.push("/other");`, "'push' does not exist"],
    "managed-api-ranges": [`const s: string | undefined = m.includeIpRanges[0];`, `m.includeIpRanges.push("10.0.0.0/8");`, "'push' does not exist"],
    "local-bucket": [`const s: boolean = l.bucket.behaviour.shadow;`, `l.bucket.behaviour.shadow = true;`, "read-only property"],
    // What the frozen copy keeps as it is stays callable and an Output: the control only (no write to refuse).
    "kept-as-is": [
        `declare const d: DeepReadonly<{ out: pulumi.Output<string>; at: (n: number) => string }>; const o: pulumi.Output<string> = d.out; const s: string = d.at(1);`,
        `declare const d: DeepReadonly<{ list: string[] }>; d.list.pop();`,
        "'pop' does not exist",
    ],
};

describe("resolved values are read-only in their types, as they are frozen (lib/frozen.ts DeepReadonly)", function () {
    this.timeout(120000);
    let diagnostics: Record<string, string[]>;
    before(() => {
        const probes: Record<string, string> = {};
        for (const [name, [read, write]] of Object.entries(WRITES)) {
            probes[`readonly-${name}-read`] = `${READONLY_IMPORTS}\n${read}\nexport {};\n`;
            probes[`readonly-${name}-write`] = `${READONLY_IMPORTS}\n${write}\nexport {};\n`;
        }
        diagnostics = compileProbes(probes);
    });

    for (const [name, [, , said]] of Object.entries(WRITES)) {
        it(`${name}: a write fails to compile (${said}); control: the read compiles`, () => {
            expect(diagnostics[`readonly-${name}-read`], `${name}, read`).to.deep.equal([]);
            expect(diagnostics[`readonly-${name}-write`].join("\n"), `${name}, write`).to.contain(said);
        });
    }

    it("at run time the same writes throw (frozen); control: the caller's arguments stay writable", () => {
        const args = G();
        const g = resolveGlobalRateLimit(args).value!;
        const p = resolvePlatformRateLimit(PLATFORM).value!;
        expect(() => Array.prototype.push.call(g.service.redis.addresses, "redis:6379")).to.throw(TypeError);
        expect(() => Object.assign(g.service.ratelimit, { replicas: 3 })).to.throw(TypeError);
        expect(() => Array.prototype.push.call(g.fixed.vhostRateLimits[0]!.actions, {})).to.throw(TypeError);
        expect(() => Object.assign(g.limits.rules[0]!, { name: "other" })).to.throw(TypeError);
        expect(() => Array.prototype.splice.call(p.sources[0]!.compiled.configDescriptors, 0, 1)).to.throw(TypeError);
        expect(g.limits.rules[0]!.name).to.equal("all");
        Object.assign(args.rules![0]!, { name: "changed" });
        expect(args.rules![0]!.name).to.equal("changed");
    });
});
