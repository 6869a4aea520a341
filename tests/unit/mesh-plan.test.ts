/**
 * MeshRateLimit's arguments (mesh/mesh-ratelimit-args.generated.ts, mesh/mesh-plan.ts): grouped by the
 * component each is for, handed to that component as given, each rule checked once (by the
 * component that owns the field), and every problem reported under the field that holds it; the
 * program's stack config maps to them without loss and re-phrases their problems for its keys.
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { ARGS_FIX, isMeshArgsError } from "../../mesh/arg-problems";
import { MeshGlobalArgs, MeshLocalArgs, MeshRateLimitArgs } from "../../mesh/mesh-ratelimit-args.generated";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { LocalRateLimitArgs } from "../../components/local-ratelimit/component";
import { planMeshRateLimit } from "../../mesh/mesh-plan";
import { CONFIG_KEYS, CONFIG_KEY_OF_FIELD } from "../../program/config-keys";
import { keyOf } from "../../mesh/arg-paths";
import { argsOfConfig, planOfConfig, resolveSettings } from "../../program/config-args";
import { buildProgram } from "../../program/program";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { StackVariant } from "../../components/common/mesh-enums";
import { LimitUnit } from "../../builders/rule-args";
import { InputError, Problem } from "../../lib/problems";
import { DEV } from "./helpers";
import { MESH_OUT, generatedText } from "../../scripts/gen-arg-types";

const ROOT = path.join(__dirname, "..", "..");
const OUT = path.join(ROOT, "mesh", "mesh-ratelimit-args.generated.ts");
const NO_ESP = { managedApi: { enabled: false } } as const;

/** MeshRateLimit's refusal of these arguments (it must refuse them). */
function refusal(args: MeshRateLimitArgs): InputError {
    try {
        planMeshRateLimit(args);
    } catch (e) {
        if (isMeshArgsError(e)) return e;
        throw e;
    }
    throw new Error(`accepted: ${JSON.stringify(args)}`);
}

/** The stack config's refusal of a config (its problems as the program reports them). */
function configRefusal(raw: Record<string, string>): Problem[] {
    try {
        resolveSettings(raw);
    } catch (e) {
        return (e as InputError).problems;
    }
    throw new Error(`accepted: ${JSON.stringify(raw)}`);
}

