/**
 * MeshRateLimit's typed arguments (mesh/mesh-args.ts): generated from the config table, the
 * program's stack config maps to them without loss, and the component validates them itself
 * (fixes phrased as arguments); ARGS_FIX, rawToArgs and settingsFromArgs exactly.
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { buildProgram } from "../../program/program";
import * as fs from "fs";
import { OUT, generate } from "../../scripts/gen-mesh-args";
import { ARGS_FIX, rawToArgs, settingsFromArgs } from "../../mesh/mesh-args";
import { bookinfoArgsFromSettings, globalArgsFromSettings, planMeshRateLimit } from "../../mesh/mesh-ratelimit";
import { CONFIG_KEYS, CONFIG_KEY_NAMES, CONFIG_KEY_OF_FIELD } from "../../mesh/config-schema";
import { domainProblems, grpcPortProblems, pipelineWindowProblems } from "../../components/global-ratelimit-checks";
import { DEFAULTS } from "../../components/defaults";
import { StackVariant } from "../../components/mesh-enums";
import { LimitUnit } from "../../builders/rule-args";
import { InputError } from "../../lib/problems";
import { resolveSettings } from "../../mesh/settings";
import { DEV } from "./helpers";

describe("MeshRateLimit arguments", () => {
    it("mesh/mesh-ratelimit-args.ts is generated from mesh/config-schema.ts (run npm run gen:mesh-args)", () => {
        expect(fs.readFileSync(OUT, "utf8")).to.equal(generate());
    });

    it("has one documented field per config key", () => {
        const text = fs.readFileSync(OUT, "utf8");
        for (const k of CONFIG_KEYS) expect(text, k.key).to.match(new RegExp(`/\\*\\* [^\\n]+Defaults to [^\\n]+\\*/\\n    ${k.key}\\?: `));
    });

    const configs: Record<string, string>[] = [];
    for (const variant of ["A", "B"])
        for (const apiProfile of ["seed", "current"])
            for (const localPlacement of ["all-routes", "single-route"]) configs.push({ ...DEV, variant, apiProfile, localPlacement });
    configs.push({
        ...DEV,
        unit: "second",
        catchAllLimit: "7",
        pathKey: "literal",
        mutualTls: "FALSE",
        includeIpRanges: " 10.0.0.0/8 , 10.1.0.0/16",
        virtualServiceRoutes: '[{"exact":["/a"]},{"name":"api","prefix":["/api"]}]',
    });
    configs.push({
        ...DEV,
        variant: "B",
        descriptors: '[{"key":"PATH","unit":"hour","requestsPerUnit":9},{"key":"PATH","value":"/x","unit":"minute","requestsPerUnit":1}]',
        managedApi: "false",
        awaitRollout: "false",
    });
    for (const raw of configs) {
        it(`stack config → args → settings is lossless (${JSON.stringify(raw).slice(0, 90)}…)`, () => {
            const direct = resolveSettings(raw);
            const args = rawToArgs(raw);
            expect(settingsFromArgs(args)).to.deep.equal(direct);
            // Typed, not strings: a number is a number, a list a list.
            for (const [k, v] of Object.entries(args)) {
                const spec = CONFIG_KEYS.find((c) => c.key === k)!;
                if (spec.kind === "integer") expect(v, k).to.be.a("number");
                if (spec.kind === "boolean") expect(v, k).to.be.a("boolean");
                if (spec.kind === "json") expect(v, k).to.be.an("array");
            }
            expect(args.variant).to.equal(raw.variant);
        });
    }

    it("invalid arguments: every problem at once, the field and value named, the fix phrased as an argument", () => {
        let err: Error | undefined;
        try {
            settingsFromArgs({
                variant: "C" as StackVariant,
                managedApi: false,
                catchAllLimit: 0,
                descriptorz: 1,
                descriptors: [{ key: "PATH", unit: "minutes" as LimitUnit, requestsPerUnit: 1 }],
            } as any);
        } catch (e) {
            err = e as Error;
        }
        expect(err?.message).to.match(/^MeshRateLimit: invalid arguments \(5 problems\); nothing was created:/);
        expect(err?.message).to.include(`variant = "C": must be one of 'A', 'B'`);
        expect(err?.message).to.include(`fix: set variant: "A" in MeshRateLimit's args`);
        expect(err?.message).to.include("descriptorz");
        expect(err?.message).to.include('has unit "minutes"');
        expect(err?.message).to.include('catchAllLimit = "0": must be at least 1');
        expect(err?.message).to.not.include("pulumi config");
        let missing: Error | undefined;
        try {
            settingsFromArgs({});
        } catch (e) {
            missing = e as Error;
        }
        expect(missing?.message).to.include(`set includeIpRanges: ["10.4.0.0/14","10.7.240.0/20"] in MeshRateLimit's args`);
    });
});

