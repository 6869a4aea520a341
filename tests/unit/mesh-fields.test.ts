/**
 * MeshRateLimit's own fields declared once (mesh/mesh-fields.ts): the defaults MeshRateLimit fills
 * are the declared ones, each declared default meets its rule, the checks refuse a bad value with
 * the declared rule's own problem, and the stack's keys of these fields are their declarations.
 * Controls: a fill that differs is found, a rule that accepts anything lets the bad value through,
 * a row restating a declaration is refused.
 */
import { expect } from "chai";
import { ARGS_FIX } from "../../mesh/arg-problems";
import { MeshOwnSettings, checkMeshArgs } from "../../mesh/mesh-checks";
import { MESH_DEFAULTS } from "../../mesh/mesh-defaults";
import { MESH_FIELD_TABLES, MESH_PLACEMENT_FIELDS, MESH_TOP_FIELDS, meshDeclarationOf } from "../../mesh/mesh-fields";
import { MeshRateLimitArgs } from "../../mesh/mesh-ratelimit-args.generated";
import { CONFIG_KEYS, configDefault, keySpecOf } from "../../program/config-keys";
import { Rule, customRule, givenProblems } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";

/** Every declared default of MeshRateLimit's own fields, by the field's key (`mesh.vhostScope`). */
function declaredDefaults(): Record<string, unknown> {
    return Object.fromEntries(
        Object.entries(MESH_FIELD_TABLES).flatMap(([at, table]) =>
            Object.entries(table).flatMap(([k, d]) => ("default" in d && d.default !== undefined ? [[at ? `${at}.${k}` : k, d.default]] : [])),
        ),
    );
}

/** What MeshRateLimit fills for those fields when none is given: its checks' settings, and what it hands the components itself (mesh-ratelimit.ts). */
function filled(s: MeshOwnSettings): Record<string, unknown> {
    const d = s.global.descriptors;
    return {
        variant: s.variant,
        apiProfile: s.apiProfile,
        meshMode: s.meshMode,
        awaitRollout: s.awaitRollout,
        ...Object.fromEntries(Object.entries(s.paths).map(([k, v]) => [`paths.${k}`, v])),
        "limits.apiRoute": s.global.apiRoute?.route,
        "limits.apiDescriptorValue": s.global.apiRoute?.descriptorValue,
        "limits.unit": d[0].unit,
        "limits.limitedPath": d[0].requestsPerUnit,
        "limits.catchAll": d[d.length - 1].requestsPerUnit,
        "mesh.namespace": s.mesh.namespace,
        "mesh.gatewaySelector": `${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}`,
        "mesh.gatewayNamespace": s.mesh.gatewayNamespace,
        "mesh.vhostScope": s.mesh.vhostScope,
        "mesh.filterNamespaces": s.mesh.filterNamespaces,
        "mesh.mutualTlsScope": s.mesh.mutualTlsScope,
        "mesh.mutualTls": s.mesh.mutualTls,
        "global.accessPolicy.enabled": s.access.enabled,
        "local.placement": s.local.placement,
        "local.enabled": s.local.enabled,
        "local.serviceLabel": s.local.serviceLabel,
        "local.port": s.local.port,
        "bookinfo.mode": s.bookinfoMode,
        "managedApi.enabled": s.managedApi !== undefined,
        createIngressClass: MESH_DEFAULTS.createIngressClass,
        keepIngressClassOnDestroy: MESH_DEFAULTS.keepIngressClassOnDestroy,
        createPeerAuthentication: MESH_DEFAULTS.createPeerAuthentication,
        keepPeerAuthenticationOnDestroy: MESH_DEFAULTS.keepPeerAuthenticationOnDestroy,
    };
}

/** The fields whose declared default differs from the one filled (or that no fill names). */
function differences(declared: Record<string, unknown>, fill: Record<string, unknown>): string[] {
    return Object.keys(declared).filter((k) => !(k in fill) || fill[k] !== declared[k]);
}

/** Arguments with one value at a field's key. */
function argsWith(key: string, value: unknown): MeshRateLimitArgs {
    const parts = key.split(".");
    const args: Record<string, unknown> = {};
    let at = args;
    for (const p of parts.slice(0, -1)) at = (at[p] = {}) as Record<string, unknown>;
    at[parts[parts.length - 1]] = value;
    return args as MeshRateLimitArgs;
}

/** A problem as a user reads it: its field, its text, its fix for the arguments. */
function shown(p: Problem): [string, string, string] {
    return [p.key, p.problemWith ? p.problemWith(ARGS_FIX) : p.problem, p.fixWith ? p.fixWith(ARGS_FIX) : p.fix];
}

