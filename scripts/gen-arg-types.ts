/**
 * Writes the package's argument interfaces (`ARG_FILES`: components/*-args.ts, builders/*-args.ts and
 * *-arg-types.ts, mesh/mesh-ratelimit-args.generated.ts), generated from the declarations of their fields
 * (components/*-fields.ts, service-fields.ts, mesh/*-fields.ts), each field's JSDoc its
 * declaration's text and default ("Defaults to `X`."). A nested field names its type, which is
 * generated from declarations of its own, and is imported. Pulumi's analyzer reads the generated
 * interfaces as it read hand-written ones (`npm run gen:package-docs`). `--check` exits 1 when a
 * file is out of date.
 */
import * as fs from "fs";
import * as path from "path";
import { GLOBAL_ARG_IMPORTS, GLOBAL_ARG_INTERFACES } from "../components/global-ratelimit/fields";
import { PLATFORM_ARG_IMPORTS, PLATFORM_ARG_INTERFACES } from "../components/platform-ratelimit/fields";
import { BOOKINFO_ARG_IMPORTS, BOOKINFO_ARG_INTERFACES } from "../components/bookinfo/fields";
import { MANAGED_API_ARG_IMPORTS, MANAGED_API_ARG_INTERFACES } from "../components/managed-api/fields";
import { LOCAL_ARG_IMPORTS, LOCAL_ARG_INTERFACES } from "../components/local-ratelimit/fields";
import { MTLS_ARG_IMPORTS, MTLS_ARG_INTERFACES } from "../components/mesh-mtls/fields";
import { REDIS_ARG_IMPORTS, REDIS_ARG_INTERFACES } from "../components/service/redis-fields";
import { MONITORING_ARG_INTERFACES } from "../components/service/ratelimit-monitoring-fields";
import { ACCESS_POLICY_ARG_INTERFACES } from "../components/service/access-policy-fields";
import { CLIENT_PREFIX_ARG_INTERFACES } from "../components/rules/client-prefix-fields";
import { RULE_ARG_IMPORTS, RULE_ARG_INTERFACES } from "../components/rules/rule-arg-interfaces";
import { MESH_ROUTE_ARG_IMPORTS, MESH_ROUTE_ARG_INTERFACES } from "../components/rules/mesh-route-fields";
import { MESH_ARG_IMPORTS, MESH_ARG_INTERFACES } from "../mesh/mesh-arg-interfaces";
import { GATEWAY_TARGET_ARG_INTERFACES } from "../components/global-ratelimit/gateway-target-fields";
import { ACCESS_LOG_ARG_INTERFACES } from "../components/global-ratelimit/gateway-access-log-fields";
import { CLIENT_CIDR_ARG_INTERFACES } from "../components/rules/client-cidr-fields";
import { IDENTITY_ARG_IMPORTS, IDENTITY_ARG_INTERFACES } from "../components/rules/identity-fields";
import { REQUEST_COST_ARG_INTERFACES } from "../components/rules/request-cost-fields";
import { ArgInterface, FieldDecl, NestedDecl, fieldDoc } from "../lib/field-decl";

const at = (...p: string[]) => path.join(__dirname, "..", ...p);

export const OUT = at("components", "global-ratelimit", "args.generated.ts");
export const PLATFORM_OUT = at("components", "platform-ratelimit", "args.generated.ts");
export const BOOKINFO_OUT = at("components", "bookinfo", "args.generated.ts");
export const MANAGED_API_OUT = at("components", "managed-api", "args.generated.ts");
export const LOCAL_OUT = at("components", "local-ratelimit", "args.generated.ts");
export const MTLS_OUT = at("components", "mesh-mtls", "args.generated.ts");
export const MESH_OUT = at("mesh", "mesh-ratelimit-args.generated.ts");

/** Lines of at most `width` characters (a word longer than that on a line of its own). */
function wrapped(text: string, width: number): string[] {
    const lines: string[] = [];
    let line = "";
    for (const word of text.split(/\s+/).filter((w) => w !== "")) {
        if (line !== "" && line.length + 1 + word.length > width) {
            lines.push(line);
            line = word;
        } else line = line === "" ? word : `${line} ${word}`;
    }
    if (line !== "") lines.push(line);
    return lines;
}