describe("the program resolves stack config once", () => {
    const raws = [
        DEV,
        { ...DEV, variant: "B" },
        { ...DEV, apiProfile: "seed", localPlacement: "single-route", globalLimits: '[{"key":"PATH","value":"/x","unit":"hour","requestsPerUnit":3}]' },
    ];

    it("the plan of an arguments object carries the settings they validate to, and its component plans are of those settings", () => {
        for (const raw of raws) {
            const args = rawToArgs(raw);
            const plan = planMeshRateLimit(args);
            expect(plan.args).to.equal(args);
            expect(plan.settings).to.deep.equal(resolveSettings(raw));
            expect(plan.bookinfo.args).to.deep.equal(bookinfoArgsFromSettings(plan.settings));
            expect(plan.global.args).to.deep.equal(globalArgsFromSettings(plan.settings));
            // The same plan with the options the program learns from the cluster: nothing computed again.
            const withOptions = plan.withOptions({ kubeContext: "kind", createIngressClass: false });
            expect([withOptions.settings, withOptions.global, withOptions.bookinfo]).to.deep.equal([plan.settings, plan.global, plan.bookinfo]);
            expect(withOptions.settings).to.equal(plan.settings);
            expect(withOptions.args).to.deep.equal({ ...args, kubeContext: "kind", createIngressClass: false });
        }
    });

    it("buildProgram: the plan it gives MeshRateLimit is of its arguments and carries the settings object it resolved", async () => {
        await pulumi.runtime.setMocks({ newResource: (a) => ({ id: "x", state: a.inputs }), call: (a) => a.inputs }, "mesh-ratelimit", "dev", false);
        const all = Object.fromEntries(Object.entries(DEV).map(([k, v]) => [`mesh-ratelimit:${k}`, String(v)]));
        const { settings, args, plan } = buildProgram(all, { report: () => {} });
        expect(plan.settings).to.equal(settings);
        expect(plan.args).to.equal(args);
        expect(args.variant).to.equal(settings.variant);
    });
});

describe("one message per rule: the components' rules, reported for stack config", () => {
    it("every component field of CONFIG_KEY_OF_FIELD is set by a config key", () => {
        for (const [field, key] of Object.entries(CONFIG_KEY_OF_FIELD)) expect(CONFIG_KEY_NAMES.has(key), `${field} → ${key}`).to.equal(true);
    });

    it("a component's rule names the config key and keeps the component's message", () => {
        const config = problemsOfConfig({
            ...DEV,
            domain: "a b",
            ratelimitGrpcPort: "6070",
            redisMode: "cluster",
            redisAddress: "r:6379",
            redisPipelineWindow: "2 x",
        });
        const component = [...domainProblems("a b"), ...grpcPortProblems(DEFAULTS.ratelimitDebugPort), ...pipelineWindowProblems("2 x")];
        expect(config.map((p) => [p.key, p.problem])).to.deep.equal([
            ["domain", component[0].problem],
            ["redisPipelineWindow", component[2].problem],
            ["ratelimitGrpcPort", component[1].problem],
        ]);
        expect(config.map((p) => p.fix)).to.deep.equal([
            "pulumi config set domain ab",
            "pulumi config set redisPipelineWindow 0",
            "pulumi config set ratelimitGrpcPort 8081",
        ]);
    });
});

function problemsOfConfig(raw: Record<string, string>) {
    try {
        resolveSettings(raw);
    } catch (e) {
        return (e as InputError).problems;
    }
    throw new Error("expected an InputError");
}

