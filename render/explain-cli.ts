/**
 * `npm run explain -- [--variant A|B] [--profile seed|current] [--local-placement ...] [--port-mode ...] [--set key=value]... [--json] <path>...`
 *
 * For each request path: the route the gateway picks, the descriptors it sends to the rate-limit
 * service, the limit of the config that answers them and the counter (bucket) they share.
 * Computed by the gateway MODEL in render/explain.ts from the objects the stack renders.
 */
import { cliError, parseCli, UsageError } from "./args";
import { renderStack } from "./render";
import { explainWith, gatewayModel, HostNotServed, K8sObject } from "./explain";
import { formatExplanation } from "./explain-format";
import { formatPreLimit, preLimitDescriptors, readPreLimit } from "./pre-limit-model";

const USAGE =
    "usage: npm run explain -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route] [--port-mode http|tcp] [--set key=value]... [--host <host>] [--json] <path>...";

/** The same flags as `npm run render` (render/args.ts), plus `--host`, `--json` and the request paths. */
export function parseExplainArgs(argv: string[]): {
    variant?: "A" | "B";
    apiProfile?: "seed" | "current";
    overrides: Record<string, string>;
    json: boolean;
    paths: string[];
    host?: string;
    help?: true;
} {
    // --host <name>: the request's Host header (which virtual host of the VirtualService serves it).
    const rest = [...argv];
    let host: string | undefined;
    const i = rest.indexOf("--host");
    if (i >= 0) {
        host = rest[i + 1];
        if (!host || host.startsWith("-")) throw new UsageError(`--host needs a host name, e.g. --host bookinfo.example.com\n${USAGE}`);
        rest.splice(i, 2);
    }
    const a = parseCli(rest, { usage: USAGE, switches: ["--json"], positional: true });
    const { variant, apiProfile, ...overrides } = a.overrides;
    if (a.help) return { overrides, json: a.json, paths: a.positional, help: true };
    for (const p of a.positional) if (!p.startsWith("/")) throw new UsageError(`a request path starts with '/', got '${p}'\n${USAGE}`);
    if (!a.positional.length) throw new UsageError(`give at least one request path\n${USAGE}`);
    return {
        variant: variant as "A" | "B" | undefined,
        apiProfile: apiProfile as "seed" | "current" | undefined,
        overrides,
        json: a.json,
        paths: a.positional,
        ...(host !== undefined ? { host } : {}),
    };
}

async function main(): Promise<void> {
    const args = parseExplainArgs(process.argv.slice(2));
    if (args.help) {
        console.log(USAGE);
        return;
    }
    const objects = (await renderStack({ variant: args.variant, apiProfile: args.apiProfile, overrides: args.overrides })) as K8sObject[];
    let model;
    try {
        model = gatewayModel(objects, args.host);
    } catch (e) {
        if (!(e instanceof HostNotServed)) throw e;
        // Another team's host on the same gateway: an answer, not an error.
        console.log(`Gateway model (no Envoy here): host ${args.host}: ${e.message}`);
        return;
    }
    const results = args.paths.map((p) => explainWith(model, p));
    const pre = readPreLimit(objects, model);
    if (args.json) {
        const withPre = results.map((r) => ({
            ...r,
            preLimit: pre ? { envoyFilter: pre.envoyFilter, descriptors: preLimitDescriptors(model, pre, r.path), buckets: pre.descriptors } : null,
        }));
        console.log(JSON.stringify(withPre, null, 2));
        return;
    }
    console.log(
        `Gateway model (no Envoy here): Gateway ${model.gateway.name}, virtual host ${model.virtualHost}, domain ${model.domain}, failure_mode_deny ${model.failureModeDeny}`,
    );
    console.log(`EnvoyFilters read: ${model.filterNames.join(", ")}`);
    const hosts = model.virtualHosts ?? [];
    console.log(
        `Virtual hosts of the VirtualService: ${hosts.map((v) => `${v.name} (${v.limited ? "limited" : "NOT limited: no rate_limits reach it"})`).join(", ")}`,
    );
    console.log("Any other host on the gateway is not this stack's: no descriptor, no rate-limit call, unaffected by the service's failures.\n");
    for (const r of results) console.log(`${formatExplanation(r)}\n${formatPreLimit(model, pre, r.path)}\n`);
}

if (require.main === module) {
    main().catch((e) => {
        const { message, code } = cliError(e, "nothing was explained");
        console.error(message);
        process.exit(code);
    });
}
