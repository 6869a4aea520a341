/**
 * GlobalRateLimit's and PlatformRateLimit's fields declared once (lib/field-decl.ts;
 * components/global-ratelimit/fields.ts, service-fields.ts, platform-ratelimit-fields.ts): the argument interfaces are generated from the declarations, each declared
 * default meets its own rule, the stack's keys name the fields that name them, and a key's
 * description is its field's declaration, never a copy. Controls: a changed declaration makes the
 * generated file stale, a bad value breaks a rule, a row restating a description is refused.
 */
import { expect } from "chai";
import * as fs from "fs";
import { GLOBAL_ARGS_FIELDS, GLOBAL_ARG_INTERFACES, GLOBAL_FIELDS } from "../../components/global-ratelimit/fields";
import { PLATFORM_ARG_INTERFACES, PLATFORM_CALL_FIELDS } from "../../components/platform-ratelimit/fields";
import { SERVICE_FIELDS, tuningEnv, tuningOf } from "../../components/service/fields";
import { FieldDecl, defaultSentence, fieldDoc, givenProblems } from "../../lib/field-decl";
import { CONFIG_KEYS, configDefault, declarationOf, keySpecOf } from "../../program/config-keys";
import { BOOKINFO_OUT, MANAGED_API_OUT, MESH_OUT, OUT, PLATFORM_OUT, generated, generatedText, jsDoc } from "../../scripts/gen-arg-types";

/** Every plain field's declaration, by its argument path. */
const DECLARED: [string, FieldDecl<unknown>][] = [...GLOBAL_ARG_INTERFACES, ...PLATFORM_ARG_INTERFACES].flatMap((i) =>
    Object.entries(i.fields).flatMap(([k, d]) => ("rule" in d ? [[`${i.name}.${k}`, d] as [string, FieldDecl<unknown>]] : [])),
);