describe("MeshRateLimit arguments: fixes phrased as arguments (ARGS_FIX)", () => {
    const sets: [string, string, string][] = [
        ["includeIpRanges", "10.0.0.0/8,10.1.0.0/16", `set includeIpRanges: ["10.0.0.0/8","10.1.0.0/16"] in MeshRateLimit's args`],
        ["includeIpRanges", "10.0.0.0/8", `set includeIpRanges: ["10.0.0.0/8"] in MeshRateLimit's args`],
        ["catchAllLimit", "100", "set catchAllLimit: 100 in MeshRateLimit's args"],
        ["catchAllLimit", "0", "set catchAllLimit: 0 in MeshRateLimit's args"],
        ["x", "-1", `set x: "-1" in MeshRateLimit's args`],
        ["x", "1.5", `set x: "1.5" in MeshRateLimit's args`],
        ["x", "12a", `set x: "12a" in MeshRateLimit's args`],
        ["x", "a12", `set x: "a12" in MeshRateLimit's args`],
        ["managedApi", "true", "set managedApi: true in MeshRateLimit's args"],
        ["managedApi", "false", "set managedApi: false in MeshRateLimit's args"],
        ["x", "True", `set x: "True" in MeshRateLimit's args`],
        ["x", "truex", `set x: "truex" in MeshRateLimit's args`],
        ["x", "notfalse", `set x: "notfalse" in MeshRateLimit's args`],
        ["descriptors", '[{"key":"PATH"}]', `set descriptors: [{"key":"PATH"}] in MeshRateLimit's args`],
        ["x", '{"a":1}', `set x: {"a":1} in MeshRateLimit's args`],
        ["x", "a[1]", `set x: "a[1]" in MeshRateLimit's args`],
        ["x", "<json>", `set x: "<json>" in MeshRateLimit's args`],
        ["variant", "A", `set variant: "A" in MeshRateLimit's args`],
        ["x", 'say "hi"', `set x: "say \\"hi\\"" in MeshRateLimit's args`],
        ["x", "", `set x: "" in MeshRateLimit's args`],
    ];
    for (const [k, v, want] of sets) {
        it(`set(${k}, ${JSON.stringify(v)})`, () => {
            expect(ARGS_FIX.set(k, v)).to.equal(want);
        });
    }

    it("rm, rename (value shell-quoted when needed), header singular and plural", () => {
        expect(ARGS_FIX.rm("descriptorz")).to.equal("remove descriptorz from MeshRateLimit's args");
        expect(ARGS_FIX.rename("descriptorz", "descriptors", "x")).to.equal("rename descriptorz to descriptors (value x)");
        expect(ARGS_FIX.rename("a", "b", "x y")).to.equal("rename a to b (value 'x y')");
        expect(ARGS_FIX.header(1)).to.equal("MeshRateLimit: invalid arguments (1 problem); nothing was created:");
        expect(ARGS_FIX.header(2)).to.equal("MeshRateLimit: invalid arguments (2 problems); nothing was created:");
        expect(ARGS_FIX.header(0)).to.equal("MeshRateLimit: invalid arguments (0 problems); nothing was created:");
    });
});

describe("MeshRateLimit arguments: rawToArgs", () => {
    it("rawToArgs: trimmed, empty = unset, typed by the key's kind, unknown keys dropped", () => {
        const args = rawToArgs({
            includeIpRanges: " 10.0.0.0/8 , ,10.1.0.0/16 ",
            descriptors: ' [{"key":"PATH","unit":"hour","requestsPerUnit":9}] ',
            catchAllLimit: " 7 ",
            localBucket: "0",
            managedApi: "TRUE",
            mutualTls: "False",
            awaitRollout: "false",
            domain: "  shop  ",
            variant: "",
            unit: "   ",
            apiLimit: undefined,
            bogus: "x",
        });
        expect(args).to.deep.equal({
            includeIpRanges: ["10.0.0.0/8", "10.1.0.0/16"],
            descriptors: [{ key: "PATH", unit: "hour", requestsPerUnit: 9 }],
            catchAllLimit: 7,
            localBucket: 0,
            managedApi: true,
            mutualTls: false,
            awaitRollout: false,
            domain: "shop",
        });
    });
});

