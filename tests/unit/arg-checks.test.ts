/**
 * components/common/arg-checks.ts: what every component refuses before it registers anything. The
 * mistakes are the ones a program without a type checker makes (Python, YAML, plain JavaScript):
 * a misspelt argument or nested field, a number the rate-limit service cannot hold, a path no
 * client can send as written, a route match that is never reached. Expected texts are written
 * here, not read from the code.
 */
import { expect } from "chai";
import * as fs from "fs";
import { closestName } from "../../components/common/arg-checks";
import { ARG_TABLES_OF, COMPONENT_ARG_INTERFACES, COMPONENT_ARG_TYPES, unknownFieldProblems } from "../../components/all/arg-types";
import { Bookinfo } from "../../components/bookinfo/component";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LocalRateLimit } from "../../components/local-ratelimit/component";
import { ManagedApi } from "../../components/managed-api/component";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { MeshMutualTls } from "../../components/mesh-mtls/component";
import { MeshRateLimit } from "../../mesh/mesh-ratelimit";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { pathAsSent } from "../../lib/formats";
import { registerComponents } from "../../render/render";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { FieldShape } from "../../lib/field-types";
import { MESH_ARG_INTERFACES } from "../../mesh/mesh-arg-interfaces";
import { PACKAGE_COMPONENTS } from "./package-schema.test";

const GATEWAY = { selector: { istio: "shop-gateway" }, namespace: "shop", virtualHosts: ["shop.example:8080"] };
const RULE = { name: "login", path: { exact: "/login" }, requestsPerUnit: 5, unit: "minute" };

type SchemaProp = { $ref?: string; type?: string; items?: SchemaProp; additionalProperties?: SchemaProp };
const TOKEN = "mesh-ratelimit:index:";

/** The argument types and components' arguments as the committed package schema (plugin/schema.json) states their fields. */
function schemaArgTypes(): { types: ArgTypes; components: ArgTypes } {
    const schema = JSON.parse(fs.readFileSync(`${__dirname}/../../plugin/schema.json`, "utf8"));
    const all = schema.types as Record<string, { enum?: unknown; properties?: Record<string, SchemaProp> }>;
    const enums = new Set(Object.keys(all).filter((k) => all[k].enum));
    const shape = (p: SchemaProp): FieldShape => {
        if (p.$ref) return enums.has(p.$ref.replace("#/types/", "")) ? null : p.$ref.replace(`#/types/${TOKEN}`, "");
        if (p.type === "array" && p.items) return { list: shape(p.items) };
        if (p.type === "object" && p.additionalProperties) return { map: shape(p.additionalProperties) };
        return null;
    };
    const fields = (props: Record<string, SchemaProp>) => Object.fromEntries(Object.entries(props).map(([k, p]) => [k, shape(p)]));
    const outputs = new Set(["LimitRowOutput"]);
    const objects = Object.entries(all).filter(([k, t]) => t.properties && !t.enum && !outputs.has(k.replace(TOKEN, "")));
    const resources = Object.entries(schema.resources as Record<string, { inputProperties: Record<string, SchemaProp> }>);
    return {
        types: Object.fromEntries(objects.map(([k, t]) => [k.replace(TOKEN, ""), fields(t.properties!)])),
        components: Object.fromEntries(resources.map(([k, r]) => [k.replace(TOKEN, ""), fields(r.inputProperties)])),
    };
}

/** The error `build` throws under Pulumi's mocks, and what it registered first (nothing, when refused). */
async function refusal(build: () => void): Promise<{ message: string; registered: string[] }> {
    let registered: string[] = [];
    try {
        registered = (await registerComponents(build, "arg-checks", "test")).all.map((r) => r.type);
    } catch (e) {
        return { message: (e as Error).message, registered };
    }
    throw new Error(`accepted; registered ${registered.join(", ")}`);
}

