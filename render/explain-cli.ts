/**
 * `npm run explain -- [--variant A|B] [--profile seed|current] [--set key=value]... [--json] <path>...`
 *
 * For each request path: the route the gateway picks, the descriptors it sends to the rate-limit
 * service, the limit of the config that answers them and the counter (bucket) they share.
 * Computed by the gateway MODEL in render/explain.ts from the objects the stack renders.
 */
import { ConfigError } from "../components/settings";
import { renderStack } from "./render";
import { explainWith, formatExplanation, gatewayModel, K8sObject } from "./explain";

const USAGE = "usage: npm run explain -- [--variant A|B] [--profile seed|current] [--set key=value]... [--json] <path>...";

export function parseExplainArgs(argv: string[]): { variant?: "A" | "B"; apiProfile?: "seed" | "current"; overrides: Record<string, string>; json: boolean; paths: string[] } {
    const overrides: Record<string, string> = {};
    const paths: string[] = [];
    let variant: "A" | "B" | undefined;
    let apiProfile: "seed" | "current" | undefined;
    let json = false;
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const need = () => {
            const v = argv[++i];
            if (v === undefined || v.startsWith("--")) throw new Error(`${a} needs a value\n${USAGE}`);
            return v;
        };
        if (a === "--variant") {
            const v = need().toUpperCase();
            if (v !== "A" && v !== "B") throw new Error(`--variant takes A or B\n${USAGE}`);
            variant = v;
        } else if (a === "--profile") {
            const v = need();
            if (v !== "seed" && v !== "current") throw new Error(`--profile takes seed or current\n${USAGE}`);
            apiProfile = v;
        } else if (a === "--set") {
            const kv = need();
            const eq = kv.indexOf("=");
            if (eq < 1) throw new Error(`--set takes key=value, got '${kv}'\n${USAGE}`);
            overrides[kv.slice(0, eq)] = kv.slice(eq + 1);
        } else if (a === "--json") {
            json = true;
        } else if (a === "-h" || a === "--help") {
            throw new Error(USAGE);
        } else if (a.startsWith("--")) {
            throw new Error(`unknown argument '${a}'\n${USAGE}`);
        } else {
            if (!a.startsWith("/")) throw new Error(`a request path starts with '/', got '${a}'\n${USAGE}`);
            paths.push(a);
        }
    }
    if (!paths.length) throw new Error(`give at least one request path\n${USAGE}`);
    return { variant, apiProfile, overrides, json, paths };
}

async function main(): Promise<void> {
    const args = parseExplainArgs(process.argv.slice(2));
    const objects = (await renderStack({ variant: args.variant, apiProfile: args.apiProfile, overrides: args.overrides })) as K8sObject[];
    const model = gatewayModel(objects);
    const results = args.paths.map((p) => explainWith(model, p));
    if (args.json) {
        console.log(JSON.stringify(results, null, 2));
        return;
    }
    console.log(`Gateway model (no Envoy here): Gateway ${model.gateway.name}, virtual host ${model.virtualHost}, domain ${model.domain}, failure_mode_deny ${model.failureModeDeny}`);
    console.log(`EnvoyFilters read: ${model.filterNames.join(", ")}\n`);
    for (const r of results) console.log(`${formatExplanation(r)}\n`);
}

if (require.main === module) {
    main().catch((e: Error) => {
        console.error(e instanceof ConfigError ? e.message : e.message ?? e);
        process.exit(2);
    });
}