describe("MeshRateLimit arguments: settingsFromArgs", () => {
    const problemsOf = (f: () => unknown) => {
        try {
            f();
        } catch (e) {
            expect(e).to.be.instanceOf(InputError);
            const err = e as InputError;
            expect(err.name).to.equal("InputError");
            return {
                message: err.message,
                problems: err.problems.map((p) => ({ key: p.key, value: p.value, problem: p.problem, fix: p.fixWith ? p.fixWith(ARGS_FIX) : p.fix })),
            };
        }
        throw new Error("expected an InputError about stack config");
    };

    it("valid arguments: the same settings as the stack config they stand for", () => {
        const s = settingsFromArgs({
            managedApi: false,
            variant: "B" as any,
            catchAllLimit: 7,
            kubeContext: "kind",
            createIngressClass: false,
            createPeerAuthentication: true,
        });
        expect(s).to.deep.equal(resolveSettings({ managedApi: "false", variant: "B", catchAllLimit: "7" }));
        expect([s.variant, s.global.domain, s.managedApi]).to.deep.equal(["B", "productpage-ratelimit", undefined]);
    });

    it("no arguments (and null): the two required keys, phrased as arguments, without the project prefix", () => {
        const want =
            "MeshRateLimit: invalid arguments (2 problems); nothing was created:\n" +
            "  - includeIpRanges = (not set): is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)\n" +
            `    fix: set includeIpRanges: ["10.4.0.0/14","10.7.240.0/20"] in MeshRateLimit's args   (your cluster's pod and service CIDRs), or set managedApi: false in MeshRateLimit's args\n` +
            "  - espServiceName = (not set): is required: ESP needs the Cloud Endpoints service it serves (--service)\n" +
            `    fix: set espServiceName: "echo-api.endpoints.MY_PROJECT.cloud.goog" in MeshRateLimit's args, or set managedApi: false in MeshRateLimit's args`;
        expect(problemsOf(() => settingsFromArgs({})).message).to.equal(want);
        expect(problemsOf(() => settingsFromArgs(null as any)).message).to.equal(want);
    });

    it("an unknown argument, a bad word, number and boolean: every problem, exactly, the unknown one first", () => {
        const { message, problems } = problemsOf(() =>
            settingsFromArgs({ managedApi: false, variant: "c", catchAllLimit: 0, awaitRollout: "yes", bogus: 1 } as any),
        );
        expect(problems).to.deep.equal([
            { key: "bogus", value: "1", problem: "is not an argument of MeshRateLimit", fix: "remove bogus from MeshRateLimit's args" },
            { key: "variant", value: "c", problem: "must be one of 'A', 'B'", fix: `set variant: "A" in MeshRateLimit's args` },
            { key: "catchAllLimit", value: "0", problem: "must be at least 1", fix: "set catchAllLimit: 1 in MeshRateLimit's args" },
            { key: "awaitRollout", value: "yes", problem: "must be true or false", fix: "set awaitRollout: true in MeshRateLimit's args" },
        ]);
        expect(message).to.equal(
            [
                "MeshRateLimit: invalid arguments (4 problems); nothing was created:",
                '  - bogus = "1": is not an argument of MeshRateLimit',
                "    fix: remove bogus from MeshRateLimit's args",
                "  - variant = \"c\": must be one of 'A', 'B'",
                `    fix: set variant: "A" in MeshRateLimit's args`,
                '  - catchAllLimit = "0": must be at least 1',
                "    fix: set catchAllLimit: 1 in MeshRateLimit's args",
                '  - awaitRollout = "yes": must be true or false',
                "    fix: set awaitRollout: true in MeshRateLimit's args",
            ].join("\n"),
        );
    });

    it("one unknown argument alone: singular header, and the argument it is closest to", () => {
        expect(problemsOf(() => settingsFromArgs({ managedApi: false, kubeContxt: "kind" } as any)).message).to.equal(
            'MeshRateLimit: invalid arguments (1 problem); nothing was created:\n  - kubeContxt = "kind": is not an argument of MeshRateLimit\n    fix: rename kubeContxt to kubeContext',
        );
    });

    it("JSON arguments: a bad JSON text and a bad shape, fixes phrased as arguments", () => {
        const bad = problemsOf(() => settingsFromArgs({ managedApi: false, virtualServiceRoutes: "[" } as any)).problems;
        expect(bad.map((p) => [p.key, p.value, p.fix])).to.deep.equal([
            [
                "virtualServiceRoutes",
                "[",
                `set virtualServiceRoutes: "<json>" in MeshRateLimit's args (docs/configuration.md gives the shape), or remove virtualServiceRoutes from MeshRateLimit's args`,
            ],
        ]);
        const shape = problemsOf(() => settingsFromArgs({ managedApi: false, virtualServiceRoutes: [{}] } as any)).problems;
        expect(shape).to.deep.equal([
            {
                key: "virtualServiceRoutes",
                value: "[{}]",
                problem: "route #1 needs 'exact' and/or 'prefix': non-empty lists of paths starting with '/'",
                fix: `set virtualServiceRoutes: [{"exact":["/productpage"],"prefix":["/static"]},{"name":"api","prefix":["/api/v1/products"]}] in MeshRateLimit's args`,
            },
        ]);
    });

    it("an error that is not a stack-config InputError is rethrown as it is", () => {
        const routes: any[] = [];
        routes.push({ exact: ["/a"], self: routes });
        expect(() => settingsFromArgs({ managedApi: false, virtualServiceRoutes: routes } as any)).to.throw(TypeError, /circular/i);
    });
});