describe("components refuse what they do not know (components/common/arg-checks.ts)", function () {
    this.timeout(60_000);

    it("the fields each type knows, read from the declarations at run time, are the package schema's, for every component; control: a field left out differs", () => {
        const declared = argTypesOf([...COMPONENT_ARG_INTERFACES, ...MESH_ARG_INTERFACES]);
        const schema = schemaArgTypes();
        expect(Object.keys(schema.components)).to.have.members(PACKAGE_COMPONENTS);
        for (const [name, fields] of Object.entries(schema.types)) expect(declared[name], name).to.deep.equal(fields);
        for (const [c, fields] of Object.entries(schema.components)) expect(declared[`${c}Args`], c).to.deep.equal(fields);
        expect(Object.keys(COMPONENT_ARG_TYPES.RateLimitRuleArgs)).to.include.members(["name", "path", "header", "requestsPerUnit", "unit"]);
        const rule = COMPONENT_ARG_INTERFACES.find((i) => i.name === "RateLimitRuleArgs")!;
        const { cost: _left, ...fewer } = rule.fields;
        const without = argTypesOf(COMPONENT_ARG_INTERFACES.map((i) => (i === rule ? { ...rule, fields: fewer } : i)));
        expect(without.RateLimitRuleArgs).to.not.deep.equal(schema.types.RateLimitRuleArgs);
    });

    it("each component's own tables hold every type its arguments reach; control: a nested table left out is named", () => {
        const reached = (types: ArgTypes, root: string): string[] => {
            const names = new Set<string>();
            const walk = (shape: FieldShape): void => {
                if (shape === null) return;
                if (typeof shape !== "string") return walk("list" in shape ? shape.list : shape.map);
                if (names.has(shape)) return;
                names.add(shape);
                Object.values(COMPONENT_ARG_TYPES[shape] ?? {}).forEach(walk);
            };
            walk(root);
            return [...names].filter((n) => types[n] === undefined);
        };
        for (const [c, tables] of Object.entries(ARG_TABLES_OF)) expect(reached(argTypesOf(tables), `${c}Args`), c).to.deep.equal([]);
        const global = ARG_TABLES_OF.GlobalRateLimit.filter((i) => i.name !== "RedisOptionsArgs");
        expect(reached(argTypesOf(global), "GlobalRateLimitArgs")).to.deep.equal(["RedisOptionsArgs"]);
    });

    it("closest names: a typo, a longer or shorter name, another case; nothing for a stranger", () => {
        expect(closestName("failureModeDenny", ["failureModeDeny", "timeout"])).to.equal("failureModeDeny");
        expect(closestName("bucketSize", ["bucket", "fillInterval"])).to.equal("bucket");
        expect(closestName("paths", ["path", "header"])).to.equal("path");
        expect(closestName("FillInterval", ["bucket", "fillInterval"])).to.equal("fillInterval");
        expect(closestName("colour", ["bucket", "fillInterval"])).to.equal(undefined);
    });

    it("a misspelt rule field would widen the rule to every request: refused, with the field it meant", () => {
        // What the check guards against: without `path` the rule has no condition, so it counts every request.
        const widened = compileGlobalLimits({ rules: [{ ...RULE, path: undefined, paths: { exact: "/login" } } as any] });
        expect(widened.problems).to.deep.equal([]);
        expect(widened.vhostRateLimits[0].actions[0]).to.have.property("generic_key");
        expect(unknownFieldProblems("GlobalRateLimit", { rules: [{ ...RULE, path: undefined, paths: { exact: "/login" } }] })).to.deep.equal([
            { key: "rules[0].paths", value: { exact: "/login" }, problem: "is not a field of RateLimitRuleArgs", fix: "rename paths to path" },
        ]);
    });

    it("nested fields at any depth, in lists and maps; label maps and unset fields are free", () => {
        const problems = unknownFieldProblems("GlobalRateLimit", {
            gateway: { ...GATEWAY, selector: { "any-label": "x" }, virtualHost: ["a:80"] },
            rules: [RULE, { ...RULE, name: "k", path: undefined, header: { name: "x-key", perValues: true } }],
            redis: { mode: "single", passwordSecret: { nam: "s", key: "p" } },
            perValueStore: { failModeDeny: true },
            extra: undefined,
        });
        expect(problems.map((p) => `${p.key}: ${p.fix}`)).to.deep.equal([
            "gateway.virtualHost: rename virtualHost to virtualHosts",
            "rules[1].header.perValues: rename perValues to perValue",
            "redis.passwordSecret.nam: rename nam to name",
            "perValueStore.failModeDeny: rename failModeDeny to failureModeDeny",
        ]);
    });

    it("a field with no near name is listed with every known one", () => {
        expect(unknownFieldProblems("MeshMutualTls", { colour: "red" })).to.deep.equal([
            {
                key: "colour",
                value: "red",
                problem: "is not an argument of MeshMutualTls",
                fix: `remove colour; the fields are ${Object.keys(COMPONENT_ARG_TYPES.MeshMutualTlsArgs).join(", ")}`,
            },
        ]);
    });

    const cases: [string, () => void, string][] = [
        [
            "GlobalRateLimit",
            () => new GlobalRateLimit("g", { domain: "shop", namespace: "shop", gateway: GATEWAY, failureModeDenny: false } as any),
            "failureModeDenny",
        ],
        [
            "LocalRateLimit",
            () => new LocalRateLimit("l", { selector: { app: "shop" }, port: 9080, bucket: 5, bucketSize: 5, namespace: "shop" } as any),
            "bucketSize",
        ],
        ["Bookinfo", () => new Bookinfo("b", { namespace: "shop", gatewayNme: "gw" } as any), "gatewayNme"],
        [
            "ManagedApi",
            () => new ManagedApi("m", { serviceName: "a.endpoints.p.cloud.goog", includeIpRanges: ["10.0.0.0/8"], ingresPath: "/x" } as any),
            "ingresPath",
        ],
        ["MeshMutualTls", () => new MeshMutualTls("t", { namespaces: ["shop"], scop: "workloads" } as any), "scop"],
        ["MeshRateLimit", () => new MeshRateLimit("s", { managedApi: { enabled: false }, localBuckt: 3 } as any), "localBuckt"],
        ["PlatformRateLimit", () => new PlatformRateLimit("p", { gateway: { selector: { istio: "ingressgateway" } }, overides: {} } as any), "overides"],
    ];
    for (const [component, build, field] of cases)
        it(`${component} refuses a misspelt argument in its constructor, names the closest one, and registers nothing`, async () => {
            const { message, registered } = await refusal(build);
            expect(message).to.match(new RegExp(`^${component} [a-z]+: invalid arguments|^${component}: invalid arguments`));
            expect(message).to.include(`- ${field} = `);
            expect(message).to.include(`is not an argument of ${component}`);
            expect(message).to.match(/fix: rename \w+ to \w+/);
            expect(registered).to.deep.equal([]);
        });

    it("a limit the service cannot hold (its requests_per_unit is a uint32) is refused; the largest one is written", () => {
        const at = (n: number) => compileGlobalLimits({ rules: [{ ...RULE, requestsPerUnit: n } as any] });
        expect(at(4_294_967_295).problems).to.deep.equal([]);
        expect(JSON.stringify(at(4_294_967_295).configDescriptors)).to.include('"requests_per_unit":4294967295');
        expect(at(4_294_967_296).problems.map((p) => `${p.key} ${p.value}`)).to.deep.equal(["rules[0].requestsPerUnit 4294967296"]);
        expect(at(5e9).problems[0].problem).to.include("at most 4294967295");
    });

    it("NaN and Infinity are shown as themselves, not as JSON's null", async () => {
        const { message } = await refusal(
            () => new GlobalRateLimit("n", { domain: "shop", namespace: "nan", gateway: GATEWAY, rules: [{ ...RULE, requestsPerUnit: NaN }] } as any),
        );
        expect(message).to.include("rules[0].requestsPerUnit = NaN: must be a whole number");
    });

    it("a path no client sends as written is refused with its percent-encoded form", () => {
        expect(pathAsSent("/café")).to.equal("/caf%C3%A9");
        expect(pathAsSent("/a b[1]")).to.equal("/a%20b%5B1%5D");
        expect(pathAsSent("/ok-._~!$&'()*+,;=:@%41/")).to.equal("/ok-._~!$&'()*+,;=:@%41/");
        const r = compileGlobalLimits({ rules: [{ ...RULE, path: { prefix: "/café" } } as any] });
        expect(r.problems.map((p) => `${p.key}: ${p.fix}`)).to.deep.equal(['rules[0].path.prefix: use "/caf%C3%A9"']);
        expect(compileGlobalLimits({ rules: [{ ...RULE, path: { exact: "/caf%C3%A9" } } as any] }).problems).to.deep.equal([]);
    });

    it("Bookinfo: a non-ASCII route path, and an exact path a route before holds already (that match is dropped)", async () => {
        const { message } = await refusal(
            () =>
                new Bookinfo("b", {
                    namespace: "shop",
                    routes: [{ exact: ["/productpage", "/login"] }, { name: "api", exact: ["/login"], prefix: ["/ümlaut"] }],
                }),
        );
        expect(message).to.include('routes[1].exact[0] = "/login": is matched by routes[0] first');
        expect(message).to.include('routes[1].prefix[0] = "/ümlaut": cannot match as written');
        expect(message).to.include('fix: use "/%C3%BCmlaut"');
    });

    it("MeshRateLimit: loginPath equal to the product page's path is refused (the login route would be dropped)", async () => {
        const { message } = await refusal(() => new MeshRateLimit("s", { managedApi: { enabled: false }, paths: { login: "/productpage" } }));
        expect(message).to.include('paths.login = "/productpage": equals paths.page');
        expect(message).to.include('fix: set paths.login: "/login" in MeshRateLimit\'s args');
        // With routes of its own, the three paths do not make the routes: nothing is dropped.
        const routes = [{ exact: ["/productpage"] }];
        const r = await registerComponents(
            () => new MeshRateLimit("t", { managedApi: { enabled: false }, paths: { login: "/productpage" }, bookinfo: { routes }, variant: "B" }),
        );
        expect(r.all.length).to.be.greaterThan(0);
    });
});