/** A JSDoc block at `indent`: on one line when it fits the formatter's 160 columns, else wrapped at 100. */
export function jsDoc(text: string, indent: string): string[] {
    if (text === "") return [];
    const one = `${indent}/** ${text} */`;
    if (one.length <= 160) return [one];
    return [`${indent}/**`, ...wrapped(text, 100).map((l) => `${indent} * ${l}`), `${indent} */`];
}

function member(name: string, d: FieldDecl<unknown> | NestedDecl): string[] {
    const doc = "rule" in d ? fieldDoc(d) : d.doc;
    return [...jsDoc(doc, "    "), `    ${name}${d.required ? "" : "?"}: ${d.type.text};`];
}

function interfaceText(i: ArgInterface): string[] {
    const head = `export interface ${i.name}${i.extends ? ` extends ${i.extends}` : ""} {`;
    return [...jsDoc(i.doc, ""), head, ...Object.entries(i.fields).flatMap(([k, d]) => member(k, d)), "}"];
}

/** An import as the formatter writes it: on one line when it fits its 160 columns, else a name a line. */
function importText(from: string, names: readonly string[]): string {
    if (names.length === 1 && names[0] === "pulumi") return `import * as ${names[0]} from "${from}";`;
    const one = `import { ${names.join(", ")} } from "${from}";`;
    return one.length <= 160 ? one : ["import {", ...names.map((n) => `    ${n},`), `} from "${from}";`].join("\n");
}

/** One generated file: where it goes, the declaration files it is made from, its imports, what it exports again, its interfaces. */
interface ArgFile {
    out: string;
    from: readonly string[];
    /** More lines of the header, after the two every generated file has. */
    note?: readonly string[];
    imports: Readonly<Record<string, readonly string[]>>;
    reexports: readonly string[];
    interfaces: readonly ArgInterface[];
}

function fileText(f: ArgFile): string {
    return [
        `// Generated by \`npm run gen\` from the declarations in ${f.from.join(", ")}:`,
        "// edit those, then run `npm run gen`; never edit this file.",
        ...(f.note ?? []),
        ...Object.entries(f.imports).map(([from, names]) => importText(from, names)),
        "",
        ...(f.reexports.length ? [`export { ${f.reexports.join(", ")} };`, ""] : []),
        f.interfaces.map((i) => interfaceText(i).join("\n")).join("\n\n"),
        "",
    ].join("\n");
}