describe("MeshRateLimit arguments: their shape", () => {
    it("mesh/mesh-ratelimit-args.generated.ts is the package's own: generated from MeshRateLimit's declarations (mesh/mesh-fields.ts), it imports nothing of the program", () => {
        const text = fs.readFileSync(OUT, "utf8");
        expect(text).to.equal(generatedText(MESH_OUT));
        expect(text).to.match(/^\/\/ Generated .* mesh\/mesh-fields\.ts:\n/);
        expect(text).to.not.match(/program\//);
        expect(fs.existsSync(path.join(ROOT, "scripts", "gen-mesh-args.ts"))).to.equal(false);
    });

    it("every config key sets one field, and no two keys the same one", () => {
        const fields = CONFIG_KEYS.map((k) => keyOf(k.field));
        expect(new Set(fields).size).to.equal(fields.length);
        for (const k of CONFIG_KEYS) expect(CONFIG_KEY_OF_FIELD[keyOf(k.field)], k.key).to.equal(k.key);
    });

    it("the global limits take GlobalRateLimit's names and its own service and Redis types; no field is named after a config key", () => {
        // The component's own field types (a type error here when they part).
        const sameTypes: [MeshGlobalArgs["timeout"], MeshGlobalArgs["service"], MeshGlobalArgs["redis"], MeshLocalArgs["fillInterval"]] = [
            undefined as GlobalRateLimitArgs["timeout"],
            undefined as GlobalRateLimitArgs["service"],
            undefined as GlobalRateLimitArgs["redis"],
            undefined as LocalRateLimitArgs["fillInterval"],
        ];
        expect(sameTypes).to.have.length(4);
        const text = fs.readFileSync(OUT, "utf8");
        for (const flat of ["rateLimitTimeout?:", "ratelimitReplicas?:", "limitedPathLimit?:", "espServiceName?:", "localBucket?:"])
            expect(text).to.not.include(flat);
    });

    it("a field a component owns is declared and documented once, by the component: MeshRateLimit's groups extend its options", () => {
        const text = fs.readFileSync(OUT, "utf8");
        for (const [group, base] of [
            ["MeshGlobalArgs", "GlobalRateLimitOptions"],
            ["MeshLocalArgs", "LocalBucketOptions"],
            ["MeshBookinfoArgs", "BookinfoOptions"],
            ["MeshManagedApiArgs", "ManagedApiOptions"],
        ])
            expect(text).to.include(`export interface ${group} extends ${base} {`);
        for (const declared of ["timeout?:", "service?:", "redis?:", "fillInterval?:", "gatewayName?:", "ingressName?:", "dashboard?:"])
            expect(text, declared).to.not.include(declared);
        // In the schema other languages read: the same words for the field in the component and in MeshRateLimit.
        const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "plugin", "schema.json"), "utf8"));
        const input = (c: string) => schema.resources[`mesh-ratelimit:index:${c}`].inputProperties;
        const type = (t: string) => schema.types[`mesh-ratelimit:index:${t}`].properties;
        const pairs: [Record<string, any>, Record<string, any>, string[]][] = [
            [input("GlobalRateLimit"), type("MeshGlobalArgs"), ["timeout", "filterLayout", "service", "redis", "counterStore", "preLimit"]],
            [input("LocalRateLimit"), type("MeshLocalArgs"), ["fillInterval", "rateLimitHeaders", "shadow"]],
            [input("Bookinfo"), type("MeshBookinfoArgs"), ["namespace", "hosts", "gatewayPort", "routes"]],
            [input("ManagedApi"), type("MeshManagedApiArgs"), ["namespace", "ingressClassName", "espImage"]],
            [input("GlobalRateLimit").monitoring && type("MonitoringArgs"), type("MonitoringOptionsArgs"), ["dashboard", "alerts", "ruleLabels"]],
        ];
        for (const [component, mesh, fields] of pairs)
            for (const f of fields) {
                expect(mesh[f]?.description, f).to.be.a("string").and.not.equal("");
                expect(mesh[f].description, f).to.equal(component[f].description);
            }
    });

    it("the package ships no stack config wording: no `pulumi config` in what it compiles", () => {
        const build = JSON.parse(fs.readFileSync(path.join(ROOT, "tsconfig.build.json"), "utf8")).include as string[];
        const dirs = build.filter((g) => g.endsWith("/**/*.ts")).map((g) => g.replace("/**/*.ts", ""));
        expect(dirs).to.not.include("program");
        const files = dirs.flatMap((d) => fs.readdirSync(path.join(ROOT, d)).map((f) => path.join(d, f))).filter((f) => f.endsWith(".ts"));
        expect(files.length).to.be.greaterThan(40);
        for (const f of files) expect(fs.readFileSync(path.join(ROOT, f), "utf8"), f).to.not.match(/pulumi config (set|rm)/);
    });
});

