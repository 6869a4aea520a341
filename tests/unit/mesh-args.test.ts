/**
 * MeshRateLimit's typed arguments: generated from the config table, the program's stack config
 * maps to them without loss, and the component validates them itself (fixes phrased as arguments).
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { buildProgram } from "../../stack/program";
import * as fs from "fs";
import { OUT, generate } from "../../scripts/gen-mesh-args";
import { rawToArgs, settingsFromArgs } from "../../stack/mesh-args";
import { bookinfoArgsFromSettings, globalArgsFromSettings, planMeshRateLimit } from "../../stack/mesh-ratelimit";
import { CONFIG_KEYS, CONFIG_KEY_NAMES, CONFIG_KEY_OF_FIELD } from "../../stack/config/config-schema";
import { domainProblems, grpcPortProblems, pipelineWindowProblems } from "../../components/global-ratelimit";
import { DEFAULTS } from "../../components/defaults";
import { InputError } from "../../lib/problems";
import { StackVariant } from "../../components/mesh-enums";
import { LimitUnit } from "../../builders/rules";
import { resolveSettings } from "../../stack/config/settings";
import { DEV } from "./helpers";

describe("MeshRateLimit arguments", () => {
    it("stack/mesh-ratelimit-args.ts is generated from stack/config/config-schema.ts (run npm run gen:mesh-args)", () => {
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
