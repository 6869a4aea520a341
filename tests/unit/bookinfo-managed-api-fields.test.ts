/**
 * Bookinfo's and ManagedApi's fields declared once (components/bookinfo/fields.ts,
 * managed-api-fields.ts): their argument interfaces are generated from the declarations, the
 * resolves fill in exactly the declared defaults, MeshRateLimit and the stack's keys take the same
 * ones, each declared default meets its own rule, and the rules refuse with the texts the checks
 * gave. Controls: a changed declaration makes the generated file stale; a bad value breaks a rule.
 */
import { expect } from "chai";
import * as fs from "fs";
import { BOOKINFO_ARGS_FIELDS, BOOKINFO_OPTIONS_FIELDS } from "../../components/bookinfo/fields";
import { MANAGED_API_ARGS_FIELDS, MANAGED_API_OPTIONS_FIELDS } from "../../components/managed-api/fields";
import { resolveBookinfo } from "../../components/bookinfo/resolve";
import { resolveManagedApi } from "../../components/managed-api/resolve";
import { managedApiFieldProblems } from "../../components/managed-api/resolve";
import { DEFAULTS } from "../../components/common/defaults";
import { FieldDecl, NestedDecl, givenProblems } from "../../lib/field-decl";
import { MESH_DEFAULTS } from "../../mesh/mesh-defaults";
import { CONFIG_KEYS, configDefault, declarationOf, stackText } from "../../program/config-keys";
import { BOOKINFO_OUT, MANAGED_API_OUT, generatedText } from "../../scripts/gen-arg-types";

const ESP = { serviceName: "echo-api.endpoints.p.cloud.goog", includeIpRanges: ["10.4.0.0/14"] };

/** The declared defaults of a table, by field (the fields without one left out). */
function declaredDefaults(table: Readonly<Record<string, FieldDecl<unknown> | NestedDecl>>): [string, unknown][] {
    return Object.entries(table).flatMap(([k, d]) => ("rule" in d && d.default !== undefined ? [[k, d.default] as [string, unknown]] : []));
}

