/**
 * Writes mesh/mesh-ratelimit-args.ts: the MeshRateLimit component's `Args` interfaces, structured by
 * the component each field is for (`global` takes GlobalRateLimit's field names, its `service` and
 * `redis` are GlobalRateLimit's own argument types, `local` LocalRateLimit's, `bookinfo` Bookinfo's,
 * `managedApi` ManagedApi's), and `MESH_FIELDS`, each field's kind and default. Made from the config
 * key table (program/config-keys.ts), whose keys each set one field: the description becomes the
 * field's JSDoc with every key name it quotes replaced by that key's field. `--check` exits 1 when the
 * file is out of date (the unit tier runs it).
 */
import * as fs from "fs";
import * as path from "path";
import { CONFIG_KEYS, CONFIG_KEY_OF_FIELD, ConfigKeySpec } from "../program/config-keys";

export const OUT = path.join(__dirname, "..", "mesh", "mesh-ratelimit-args.ts");

/** Keys whose values are one of a few words: the enum that types them (components/mesh-enums.ts). */
export const ENUM_KEYS: Readonly<Record<string, string>> = {
    variant: "StackVariant",
    apiProfile: "ApiProfileName",
    pathKey: "PathKeyMode",
    unit: "LimitUnit",
    localPlacement: "LocalPlacementMode",
    bookinfo: "BookinfoMode",
    espPortMode: "EspPortModeName",
    vhostScope: "VirtualHostScope",
    gatewayHostScope: "GatewayHostScope",
    filterNamespaces: "FilterNamespaces",
    mutualTlsScope: "MutualTlsScope",
    filterLayout: "FilterLayout",
    counterStore: "CounterStore",
    statusOnError: "ErrorStatus",
    rateLimitHeaders: "RateLimitHeaders",
    localRateLimitHeaders: "RateLimitHeaders",
};
/** Keys whose config value is JSON or a list: the typed form. */
export const TYPED_KEYS: Readonly<Record<string, string>> = {
    virtualServiceRoutes: "HttpRouteArgs[]",
    descriptors: "DescriptorArgs[]",
    includeIpRanges: "string[]",
    gatewayHosts: "string[]",
    monitoringRuleLabels: "{ [label: string]: string }",
};

/** Groups whose fields are a component's own argument type: that type, not a generated one. */
const COMPONENT_TYPES: Readonly<Record<string, { type: string; doc: string }>> = {
    "global.service": {
        type: "RateLimitServiceOptionsArgs",
        doc: "The rate-limit service: GlobalRateLimit's `service` argument (its names, images, replicas and Redis client settings). Defaults to GlobalRateLimit's.",
    },
    "global.perValueStore": {
        type: "PerValueStoreArgs",
        doc: "The per-path counters' service and Redis (`global.counterStore` split): GlobalRateLimit's `perValueStore` argument. Defaults to GlobalRateLimit's.",
    },
    "global.clientPrefix": {
        type: "ClientPrefixArgs",
        doc: "What makes one client for the per-client counters: GlobalRateLimit's `clientPrefix` (IPv4 and IPv6 prefix lengths). Defaults to GlobalRateLimit's (/32, /64).",
    },
    "global.redis": {
        type: "RedisOptionsArgs",
        doc: "Which Redis the service counts in: GlobalRateLimit's `redis` argument (the in-cluster Redis by default, or an existing one). Defaults to GlobalRateLimit's.",
    },
};

/** Each generated group: its interface name and JSDoc. */
const GROUPS: Readonly<Record<string, { type: string; doc: string }>> = {
    "": {
        type: "MeshRateLimitArgs",
        doc: "The whole specified stack (docs/specification.md), its arguments grouped by the component each is for. Every field is optional; the defaults are the stack's.",
    },
    paths: { type: "MeshPathsArgs", doc: "The bookinfo paths the specification names: the stack's routes and limits are made of them." },
    limits: { type: "MeshLimitsArgs", doc: "The specification's global limits (spec 2.4, 2.6), which MeshRateLimit turns into GlobalRateLimit's rules." },
    mesh: {
        type: "MeshPlacementArgs",
        doc: "Where the stack sits in the mesh: Istio's root namespace, the ingress gateway, the reach of its filters, mutual TLS.",
    },
    global: { type: "MeshGlobalArgs", doc: "The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names." },
    "global.accessPolicy": { type: "MeshAccessPolicyArgs", doc: "Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`)." },
    "global.monitoring": { type: "MeshMonitoringArgs", doc: "The dashboard and alert rules (GlobalRateLimit's `monitoring`)." },
    local: { type: "MeshLocalArgs", doc: "The local token bucket on a workload's sidecar (LocalRateLimit's arguments)." },
    bookinfo: { type: "MeshBookinfoArgs", doc: "The bookinfo sample the limits protect (Bookinfo's arguments)." },
    managedApi: { type: "MeshManagedApiArgs", doc: "The managed API (ESP) in the mesh (ManagedApi's arguments)." },
};

