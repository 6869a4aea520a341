/**
 * Stack config as the Pulumi CLI delivers it. The CLI merges the defaults Pulumi.yaml declares into
 * the config a program reads, so a program sees every declared key, set or not. A rule that fires
 * when a key is "given" must therefore never fire on a declared default: with such a rule the
 * shipped dev stack's first `pulumi up` would stop before creating anything.
 */
import { expect } from "chai";
import { CONFIG_KEYS } from "../../program/config-keys";
import { resolveSettings } from "../../program/config-args";
import { declaredDefaults, programConfig, registerProgram, stackFileConfig } from "../../render/render";
import { DEV } from "./helpers";

const PREFIX = "mesh-ratelimit:";
/** Pulumi.yaml's declared defaults of the project's keys, without the prefix, as the CLI delivers them. */
function projectDefaults(): Record<string, string> {
    return Object.fromEntries(
        Object.entries(declaredDefaults())
            .filter(([k]) => k.startsWith(PREFIX))
            .map(([k, v]) => [k.slice(PREFIX.length), v]),
    );
}

describe("stack config as the Pulumi CLI delivers it (Pulumi.yaml defaults merged)", () => {
    it("Pulumi.yaml declares defaults that a 'given' rule could mistake for the user's (the precondition of this test)", () => {
        const d = projectDefaults();
        expect(d.redisPasswordSecretKey).to.equal("password");
        expect(d.limitedPathLimit).to.equal("1");
        expect(d.preLimit).to.equal("true");
        expect(Object.keys(d).length).to.be.greaterThan(40);
    });

    it("the render merges them under the stack's values, as the CLI does", () => {
        const c = programConfig({ base: { ...DEV, redisPasswordSecretKey: "pw" } });
        expect(c[`${PREFIX}limitedPathLimit`]).to.equal("1");
        expect(c[`${PREFIX}redisPasswordSecretKey`]).to.equal("pw");
        expect(c["kubernetes:enableConfigMapMutable"]).to.equal("true");
    });

    for (const variant of ["A", "B"]) {
        for (const apiProfile of ["current", "seed"]) {
            it(`the shipped dev stack, variant ${variant}, ${apiProfile} profile, with every declared default: no problem`, async () => {
                const { settings } = await registerProgram({ base: { ...stackFileConfig("dev"), variant, apiProfile } });
                expect(settings.variant).to.equal(variant);
            });
        }
    }

    it("every declared key set explicitly to its declared default resolves as if unset (variants A and B)", () => {
        const d = projectDefaults();
        for (const variant of ["A", "B"]) {
            const base = { ...DEV, variant };
            const plain = JSON.stringify(resolveSettings(base));
            // An empty default means "unset" (the variant's preset, or derived): setting "" unsets a key.
            for (const [k, v] of Object.entries(d).filter(([k, v]) => v !== "" && !(k in base))) {
                let got: string;
                try {
                    got = JSON.stringify(resolveSettings({ ...base, [k]: v }));
                } catch (e) {
                    throw new Error(`variant ${variant}: ${k} = ${JSON.stringify(v)} (its declared default) was refused:\n${(e as Error).message}`, {
                        cause: e,
                    });
                }
                expect(got, `variant ${variant}: ${k} = its declared default changed the settings`).to.equal(plain);
            }
        }
    });

    it("all declared defaults at once, beside keys that exclude other keys (descriptors, an existing Redis, variant B)", () => {
        const all = { ...projectDefaults(), ...DEV };
        const cases: Record<string, string>[] = [
            { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":5}]' },
            { redisMode: "external", redisAddress: "redis.cache:6379" },
            { redisMode: "sentinel", redisAddress: "s0:26379", redisSentinelMaster: "mymaster" },
            { variant: "B" },
        ];
        for (const c of cases) {
            expect(() => resolveSettings({ ...all, ...c }), JSON.stringify(c)).not.to.throw();
        }
    });

    it("a declared key that differs from its default is still the user's (negative control)", () => {
        expect(() => resolveSettings({ ...DEV, ...projectDefaults(), redisPasswordSecretKey: "pw" })).to.throw(
            /redisPasswordSecretKey = "pw": names a key of redisPasswordSecret, which is not set/,
        );
    });

    it("every key with a non-empty default in the schema is declared with that default in Pulumi.yaml", () => {
        const d = projectDefaults();
        for (const k of CONFIG_KEYS.filter((k) => k.default !== "" && !(k.kind === "integer" && k.default === ""))) {
            expect(d[k.key], k.key).to.equal(k.default);
        }
    });
});