describe("Bookinfo's and ManagedApi's fields: one declaration each", () => {
    it("components/bookinfo/args.generated.ts and managed-api-args.generated.ts are generated from the declarations; control: a changed default makes them stale", () => {
        expect(fs.readFileSync(BOOKINFO_OUT, "utf8"), "run npm run gen").to.equal(generatedText(BOOKINFO_OUT));
        expect(fs.readFileSync(MANAGED_API_OUT, "utf8"), "run npm run gen").to.equal(generatedText(MANAGED_API_OUT));
        expect(generatedText(MANAGED_API_OUT))
            .to.include("Defaults to `simple-ingress`.")
            .and.include("Defaults to `default`; MeshRateLimit's to `bookinfo.namespace`.");
        expect(generatedText(BOOKINFO_OUT)).to.include('Defaults to `{ istio: "ingressgateway" }`.').and.include('Defaults to `["*"]`.');
        const name = BOOKINFO_OPTIONS_FIELDS.gatewayName as { default: string };
        const before = name.default;
        try {
            name.default = "other-gateway";
            expect(generatedText(BOOKINFO_OUT)).to.not.equal(fs.readFileSync(BOOKINFO_OUT, "utf8"));
        } finally {
            name.default = before;
        }
    });

    it("the resolves fill in exactly the declared defaults, field by field", () => {
        const bookinfo = resolveBookinfo({}).value as unknown as Record<string, unknown>;
        const bookinfoDefaults = declaredDefaults({ ...BOOKINFO_OPTIONS_FIELDS, ...BOOKINFO_ARGS_FIELDS });
        expect(bookinfoDefaults.map(([k]) => k)).to.have.length(12);
        for (const [k, d] of bookinfoDefaults) expect(bookinfo[k], k).to.deep.equal(d);
        const esp = resolveManagedApi(ESP).value as unknown as Record<string, unknown>;
        const espDefaults = declaredDefaults({ ...MANAGED_API_OPTIONS_FIELDS, ...MANAGED_API_ARGS_FIELDS });
        expect(espDefaults.map(([k]) => k)).to.have.length(11);
        for (const [k, d] of espDefaults) expect(esp[k], k).to.deep.equal(d);
    });

    it("MeshRateLimit's defaults and the stack keys' are the declared ones (the managed API's namespace bookinfo's there)", () => {
        for (const [k, d] of declaredDefaults(BOOKINFO_OPTIONS_FIELDS)) expect((MESH_DEFAULTS.bookinfo as Record<string, unknown>)[k], k).to.deep.equal(d);
        for (const [k, d] of declaredDefaults(MANAGED_API_OPTIONS_FIELDS))
            expect((MESH_DEFAULTS.managedApi as Record<string, unknown>)[k], k).to.deep.equal(k === "namespace" ? undefined : d);
        expect(MESH_DEFAULTS.mesh.gatewaySelector).to.equal("istio=ingressgateway");
        expect(MESH_DEFAULTS.local.serviceLabel).to.equal(BOOKINFO_ARGS_FIELDS.localStatsApp.default);
        expect(configDefault("gatewayName")).to.equal("bookinfo-gateway");
        expect(configDefault("espImage")).to.equal(MANAGED_API_OPTIONS_FIELDS.espImage.default);
        expect(configDefault("managedApiNamespace")).to.equal("");
        const byKey = new Map(CONFIG_KEYS.map((k) => [k.key, k]));
        for (const [path, table] of [
            ["bookinfo", BOOKINFO_OPTIONS_FIELDS],
            ["managedApi", MANAGED_API_OPTIONS_FIELDS],
        ] as const)
            for (const [k, d] of Object.entries(table)) {
                if (!("rule" in d)) continue;
                const key = byKey.get(d.stackKey!);
                expect(key, `${path}.${k}`).to.not.equal(undefined);
                expect(declarationOf(key!.field), `${path}.${k}`).to.equal(d);
                // The declaration's words, a field of the arguments named by the key that sets it (`global.namespace` → `ratelimitNamespace`).
                expect(key!.description.startsWith(stackText(d.doc)), `${path}.${k}`).to.equal(true);
            }
    });

    it("no default of these components is left in components/common/defaults.ts", () => {
        const left = Object.values(DEFAULTS).map(String);
        for (const v of [
            "bookinfo-gateway",
            "1.20.2",
            "simple-ingress",
            "/echo",
            "gcr.io/endpoints-release/endpoints-runtime:1.57.0",
            "own-namespace",
            "productpage",
        ])
            expect(left, v).to.not.include(v);
    });

    it("every declared default meets its own rule; a bad value is refused with the checks' text, its fix the default", () => {
        for (const [k, d] of Object.entries({ ...BOOKINFO_OPTIONS_FIELDS, ...BOOKINFO_ARGS_FIELDS, ...MANAGED_API_OPTIONS_FIELDS, ...MANAGED_API_ARGS_FIELDS }))
            if ("rule" in d && d.default !== undefined) expect(givenProblems(d, k, d.default), k).to.deep.equal([]);
        expect(givenProblems(BOOKINFO_OPTIONS_FIELDS.version, "version", "x y")).to.deep.equal([
            { key: "version", value: "x y", problem: "must be an image tag", fix: 'use "1.20.2"' },
        ]);
        expect(givenProblems(BOOKINFO_OPTIONS_FIELDS.gatewayPort, "gatewayPort", 0)[0]!.problem).to.equal("must be between 1 and 65535");
        expect(givenProblems(BOOKINFO_ARGS_FIELDS.gatewaySelector, "gatewaySelector", {})[0]!.problem).to.equal("must name at least one pod label");
        expect(givenProblems(BOOKINFO_OPTIONS_FIELDS.hosts, "hosts", ["a:80"])[0]!.problem).to.match(/^must be a non-empty list of hosts/);
        expect(resolveBookinfo({ gatewayHostScope: "any" as never }).problems.map((p) => p.key)).to.deep.equal(["gatewayHostScope"]);
        const esp = managedApiFieldProblems({ ...ESP, ingressPath: "echo x", portMode: "https" as never });
        expect(esp.map((p) => [p.key, p.problem])).to.deep.equal([
            ["portMode", "must be one of 'http', 'tcp'"],
            ["ingressPath", "must be a URL path starting with '/' and without spaces"],
        ]);
    });
});