describe("MeshRateLimit arguments: each component gets its own, as given", () => {
    it("global.service, global.redis and global.timeout reach GlobalRateLimit unchanged (the very objects)", () => {
        const service = { replicas: 3, logLevel: "debug" as const, redisPoolSize: 20 };
        const redis = { maxMemory: "100mb" };
        const plan = planMeshRateLimit({ ...NO_ESP, global: { service, redis, timeout: "0.5s", namespace: "limits" } });
        expect(plan.global.args.service).to.equal(service);
        expect(plan.global.args.redis).to.equal(redis);
        expect(plan.global.args.timeout).to.equal("0.5s");
        expect(plan.global.args.namespace).to.equal("limits");
        // What the program's checks of the cluster read is GlobalRateLimit's resolution of them.
        expect(plan.settings.ratelimit).to.equal(plan.global.service.ratelimit);
        expect([plan.settings.ratelimit.replicas, plan.settings.ratelimit.namespace, plan.settings.ratelimit.redisMaxMemory]).to.deep.equal([
            3,
            "limits",
            "100mb",
        ]);
    });

    it("the plan's settings are read-only at every level, and the arguments given stay the caller's (changeable)", () => {
        const service = { replicas: 3 };
        const paths = { limited: "/productpage" };
        const plan = planMeshRateLimit({ ...NO_ESP, global: { service }, paths });
        const frozenEverywhere = (v: unknown, at: string): void => {
            if (typeof v !== "object" || v === null) return;
            expect(Object.isFrozen(v), at).to.equal(true);
            for (const [k, x] of Object.entries(v)) frozenEverywhere(x, `${at}.${k}`);
        };
        frozenEverywhere(plan.settings, "settings");
        expect([Object.isFrozen(service), Object.isFrozen(paths)]).to.deep.equal([false, false]);
    });

    it("stack config → arguments → plan: the same settings, typed values, each key at its field", () => {
        const raws = [
            DEV,
            { ...DEV, variant: "B", counterStore: "single" },
            {
                ...DEV,
                ratelimitReplicas: "3",
                rateLimitTimeout: "2s",
                redisPasswordSecret: "redis-auth",
                redisPasswordSecretKey: "pw",
                monitoringRuleLabels: "a=b,c=d",
            },
        ];
        for (const raw of raws) {
            const { args, problems } = argsOfConfig(raw);
            expect(problems).to.deep.equal([]);
            expect(planMeshRateLimit(args).settings).to.deep.equal(planOfConfig(raw).settings);
        }
        const { args } = argsOfConfig(raws[2]);
        expect(args.global?.service?.replicas).to.equal(3);
        expect(args.global?.timeout).to.equal("2s");
        expect(args.global?.redis?.passwordSecret).to.deep.equal({ name: "redis-auth", key: "pw" });
        expect(args.global?.monitoring?.ruleLabels).to.deep.equal({ a: "b", c: "d" });
        expect(args.managedApi?.includeIpRanges).to.be.an("array");
    });

    it("a config key at the default Pulumi.yaml declares is not given (the CLI merges the declared defaults in)", () => {
        const { args } = argsOfConfig({ ...DEV, ratelimitReplicas: "2", redisPasswordSecretKey: "password" });
        expect(args.global?.service?.replicas).to.equal(undefined);
        expect(args.global?.redis).to.equal(undefined);
    });

    it("the plan's options are the program's alone: the same plan, nothing computed again", async () => {
        const plan = planMeshRateLimit(NO_ESP);
        const withOptions = plan.withOptions({ kubeContext: "kind", createIngressClass: false });
        expect([withOptions.settings, withOptions.global, withOptions.bookinfo]).to.deep.equal([plan.settings, plan.global, plan.bookinfo]);
        expect(withOptions.args).to.deep.equal({ ...NO_ESP, kubeContext: "kind", createIngressClass: false });
        await pulumi.runtime.setMocks({ newResource: (a) => ({ id: "x", state: a.inputs }), call: (a) => a.inputs }, "mesh-ratelimit", "dev", false);
        const all = Object.fromEntries(Object.entries(DEV).map(([k, v]) => [`mesh-ratelimit:${k}`, String(v)]));
        const built = buildProgram(all, { report: () => {} });
        expect(built.plan.settings).to.equal(built.settings);
        expect(built.plan.args).to.equal(built.args);
    });
});