/** Bad values of declared fields (with the fix's fallback where the variant presets it). */
const BAD: [string, unknown, unknown?][] = [
    ["variant", "C"],
    ["apiProfile", "old"],
    ["meshMode", "wide"],
    ["awaitRollout", "yes"],
    ["paths.page", "no-slash"],
    ["paths.apiPrefix", "/api v1"],
    ["limits.unit", "fortnight"],
    ["limits.catchAll", 0],
    ["limits.limitedPath", 5e9],
    ["mesh.namespace", "Bad_NS"],
    ["mesh.gatewaySelector", "nolabel"],
    ["mesh.vhostScope", "every"],
    ["mesh.mutualTls", "no"],
    ["local.serviceLabel", "-x-"],
    ["local.bucket", 0, 4],
    ["local.port", 70000],
    ["local.placement", "somewhere"],
    ["local.enabled", "yes"],
    ["bookinfo.mode", "maybe"],
    ["managedApi.enabled", "on"],
    ["global.accessPolicy.enabled", 2],
];

describe("MeshRateLimit's own fields: one declaration each", () => {
    it("the defaults MeshRateLimit fills are the declared ones; control: a fill that differs is found", () => {
        const declared = declaredDefaults();
        expect(Object.keys(declared)).to.include.members(["variant", "paths.apiPrefix", "mesh.vhostScope", "local.port", "createIngressClass"]);
        const fill = filled(checkMeshArgs({}).settings);
        expect(differences(declared, fill)).to.deep.equal([]);
        expect(differences(declared, { ...fill, "mesh.vhostScope": "all" })).to.deep.equal(["mesh.vhostScope"]);
        const { variant: _v, ...withoutVariant } = fill;
        expect(differences(declared, withoutVariant)).to.deep.equal(["variant"]);
    });

    it("every declared default meets its own rule", () => {
        for (const [key, value] of Object.entries(declaredDefaults())) {
            expect(givenProblems(meshDeclarationOf(key.split("."))!, key, value), key).to.deep.equal([]);
        }
    });

    it("the checks refuse a bad value with the declared rule's own problem and fix", () => {
        for (const [key, value, fallback] of BAD) {
            const d = meshDeclarationOf(key.split("."))!;
            const expected = d.rule.problems(key, value, fallback ?? d.default).map(shown);
            expect(expected, key).to.have.length.above(0);
            const got = checkMeshArgs(argsWith(key, value)).problems.filter((p) => p.key === key);
            expect(got.map(shown), key).to.deep.equal(expected);
        }
    });

    it("control: with the rule declared to accept anything, the checks let the bad value through", () => {
        const decl = MESH_PLACEMENT_FIELDS.vhostScope as { rule: Rule<unknown> };
        const rule = decl.rule;
        try {
            decl.rule = customRule("anything", () => []);
            expect(checkMeshArgs(argsWith("mesh.vhostScope", "every")).problems.filter((p) => p.key === "mesh.vhostScope")).to.deep.equal([]);
        } finally {
            decl.rule = rule;
        }
        expect(checkMeshArgs(argsWith("mesh.vhostScope", "every")).problems.filter((p) => p.key === "mesh.vhostScope")).to.have.length(1);
    });

    it("the stack's keys of these fields are their declarations: name, kind, default, description (other fields by their keys), derived default's note", () => {
        const key = (k: string) => CONFIG_KEYS.find((c) => c.key === k)!;
        expect(key("meshNamespace").field).to.deep.equal(["mesh", "namespace"]);
        expect(configDefault("apiPrefix")).to.equal(MESH_DEFAULTS.paths.apiPrefix);
        expect(configDefault("vhostScope")).to.equal(MESH_PLACEMENT_FIELDS.vhostScope.default);
        expect(key("localServicePort").kind).to.equal("integer");
        expect(key("descriptors").kind).to.equal("json");
        expect(key("includeIpRanges").kind).to.equal("string");
        // `bookinfo.hosts`, `global.failureModeDeny` in the declaration: the keys that set them in the stack's words.
        expect(key("vhostScope").description).to.include("`gatewayHosts`").and.include("`failureModeDeny`").and.not.include("`bookinfo.hosts`");
        expect(key("includeIpRanges")).to.include({ default: "", defaultNote: "required when `managedApi` is true" });
        expect(key("variant").description).to.equal(MESH_TOP_FIELDS.variant.doc);
        expect(() => keySpecOf({ group: "names", field: ["mesh", "namespace"], key: "meshNamespace", kind: "string", description: "x" })).to.throw(/restates/);
    });
});