/** Every generated file (its interfaces are read when it is written, so a changed declaration shows). */
const ARG_FILES: readonly ArgFile[] = [
    {
        out: OUT,
        from: ["components/global-ratelimit/fields.ts", "components/service/fields.ts"],
        imports: GLOBAL_ARG_IMPORTS,
        reexports: ["AccessPolicyArgs"],
        interfaces: GLOBAL_ARG_INTERFACES,
    },
    { out: PLATFORM_OUT, from: ["components/platform-ratelimit/fields.ts"], imports: PLATFORM_ARG_IMPORTS, reexports: [], interfaces: PLATFORM_ARG_INTERFACES },
    { out: BOOKINFO_OUT, from: ["components/bookinfo/fields.ts"], imports: BOOKINFO_ARG_IMPORTS, reexports: [], interfaces: BOOKINFO_ARG_INTERFACES },
    {
        out: MANAGED_API_OUT,
        from: ["components/managed-api/fields.ts"],
        imports: MANAGED_API_ARG_IMPORTS,
        reexports: [],
        interfaces: MANAGED_API_ARG_INTERFACES,
    },
    { out: LOCAL_OUT, from: ["components/local-ratelimit/fields.ts"], imports: LOCAL_ARG_IMPORTS, reexports: [], interfaces: LOCAL_ARG_INTERFACES },
    { out: MTLS_OUT, from: ["components/mesh-mtls/fields.ts"], imports: MTLS_ARG_IMPORTS, reexports: [], interfaces: MTLS_ARG_INTERFACES },
    {
        out: at("components", "service", "redis-options-args.generated.ts"),
        from: ["components/service/redis-fields.ts"],
        imports: REDIS_ARG_IMPORTS,
        reexports: [],
        interfaces: REDIS_ARG_INTERFACES,
    },
    {
        out: at("components", "service", "ratelimit-monitoring-args.generated.ts"),
        from: ["components/service/ratelimit-monitoring-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: MONITORING_ARG_INTERFACES,
    },
    {
        out: at("components", "service", "access-policy-args.generated.ts"),
        from: ["components/service/access-policy-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: ACCESS_POLICY_ARG_INTERFACES,
    },
    {
        out: MESH_OUT,
        from: ["mesh/mesh-fields.ts"],
        note: [
            "// MeshRateLimit's arguments, grouped by the component each group is for. A group extends the options",
            "// of the component it is for: a field the component owns is declared and documented once, there, and",
            "// Pulumi's schema analyzer carries it into the group with its words. A group declares only what is",
            "// MeshRateLimit's own, or what it holds to another contract (optional here, required by the",
            "// component). Not `Pick` or `Omit`: the analyzer types a picked field as `Any` without its",
            "// description. Every field is optional: `undefined` means not given.",
        ],
        imports: MESH_ARG_IMPORTS,
        reexports: [],
        interfaces: MESH_ARG_INTERFACES,
    },
    {
        out: at("builders", "client-prefix-args.generated.ts"),
        from: ["components/rules/client-prefix-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: CLIENT_PREFIX_ARG_INTERFACES,
    },
    {
        out: at("components", "global-ratelimit", "gateway-target-args.generated.ts"),
        from: ["components/global-ratelimit/gateway-target-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: GATEWAY_TARGET_ARG_INTERFACES,
    },
    {
        out: at("components", "global-ratelimit", "gateway-access-log-args.generated.ts"),
        from: ["components/global-ratelimit/gateway-access-log-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: ACCESS_LOG_ARG_INTERFACES,
    },
    {
        out: at("builders", "client-cidr-args.generated.ts"),
        from: ["components/rules/client-cidr-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: CLIENT_CIDR_ARG_INTERFACES,
    },
    {
        out: at("builders", "identity-arg-types.generated.ts"),
        from: ["components/rules/identity-fields.ts"],
        imports: IDENTITY_ARG_IMPORTS,
        reexports: [],
        interfaces: IDENTITY_ARG_INTERFACES,
    },
    {
        out: at("builders", "request-cost-arg-types.generated.ts"),
        from: ["components/rules/request-cost-fields.ts"],
        imports: {},
        reexports: [],
        interfaces: REQUEST_COST_ARG_INTERFACES,
    },
    {
        out: at("builders", "rule-types-args.generated.ts"),
        from: ["components/rules/rule-fields.ts"],
        imports: RULE_ARG_IMPORTS,
        reexports: [],
        interfaces: RULE_ARG_INTERFACES,
    },
    {
        out: at("components", "common", "mesh-route-args.generated.ts"),
        from: ["components/rules/mesh-route-fields.ts"],
        imports: MESH_ROUTE_ARG_IMPORTS,
        reexports: [],
        interfaces: MESH_ROUTE_ARG_INTERFACES,
    },
];

/** The text of the generated file written to `out`. */
export function generatedText(out: string): string {
    const f = ARG_FILES.find((a) => a.out === out);
    if (f === undefined) throw new Error(`internal: gen-arg-types writes no ${out}`);
    return fileText(f);
}

/** Each generated file and its text. */
export function generated(): [string, string][] {
    return ARG_FILES.map((f) => [f.out, fileText(f)]);
}

if (require.main === module) {
    const stale = generated().filter(([out, text]) => !fs.existsSync(out) || fs.readFileSync(out, "utf8") !== text);
    if (process.argv.includes("--check")) {
        for (const [out] of stale) console.error(`${path.relative(process.cwd(), out)} is out of date: run npm run gen`);
        if (stale.length) process.exit(1);
    } else {
        for (const [out, text] of generated()) {
            fs.writeFileSync(out, text);
            console.log(`wrote ${path.relative(process.cwd(), out)}`);
        }
    }
}