/** A key name quoted in a description, replaced by the field it sets. */
function fieldWords(text: string): string {
    return text.replace(/`([A-Za-z]+)`/g, (whole, k: string) => {
        const spec = CONFIG_KEYS.find((c) => c.key === k);
        return spec ? `\`${spec.field}\`` : whole;
    });
}

function tsType(k: ConfigKeySpec): string {
    return ENUM_KEYS[k.key] ?? TYPED_KEYS[k.key] ?? (k.kind === "integer" ? "number" : k.kind === "boolean" ? "boolean" : "string");
}

function jsdoc(text: string, indent = "    "): string {
    return `${indent}/** ${text.replace(/\*\//g, "*\\/")} */`;
}

function fieldDoc(k: ConfigKeySpec): string {
    const def = k.defaultNote ? fieldWords(k.defaultNote) : k.default === "" ? "unset" : `\`${k.default}\``;
    return jsdoc(`${fieldWords(k.description)} Defaults to ${def}.`);
}

const parentOf = (field: string) => field.split(".").slice(0, -1).join(".");
const nameOf = (field: string) => field.split(".").pop()!;

export function generate(): string {
    const keys = CONFIG_KEYS.filter((k) => !Object.keys(COMPONENT_TYPES).some((g) => k.field.startsWith(`${g}.`)));
    const blocks = Object.entries(GROUPS).map(([group, { type, doc }]) => {
        const own = keys.filter((k) => parentOf(k.field) === group).map((k) => `${fieldDoc(k)}\n    ${nameOf(k.field)}?: ${tsType(k)};`);
        const nested = [...Object.entries(GROUPS), ...Object.entries(COMPONENT_TYPES)]
            .filter(([g]) => g !== "" && parentOf(g) === group)
            .map(([g, t]) => `${jsdoc(t.doc)}\n    ${nameOf(g)}?: ${t.type};`);
        const extra = group === "" ? PROGRAM_OPTIONS : "";
        return `${jsdoc(doc, "")}\nexport interface ${type} {\n${[...own, ...nested].join("\n")}\n${extra}}`;
    });
    const fields = CONFIG_KEYS.map((k) => `    "${k.field}": { kind: "${k.kind}", default: ${JSON.stringify(k.default)} },`).join("\n");
    // Every key's field is written once and read back by its path; a field no key sets cannot be reported under a key.
    if (CONFIG_KEYS.some((k) => CONFIG_KEY_OF_FIELD[k.field] !== k.key)) throw new Error("two config keys set one field");
    return `// Generated by \`npm run gen:mesh-args\` from program/config-keys.ts; edit that file instead.
import { ApiProfileName, BookinfoMode, DescriptorArgs, EspPortModeName, FilterNamespaces, GatewayHostScope, HttpRouteArgs, LocalPlacementMode, MutualTlsScope, StackVariant, VirtualHostScope } from "../components/mesh-enums";
import { RateLimitServiceOptionsArgs } from "../components/global-ratelimit-args";
import { RedisOptionsArgs } from "../components/redis-options";
import { PerValueStoreArgs } from "../components/per-value-store";
import { ClientPrefixArgs, LimitUnit, PathKeyMode } from "../builders/rule-args";
import { ErrorStatus, FilterLayout, RateLimitHeaders } from "../builders/envoy-filters";
import { CounterStore } from "../builders/counter-stores";

${blocks.join("\n\n")}

/** How a field's value is read (\`json\`: a typed list or map) and its default as text ("": the variant's preset or derived). */
export interface MeshFieldSpec {
    kind: "string" | "integer" | "boolean" | "json";
    default: string;
}

/** Every field of MeshRateLimit's arguments that the stack reads, by its path. */
export const MESH_FIELDS: Readonly<Record<string, MeshFieldSpec>> = {
${fields}
};
`;
}

const PROGRAM_OPTIONS = `    /** kubectl context of the seed profile's mesh ConfigMap edit. Defaults to the current context. */
    kubeContext?: string;
    /** \`current\` profile: create IngressClass \`<managedApi.ingressClassName>\` (false when the cluster has one for Istio). Defaults to \`true\`. */
    createIngressClass?: boolean;
    /** \`current\` profile: \`pulumi destroy\` leaves the IngressClass the stack created (other Ingresses use it). Defaults to \`false\`. */
    keepIngressClassOnDestroy?: boolean;
    /** \`current\` profile: create PeerAuthentication \`default\` (false when the mesh has a STRICT one). Defaults to \`true\`. */
    createPeerAuthentication?: boolean;
    /** \`current\` profile: \`pulumi destroy\` leaves PeerAuthentication \`default\` the stack created (other workloads run under it). Defaults to \`false\`. */
    keepPeerAuthenticationOnDestroy?: boolean;
`;

if (require.main === module) {
    const text = generate();
    if (process.argv.includes("--check")) {
        if (!fs.existsSync(OUT) || fs.readFileSync(OUT, "utf8") !== text) {
            console.error(`${path.relative(process.cwd(), OUT)} is out of date: run npm run gen:mesh-args`);
            process.exit(1);
        }
    } else {
        fs.writeFileSync(OUT, text);
        console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
    }
}