describe("GlobalRateLimit's fields: one declaration each", () => {
    it("components/global-ratelimit/args.generated.ts is generated from the declarations; control: a changed doc makes it stale", () => {
        expect(fs.readFileSync(OUT, "utf8"), "run npm run gen").to.equal(generatedText(OUT));
        const before = GLOBAL_FIELDS.timeout.doc;
        try {
            GLOBAL_FIELDS.timeout.doc = "Something else.";
            expect(generatedText(OUT)).to.not.equal(fs.readFileSync(OUT, "utf8"));
            expect(generatedText(OUT)).to.include("/** Something else. Defaults to `10s`. */");
        } finally {
            GLOBAL_FIELDS.timeout.doc = before;
        }
    });

    it("components/platform-ratelimit/args.generated.ts is generated from the declarations too (one generator, one check); control: a changed default makes it stale", () => {
        expect(generated().map(([out]) => out)).to.include.members([OUT, PLATFORM_OUT, BOOKINFO_OUT, MANAGED_API_OUT, MESH_OUT]);
        expect(fs.readFileSync(PLATFORM_OUT, "utf8"), "run npm run gen").to.equal(generatedText(PLATFORM_OUT));
        expect(generatedText(PLATFORM_OUT)).to.include("Defaults to `1s` (1 s).").and.include("Defaults to the component's `failureModeDeny`.");
        const t = PLATFORM_CALL_FIELDS.timeout as { default: string };
        const before = t.default;
        try {
            t.default = "0.1s";
            expect(generatedText(PLATFORM_OUT)).to.not.equal(fs.readFileSync(PLATFORM_OUT, "utf8"));
            expect(generatedText(PLATFORM_OUT)).to.include("Defaults to `0.1s` (1 s).");
        } finally {
            t.default = before;
        }
    });

    it("a field's JSDoc is its text and its default's sentence; a derived default says its note, a required field none", () => {
        expect(fieldDoc(GLOBAL_FIELDS.timeout)).to.equal("Timeout of the gateway's call to the service (a protobuf duration, e.g. `0.5s`). Defaults to `10s`.");
        expect(defaultSentence(GLOBAL_FIELDS.filterLayout)).to.equal(
            "Defaults to `FilterLayout.PerInstance`; MeshRateLimit's to `FilterLayout.Shared`, the specification's layout.",
        );
        expect(defaultSentence(GLOBAL_FIELDS.statusOnError)).to.equal("Defaults to none (Envoy's 500).");
        expect(defaultSentence(GLOBAL_ARGS_FIELDS.domain)).to.equal("");
        expect(jsDoc("x ".repeat(100).trim(), "    ")).to.have.length.above(2);
    });

    it("every declared default meets its own rule; control: a wrong value breaks it, its fix falling back to the default", () => {
        for (const [path, d] of DECLARED) if (d.default !== undefined) expect(givenProblems(d, path, d.default), path).to.deep.equal([]);
        const [p] = givenProblems(GLOBAL_FIELDS.timeout, "timeout", "10");
        expect(p!.fix).to.equal('set timeout to "10s"');
        expect(givenProblems(SERVICE_FIELDS.replicas, "service.replicas", 0)[0]!.fix).to.equal("set service.replicas to 1");
        expect(givenProblems(SERVICE_FIELDS.logLevel, "service.logLevel", "verbose")[0]!.problem).to.match(/^must be one of 'warn', /);
        expect(givenProblems(GLOBAL_FIELDS.timeout, "timeout", undefined)).to.deep.equal([]);
    });

    it("each declared stack key is a key that sets that field, named by the declaration alone", () => {
        const byKey = new Map(CONFIG_KEYS.map((k) => [k.key, k]));
        for (const [path, d] of DECLARED) {
            if (d.stackKey === undefined) continue;
            const k = byKey.get(d.stackKey);
            expect(k, `${path}: ${d.stackKey}`).to.not.equal(undefined);
            expect(declarationOf(k!.field), path).to.equal(d);
        }
        const text = fs.readFileSync(require.resolve("../../program/config-keys"), "utf8");
        expect(text).to.not.match(/key: "rateLimitTimeout"/);
        expect(text, "the key table does not name the field either").to.not.match(/"global", "timeout"/);
    });

    it("a key's name, kind, default, description and section come from the declaration, choices spelt as the stack takes them; controls: a restating row is refused", () => {
        expect(configDefault("rateLimitTimeout")).to.equal(GLOBAL_FIELDS.timeout.default);
        const layout = CONFIG_KEYS.find((k) => k.key === "filterLayout")!.description;
        expect(layout).to.include("`per-instance`:").and.to.include("`shared`:").and.not.include("FilterLayout.");
        const spec = CONFIG_KEYS.find((k) => k.key === "rateLimitTimeout")!;
        expect([spec.field, spec.kind, spec.default, spec.description, spec.group]).to.deep.equal([
            ["global", "timeout"],
            "string",
            "10s",
            GLOBAL_FIELDS.timeout.doc,
            GLOBAL_FIELDS.timeout.stackGroup,
        ]);
        const status = CONFIG_KEYS.find((k) => k.key === "statusOnError")!;
        expect([status.default, status.defaultNote]).to.deep.equal(["", GLOBAL_FIELDS.statusOnError.defaultNote]);
        expect(CONFIG_KEYS.find((k) => k.key === "configName")!.description).to.equal(`${SERVICE_FIELDS.configName.doc} Spec \`<config_name>\`.`);
        expect(CONFIG_KEYS.find((k) => k.key === "ratelimitReplicas")!.kind).to.equal("integer");
        const row = { field: ["global", "timeout"], group: "limits" } as const;
        expect(() => keySpecOf(row)).to.throw(/listed by its declaration/);
        expect(() => keySpecOf({ ...row, description: GLOBAL_FIELDS.timeout.doc })).to.throw(/restates its field's declaration/);
        expect(() => keySpecOf({ ...row, key: "rateLimitTimeout" })).to.throw(/restates its field's declaration/);
        expect(() => keySpecOf({ ...row, field: ["global", "redis", "passwordSecret", "key"] })).to.throw(/needs a name, a kind and a description of its own/);
    });

    it("the service's tuning options: defaults and environment variables from the one table", () => {
        expect(tuningOf({}).redisPoolSize).to.equal(SERVICE_FIELDS.redisPoolSize.default);
        expect(tuningOf({ redisPoolSize: 3 }).redisPoolSize).to.equal(3);
        const env = tuningEnv(tuningOf({ localCacheSizeInBytes: 7 }));
        expect(env.map((e) => e.name)).to.deep.equal([
            "REDIS_POOL_SIZE",
            "REDIS_PIPELINE_WINDOW",
            "REDIS_PIPELINE_LIMIT",
            "LOCAL_CACHE_SIZE_IN_BYTES",
            "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT",
        ]);
        expect(env.find((e) => e.name === "LOCAL_CACHE_SIZE_IN_BYTES")!.value).to.equal("7");
    });
});
