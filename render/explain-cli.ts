/**
 * `npm run explain -- [--variant A|B] [--profile seed|current] [--local-placement ...] [--port-mode ...] [--set key=value]... [--json] <path>...`
 *
 * For each request path: the route the gateway picks, the descriptors it sends to the rate-limit
 * service, the limit of the config that answers them and the counter (bucket) they share.
 * Computed by the gateway MODEL in render/explain.ts from the objects the stack renders.
 */
import { cliError, parseCli, UsageError } from "./args";
import { renderStack } from "./render";
import { explainWith, formatExplanation, gatewayModel, K8sObject } from "./explain";

const USAGE = "usage: npm run explain -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route] [--port-mode http|tcp] [--set key=value]... [--json] <path>...";

/** The same flags as `npm run render` (render/args.ts), plus `--json` and the request paths. */
export function parseExplainArgs(argv: string[]): { variant?: "A" | "B"; apiProfile?: "seed" | "current"; overrides: Record<string, string>; json: boolean; paths: string[]; help?: true } {
    const a = parseCli(argv, { usage: USAGE, switches: ["--json"], positional: true });
    const { variant, apiProfile, ...overrides } = a.overrides;
    if (a.help) return { overrides, json: a.json, paths: a.positional, help: true };
    for (const p of a.positional) if (!p.startsWith("/")) throw new UsageError(`a request path starts with '/', got '${p}'\n${USAGE}`);
    if (!a.positional.length) throw new UsageError(`give at least one request path\n${USAGE}`);
    return { variant: variant as "A" | "B" | undefined, apiProfile: apiProfile as "seed" | "current" | undefined, overrides, json: a.json, paths: a.positional };
}

async function main(): Promise<void> {
    const args = parseExplainArgs(process.argv.slice(2));
    if (args.help) {
        console.log(USAGE);
        return;
    }
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
    main().catch((e) => {
        const { message, code } = cliError(e, "nothing was explained");
        console.error(message);
        process.exit(code);
    });
}
