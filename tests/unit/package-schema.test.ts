/**
 * The component package for every Pulumi language: Pulumi's own schema analyzer
 * (`ComponentProvider.getSchema()`, no CLI, no gRPC server) accepts every exported component, with
 * typed inputs and outputs; `plugin/` is a folder Pulumi's plugin loader accepts and loads the way its
 * Node.js plugin runner does (`require(<folder>)`); the schema is committed; importing the entry
 * registers nothing.
 */
import * as pulumi from "@pulumi/pulumi";
import { ComponentProvider } from "@pulumi/pulumi/provider/experimental";
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { CONFIG_KEYS } from "../../program/config-keys";
import { RULE_FIELDS } from "../../components/rules/rule-fields";
import { keyOf } from "../../mesh/arg-paths";
import { OUT as PACKAGE_DOCS, SCHEMA_OUT, render as renderPackageDocs, schemaText } from "../../scripts/gen-package-docs";
// What the pinned SDK's plugin runner (cmd/run-plugin/run.js) calls on the required module.
import { getPulumiComponents } from "@pulumi/pulumi/provider/experimental/provider";

const ROOT = path.join(__dirname, "..", "..");
const PKG = path.join(ROOT, "plugin");
/** Every component the package offers. */
export const PACKAGE_COMPONENTS = ["GlobalRateLimit", "LocalRateLimit", "MeshRateLimit", "Bookinfo", "ManagedApi", "MeshMutualTls", "PlatformRateLimit"];

function componentsOf(mod: Record<string, unknown>): any[] {
    return Object.values(mod).filter((v: any) => typeof v === "function" && v.prototype instanceof pulumi.ComponentResource);
}