describe("MeshRateLimit arguments: every rule checked once, by the component that owns the field", () => {
    it("a bad timeout: one problem, GlobalRateLimit's, under global.timeout, its fix an argument edit", () => {
        const err = refusal({ ...NO_ESP, global: { timeout: "500ms" } });
        const own = planGlobalRateLimit({
            domain: "d",
            gateway: { selector: { app: "gw" }, allVirtualHosts: true },
            rules: [{ name: "r", requestsPerUnit: 1, unit: LimitUnit.Minute }],
            timeout: "500ms",
        }).problems.filter((p) => p.key === "timeout");
        expect(err.problems.map((p) => [p.key, p.problem, p.fix])).to.deep.equal([
            ["global.timeout", own[0].problem, `set global.timeout: "0.5s" in MeshRateLimit's args`],
        ]);
        // Negative control: the stack config's key names the same rule, the fix a config command.
        expect(configRefusal({ ...DEV, rateLimitTimeout: "500ms" }).map((p) => [p.key, p.problem, p.fix])).to.deep.equal([
            ["rateLimitTimeout", own[0].problem, "pulumi config set rateLimitTimeout 0.5s"],
        ]);
    });

    it("a limit over what the service counts: the rules' one statement, for a rule, a stack limit and its config key", () => {
        const rule = planGlobalRateLimit({
            domain: "d",
            gateway: { selector: { app: "gw" }, allVirtualHosts: true },
            rules: [{ name: "r", requestsPerUnit: 5e9, unit: LimitUnit.Minute }],
        }).problems.filter((p) => p.key === "rules[0].requestsPerUnit");
        const mesh = refusal({ ...NO_ESP, limits: { catchAll: 5e9 } }).problems;
        expect(mesh.map((p) => [p.key, p.problem, p.fix])).to.deep.equal([
            ["limits.catchAll", rule[0].problem, "set limits.catchAll: 4294967295 in MeshRateLimit's args, or the same rate in a shorter unit"],
        ]);
        expect(rule[0].fix).to.equal("set rules[0].requestsPerUnit to 4294967295, or the same rate in a shorter unit");
        expect(configRefusal({ ...DEV, catchAllLimit: "5000000000" }).map((p) => [p.key, p.problem, p.fix])).to.deep.equal([
            ["catchAllLimit", rule[0].problem, "pulumi config set catchAllLimit 4294967295, or the same rate in a shorter unit"],
        ]);
        // The largest one is accepted everywhere.
        expect(() => planMeshRateLimit({ ...NO_ESP, limits: { catchAll: 4_294_967_295 } })).to.not.throw();
    });

    it("Bookinfo refuses its arguments: GlobalRateLimit is still planned (on the names Bookinfo was given), both refusals in one round", () => {
        const err = refusal({ ...NO_ESP, bookinfo: { version: "not a tag" }, global: { domain: "a b" } });
        expect(err.problems.map((p) => p.key)).to.deep.equal(["bookinfo.version", "global.domain"]);
    });

    it("the service's options, Redis and the domain: GlobalRateLimit's problems under global.*, every one in one round", () => {
        const err = refusal({
            ...NO_ESP,
            global: { domain: "a b", service: { replicas: 0, logLevel: "loud" as any }, redis: { mode: "external" as any } },
        });
        expect(err.problems.map((p) => p.key)).to.deep.equal(["global.domain", "global.service.replicas", "global.service.logLevel", "global.redis.addresses"]);
        expect(err.message).to.include(
            `- global.service.replicas = 0: must be between 1 and 100\n    fix: set global.service.replicas: 1 in MeshRateLimit's args`,
        );
        expect(err.message).to.include(`fix: set global.domain: "a-b" in MeshRateLimit's args`);
        expect(err.message).to.not.include("pulumi config");
    });

    it("a field a component does not know is refused, naming the closest one, under its full path", () => {
        const err = refusal({ ...NO_ESP, global: { service: { replica: 3 } } } as any);
        expect(err.message).to.include("global.service.replica");
        expect(err.message).to.include("rename replica to replicas");
    });

    it("a pipeline window for a Redis that ignores it: one rule, named by each input's words", () => {
        const err = refusal({ ...NO_ESP, global: { service: { redisPipelineWindow: "150us" } } });
        expect(err.message).to.include("has no effect with global.redis.mode in-cluster");
        expect(err.message).to.include(
            `fix: remove global.service.redisPipelineWindow from MeshRateLimit's args, or set global.redis.mode: "cluster" in MeshRateLimit's args`,
        );
        const config = configRefusal({ ...DEV, redisPipelineWindow: "150us" });
        expect(config[0].problem).to.match(/^has no effect with redisMode in-cluster/);
        expect(config[0].fix).to.equal("pulumi config rm redisPipelineWindow, or pulumi config set redisMode cluster");
    });

    it("MeshRateLimit's own fields and its cross-field rules: every problem at once, by field path", () => {
        const err = refusal({
            variant: "C" as StackVariant,
            ...NO_ESP,
            limits: { catchAll: 0, descriptors: [{ key: "PATH", unit: "minutes" as LimitUnit, requestsPerUnit: 1 }] },
            paths: { login: "/productpage" },
        });
        expect(err.message).to.match(/^MeshRateLimit: invalid arguments \(\d+ problems\); nothing was created:/);
        expect(err.message).to.include(`variant = "C": must be one of 'A', 'B'`);
        expect(err.message).to.include(`fix: set variant: "A" in MeshRateLimit's args`);
        expect(err.message).to.include(`paths.login = "/productpage": equals paths.page`);
        expect(err.message).to.include('has unit "minutes"');
        expect(err.message).to.include(`limits.catchAll = 0: must be at least 1`);
        expect(configRefusal({ ...DEV, loginPath: "/productpage" })[0].problem).to.match(/^equals pagePath:/);
    });

    it("a value of the wrong type is refused, never converted: text for a number or a switch, a number for text", () => {
        const err = refusal({
            ...NO_ESP,
            limits: { catchAll: "5" as unknown as number },
            mesh: { mutualTls: "true" as unknown as boolean },
            variant: 1 as unknown as StackVariant,
        });
        expect(err.message).to.include(`limits.catchAll = "5": must be a whole number`);
        expect(err.message).to.include(`fix: set limits.catchAll: 5 in MeshRateLimit's args`);
        expect(err.message).to.include(`mesh.mutualTls = "true": must be true or false`);
        expect(err.message).to.include(`variant = 1: must be one of 'A', 'B'`);
        // Stack config is text: the program converts it at its edge, so the same values pass there.
        expect(() => resolveSettings({ ...DEV, catchAllLimit: "5", mutualTls: "TRUE", variant: "A" })).to.not.throw();
        // Negative control: the same fields with values of their type pass in the arguments too.
        expect(() => planMeshRateLimit({ ...NO_ESP, limits: { catchAll: 5 }, mesh: { mutualTls: true }, variant: "A" })).to.not.throw();
    });

    it("what MeshRateLimit derives is reported only when its own fields pass (else it would repeat their problems)", () => {
        // A path with a space breaks the routes made of it: one problem, the path's, not one of the routes too.
        expect(refusal({ ...NO_ESP, paths: { staticPrefix: "/static files" } }).problems.map((p) => p.key)).to.deep.equal(["paths.staticPrefix"]);
    });

    it("bookinfo.hosts is read as the typed list it is: each entry one host (a comma inside one is no separator), problems showing the list", () => {
        const keys = (args: MeshRateLimitArgs) => refusal({ ...NO_ESP, ...args }).problems;
        const bad = keys({ bookinfo: { hosts: ["shop.example.com", "a.example.com,b.example.com"] } });
        expect(bad.map((p) => [p.key, p.value, p.problem])).to.deep.equal([
            [
                "bookinfo.hosts",
                "shop.example.com,a.example.com,b.example.com",
                "has invalid host(s): a.example.com,b.example.com (each must be '*', '*.<domain>' or a DNS name, without a port)",
            ],
        ]);
        const twice = keys({ bookinfo: { hosts: ["shop.example.com", "shop.example.com"] } });
        expect(twice.map((p) => p.problem)).to.deep.equal(["names a host twice"]);
        expect(twice[0].fix).to.include(`set bookinfo.hosts: ["shop.example.com"]`);
        // Accepted: the list as given reaches the settings, and none given is the default `*`.
        expect(planMeshRateLimit({ ...NO_ESP, bookinfo: { hosts: ["a.example.com", "*.shop.example.com"] } }).settings.bookinfo.hosts).to.deep.equal([
            "a.example.com",
            "*.shop.example.com",
        ]);
        expect(planMeshRateLimit({ ...NO_ESP }).settings.bookinfo.hosts).to.deep.equal(["*"]);
        // The stack config's comma text is split once, at the program's edge.
        expect(configRefusal({ ...DEV, gatewayHosts: "shop.example.com,shop:80" })[0].problem).to.match(/^has invalid host\(s\): shop:80 /);
    });

    it("the managed API's required fields, phrased as arguments", () => {
        const err = refusal({});
        expect(err.message).to.include(`set managedApi.includeIpRanges: ["10.4.0.0/14","10.7.240.0/20"] in MeshRateLimit's args`);
        expect(err.message).to.include("or set managedApi.enabled: false in MeshRateLimit's args");
    });
});

describe("MeshRateLimit arguments: fixes phrased as argument edits (ARGS_FIX)", () => {
    const sets: [string, string, string][] = [
        ["managedApi.includeIpRanges", "10.0.0.0/8,10.1.0.0/16", `set managedApi.includeIpRanges: ["10.0.0.0/8","10.1.0.0/16"] in MeshRateLimit's args`],
        ["global.redis.addresses", "r:6379", `set global.redis.addresses: ["r:6379"] in MeshRateLimit's args`],
        ["limits.catchAll", "100", "set limits.catchAll: 100 in MeshRateLimit's args"],
        ["x", "-1", `set x: "-1" in MeshRateLimit's args`],
        ["x", "1.5", `set x: "1.5" in MeshRateLimit's args`],
        ["managedApi.enabled", "false", "set managedApi.enabled: false in MeshRateLimit's args"],
        ["x", "True", `set x: "True" in MeshRateLimit's args`],
        ["limits.descriptors", '[{"key":"PATH"}]', `set limits.descriptors: [{"key":"PATH"}] in MeshRateLimit's args`],
        ["x", 'say "hi"', `set x: "say \\"hi\\"" in MeshRateLimit's args`],
        ["x", "", `set x: "" in MeshRateLimit's args`],
    ];
    for (const [k, v, want] of sets) {
        it(`set(${k}, ${JSON.stringify(v)})`, () => {
            expect(ARGS_FIX.set(k, v)).to.equal(want);
        });
    }

    it("rm, rename (value shell-quoted when needed), header singular and plural", () => {
        expect(ARGS_FIX.rm("limits.descriptorz")).to.equal("remove limits.descriptorz from MeshRateLimit's args");
        expect(ARGS_FIX.rename("a", "b", "x y")).to.equal("rename a to b (value 'x y')");
        expect(ARGS_FIX.header(1)).to.equal("MeshRateLimit: invalid arguments (1 problem); nothing was created:");
        expect(ARGS_FIX.header(2)).to.equal("MeshRateLimit: invalid arguments (2 problems); nothing was created:");
    });
});