describe("component package: schema from Pulumi's analyzer", function () {
    this.timeout(120_000);
    let schema: any;
    before(async () => {
        // As Pulumi's Node.js plugin runner does (cmd/run-plugin/run.js): require() of the folder's
        // absolute path, then the components it exports, then the provider name from package.json.
        // The file Node loads must be the one package.json's main names: when main points at a
        // missing file, Node falls back to the folder's index file and the require still works.
        const main = JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8")).main;
        expect(require.resolve(PKG), "the plugin's entry is the file package.json main names").to.equal(path.resolve(PKG, main));
        const entry = require(PKG);
        const hosted = getPulumiComponents(entry);
        expect(hosted.map((c: any) => c.name)).to.have.members(PACKAGE_COMPONENTS);
        expect(JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8")).name).to.equal("mesh-ratelimit");
        schema = JSON.parse(await new ComponentProvider({ components: componentsOf(entry), name: "mesh-ratelimit", dirname: PKG }).getSchema());
    });

    it("has every component, with the type token the classes register", () => {
        for (const c of PACKAGE_COMPONENTS) expect(schema.resources, c).to.have.property(`mesh-ratelimit:index:${c}`);
        const src = fs.readFileSync(path.join(ROOT, "components", "global-ratelimit", "component.ts"), "utf8");
        expect(src).to.include('"mesh-ratelimit:index:GlobalRateLimit"');
    });

    it("no input or output is untyped (no Any anywhere)", () => {
        expect(JSON.stringify(schema)).to.not.include("pulumi.json#/Any");
        // An object without properties (or value type) would be untyped too.
        const loose: string[] = [];
        const walk = (v: any, at: string) => {
            if (!v || typeof v !== "object") return;
            if (v.type === "object" && !v.properties && !v.additionalProperties && !v.isComponent) loose.push(at);
            for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`);
        };
        walk(schema, "schema");
        expect(loose).to.deep.equal([]);
    });

    it("GlobalRateLimit: rules are a typed list of typed rules; unit and pathKey are enums", () => {
        const r = schema.resources["mesh-ratelimit:index:GlobalRateLimit"];
        expect(r.inputProperties.rules.items.$ref).to.equal("#/types/mesh-ratelimit:index:RateLimitRuleArgs");
        expect(r.requiredInputs).to.have.members(["domain", "gateway"]);
        const rule = schema.types["mesh-ratelimit:index:RateLimitRuleArgs"];
        // Every declared field of a rule, and only those (the declarations are the list: a new field is in both).
        expect(Object.keys(rule.properties)).to.have.members(Object.keys(RULE_FIELDS));
        expect(Object.keys(rule.properties)).to.include.members(["name", "path", "requestsPerUnit", "unit"]);
        expect(rule.properties.query.$ref).to.equal("#/types/mesh-ratelimit:index:QueryMatchArgs");
        expect(rule.properties.identity.$ref).to.equal("#/types/mesh-ratelimit:index:IdentityArgs");
        expect(schema.types["mesh-ratelimit:index:IdentityArgs"].properties.missing.$ref).to.equal("#/types/mesh-ratelimit:index:MissingIdentity");
        expect(rule.properties.methods.items.type).to.equal("string");
        expect(r.inputProperties.rateLimitHeaders.$ref).to.equal("#/types/mesh-ratelimit:index:RateLimitHeaders");
        expect(rule.properties.clientCidr.$ref).to.equal("#/types/mesh-ratelimit:index:ClientCidrArgs");
        expect(Object.keys(schema.types["mesh-ratelimit:index:ClientCidrArgs"].properties)).to.have.members(["cidr", "cidrs", "perAddress"]);
        expect(rule.properties.path.$ref).to.equal("#/types/mesh-ratelimit:index:PathMatchArgs");
        expect(rule.properties.header.$ref).to.equal("#/types/mesh-ratelimit:index:HeaderMatchArgs");
        expect(rule.properties.requestsPerUnit.type).to.equal("number");
        expect(rule.required).to.have.members(["name", "requestsPerUnit", "unit"]);
        expect(schema.types["mesh-ratelimit:index:LimitUnit"].enum.map((e: any) => e.value)).to.deep.equal([
            "second",
            "minute",
            "hour",
            "day",
            "week",
            "month",
            "year",
        ]);
        expect(schema.types["mesh-ratelimit:index:PathKeyMode"].enum.map((e: any) => e.value)).to.deep.equal(["url-path", "literal"]);
        expect(schema.types["mesh-ratelimit:index:GatewayTargetArgs"].properties.selector).to.deep.include({
            type: "object",
            additionalProperties: { type: "string", plain: true },
        });
        expect(r.properties.filterNames).to.deep.include({ type: "array" });
        expect(r.properties.grpcAddress.type).to.equal("string");
    });

    it("every input has a description (the Args interface is the manual)", () => {
        const missing: string[] = [];
        for (const [token, r] of Object.entries<any>(schema.resources))
            for (const [k, p] of Object.entries<any>(r.inputProperties ?? {})) if (!p.description) missing.push(`${token}.${k}`);
        for (const [token, t] of Object.entries<any>(schema.types))
            for (const [k, p] of Object.entries<any>(t.properties ?? {})) if (!p.description) missing.push(`${token}.${k}`);
        expect(missing).to.deep.equal([]);
    });

    it("the committed schema (plugin/schema.json) is the one the analyzer infers now: run npm run gen after changing a declaration", () => {
        expect(fs.readFileSync(SCHEMA_OUT, "utf8")).to.equal(schemaText(schema));
    });

    it("docs/package.md lists every argument from this schema (run npm run gen)", () => {
        expect(fs.readFileSync(PACKAGE_DOCS, "utf8")).to.equal(renderPackageDocs(schema));
    });

    it("LocalRateLimit: port, bucket and the workload's namespace required; selector (sidecar) and service (ambient) optional in the type, the resolve requiring each in its mode", () => {
        const r = schema.resources["mesh-ratelimit:index:LocalRateLimit"];
        expect(r.requiredInputs).to.have.members(["port", "bucket", "namespace"]);
        expect(r.inputProperties.routes).to.deep.include({ type: "array", optional: true });
        for (const k of ["selector", "service", "waypoint", "createWaypoint", "clusterDomain"])
            expect(r.inputProperties[k], k).to.deep.include({ optional: true });
    });

    it("MeshRateLimit: every stack config key's field is a typed input, grouped by the component it is for", () => {
        const r = schema.resources["mesh-ratelimit:index:MeshRateLimit"];
        /** The schema of a field path: each part a property of the object type the part before refers to. */
        const at = (field: string): any => {
            let props = r.inputProperties;
            let prop: any;
            for (const part of field.split(".")) {
                prop = props?.[part];
                if (!prop) return undefined;
                const ref = prop.$ref?.replace("#/types/", "");
                props = ref ? schema.types[ref]?.properties : undefined;
            }
            return prop;
        };
        for (const k of CONFIG_KEYS) expect(at(keyOf(k.field)), `${k.key} → ${keyOf(k.field)}`).to.exist;
        expect(at("variant").$ref).to.equal("#/types/mesh-ratelimit:index:StackVariant");
        expect(at("limits.descriptors").items.$ref).to.equal("#/types/mesh-ratelimit:index:DescriptorArgs");
        expect(at("limits.catchAll").type).to.equal("number");
        // The global limits' service and Redis are GlobalRateLimit's own argument types, not copies.
        expect(at("global.service").$ref).to.equal("#/types/mesh-ratelimit:index:RateLimitServiceOptionsArgs");
        expect(at("global.redis").$ref).to.equal("#/types/mesh-ratelimit:index:RedisOptionsArgs");
        expect(r.properties.limits.items.$ref).to.equal("#/types/mesh-ratelimit:index:LimitRowOutput");
        // No flat stack config key is an input any more.
        for (const k of ["limitedPathLimit", "rateLimitTimeout", "ratelimitReplicas", "espServiceName"]) expect(r.inputProperties).to.not.have.property(k);
    });
});

describe("component package: the plugin folder", () => {
    it("plugin/ holds PulumiPlugin.yaml (runtime nodejs) and no Pulumi.yaml (the loader refuses both in one folder)", () => {
        expect(parse(fs.readFileSync(path.join(PKG, "PulumiPlugin.yaml"), "utf8"))).to.deep.equal({ runtime: "nodejs" });
        expect(fs.existsSync(path.join(PKG, "Pulumi.yaml"))).to.equal(false);
        expect(fs.existsSync(path.join(ROOT, "PulumiPlugin.yaml"))).to.equal(false);
        const pkg = JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8"));
        expect(pkg.name).to.equal("mesh-ratelimit");
        expect(fs.existsSync(path.join(PKG, pkg.main))).to.equal(true);
    });

    it("importing the entry registers no resource and reads no stack config", async () => {
        const registered: string[] = [];
        await pulumi.runtime.setMocks(
            { newResource: (a) => (registered.push(a.type), { id: "x", state: a.inputs }), call: (a) => a.inputs },
            "mesh-ratelimit",
            "import-check",
            false,
        );
        pulumi.runtime.setAllConfig({ "mesh-ratelimit:variant": "not-a-variant" });
        for (const k of Object.keys(require.cache)) if (k === path.join(ROOT, "index.ts")) delete require.cache[k];
        const mod = require(path.join(ROOT, "index.ts"));
        await new Promise((r) => setTimeout(r, 50));
        expect(registered).to.deep.equal([]);
        expect(componentsOf(mod).map((c) => c.name)).to.have.members(PACKAGE_COMPONENTS);
        pulumi.runtime.setAllConfig({});
    });
});
