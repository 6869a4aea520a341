/**
 * `mesh-ratelimit explain [--stack NAME] [--variant A|B] [--profile seed|current] [--local-placement ...] [--port-mode ...] [--set key=value]... [--config FILE] [--stack NAME] [--host <host>] [--client-address <ip>] [--xff <list>] [--trusted-hops <n>] [--method <method>] [--json] <path>...`
 *
 * For each request path: the route the gateway picks, the descriptors it sends to the rate-limit
 * service, the limit of the config that answers them, the counter (bucket) they share and the
 * X-RateLimit headers the response carries.
 * Computed by the gateway MODEL in gateway-model/explain.ts from the objects the stack renders.
 * This is `mesh-ratelimit explain` without `--program` in this repository (render/mesh-ratelimit-cli.ts);
 * `npm run explain` is an alias of it (render/explain-cli.ts).
 */
import { cliError, configSources, parseCli, UsageError } from "./args";
import { EXPLAIN_FLAGS, helpText } from "./cli-help";
import { renderStack } from "./render";
import { trustedClientAddress } from "../gateway-model/client-address";
import { DEFAULT_CLIENT_ADDRESS, ModelRequest } from "../gateway-model/model";
import { explainWith } from "../gateway-model/explain";
import { gatewayModel, HostNotServed } from "../gateway-model/read-rendered";
import { K8sObject } from "../lib/k8s-object";
import { parseIp } from "../builders/client-cidr";
import { formatExplanation } from "./explain-format";
import { METHOD_TOKEN } from "../builders/request-match";
import { formatPreLimit, preLimitDescriptors, readPreLimit } from "../gateway-model/pre-limit-model";

const USAGE =
    "usage: mesh-ratelimit explain [--stack NAME] [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route] [--port-mode http|tcp] [--set key=value]... [--config FILE] [--stack NAME] [--host <host>] [--client-address <ip>] [--xff <list>] [--trusted-hops <n>] [--method <method>] [--json] <path>...";

const ABOUT =
    "Without --program, in this repository (npm run mesh-ratelimit -- explain ..., or its alias npm run explain -- ...): explains, for each request path, what the gateway of the repository's own stack would do (a MODEL of Envoy read from the rendered filters; no Envoy runs): the route, the descriptors sent to the rate-limit service, the limit that answers, the counter and the X-RateLimit headers.";

/** The same flags as `npm run render` (render/args.ts), plus `--host`, `--json` and the request paths. */
export function parseExplainArgs(argv: string[]): {
    variant?: "A" | "B";
    apiProfile?: "seed" | "current";
    overrides: Record<string, string>;
    json: boolean;
    paths: string[];
    host?: string;
    help?: true;
    /** `--stack`: its name and the config of its file. */
    stack?: string;
    base?: Record<string, string>;
    /** Where the config came from (configSources). */
    sources: string;
    client: ModelRequest & { xForwardedFor?: string };
} {
    const rest = [...argv];
    // --host <name>: the request's Host header (which virtual host of the VirtualService serves it).
    const host = takeValue(rest, "--host", "bookinfo.example.com");
    const client = clientOfArgs(rest);
    const a = parseCli(rest, { usage: USAGE, switches: ["--json"], positional: true });
    const { variant, apiProfile, ...overrides } = a.overrides;
    const sources = configSources(a);
    const stack = { ...(a.stack ? { stack: a.stack } : {}), ...(a.base ? { base: a.base } : {}) };
    if (a.help) return { overrides, json: a.json, paths: a.positional, help: true, client, sources };
    for (const p of a.positional) if (!p.startsWith("/")) throw new UsageError(`a request path starts with '/', got '${p}'\n${USAGE}`);
    if (!a.positional.length) throw new UsageError(`give at least one request path\n${USAGE}`);
    return {
        variant: variant as "A" | "B" | undefined,
        apiProfile: apiProfile as "seed" | "current" | undefined,
        overrides,
        json: a.json,
        paths: a.positional,
        ...(host !== undefined ? { host } : {}),
        client,
        ...stack,
        sources,
    };
}

/** Removes `flag` and its value from `rest` and returns the value (undefined without the flag); a flag without a value is a usage error. */
function takeValue(rest: string[], flag: string, example: string): string | undefined {
    const i = rest.indexOf(flag);
    if (i < 0) return undefined;
    const v = rest[i + 1];
    if (v === undefined || v === "" || v.startsWith("--")) throw new UsageError(`${flag} needs a value, e.g. ${flag} ${example}\n${USAGE}`);
    rest.splice(i, 2);
    return v;
}

/**
 * The client (gateway MODEL) from the flags it takes out of `rest`: the connection's source address,
 * the X-Forwarded-For it arrives with, the gateway's xff_num_trusted_hops (Istio's numTrustedProxies)
 * and the request's method as the client writes it (a rule's methods match it in any case).
 */
function clientOfArgs(rest: string[]): ModelRequest & { xForwardedFor?: string } {
    const clientAddress = takeValue(rest, "--client-address", "203.0.113.7");
    if (clientAddress !== undefined && !parseIp(clientAddress))
        throw new UsageError(`--client-address needs an IPv4 or IPv6 address, got '${clientAddress}'\n${USAGE}`);
    const xForwardedFor = takeValue(rest, "--xff", '"198.51.100.1, 203.0.113.7"');
    const hops = takeValue(rest, "--trusted-hops", "1");
    const method = takeValue(rest, "--method", "POST");
    if (method !== undefined && !METHOD_TOKEN.test(method)) throw new UsageError(`--method needs an HTTP method, got '${method}'\n${USAGE}`);
    if (hops !== undefined && !/^[0-9]{1,3}$/.test(hops)) throw new UsageError(`--trusted-hops needs a whole number, got '${hops}'\n${USAGE}`);
    return {
        ...(clientAddress !== undefined ? { clientAddress } : {}),
        ...(xForwardedFor !== undefined ? { xForwardedFor, headers: { "x-forwarded-for": xForwardedFor } } : {}),
        ...(hops !== undefined ? { xffNumTrustedHops: Number(hops) } : {}),
        ...(method !== undefined ? { method } : {}),
    };
}

/** The repository's own stack explained: `argv` is what follows `explain`; the exit status. */
export async function explainStack(argv: string[]): Promise<number> {
    try {
        await explainRendered(argv);
        return 0;
    } catch (e) {
        const { message, code } = cliError(e, "nothing was explained");
        console.error(message);
        return code;
    }
}

async function explainRendered(argv: string[]): Promise<void> {
    const args = parseExplainArgs(argv);
    if (args.help) {
        console.log(helpText(ABOUT, USAGE, EXPLAIN_FLAGS));
        return;
    }
    console.error(args.sources);
    const { variant, apiProfile, overrides, stack, base } = args;
    const objects = (await renderStack({ variant, apiProfile, overrides, ...(stack ? { stack } : {}), ...(base ? { base } : {}) })) as K8sObject[];
    let model;
    try {
        model = gatewayModel(objects, args.host);
    } catch (e) {
        if (!(e instanceof HostNotServed)) throw e;
        // Another team's host on the same gateway: an answer, not an error.
        console.log(`Gateway model (no Envoy here): host ${args.host}: ${e.message}`);
        return;
    }
    const { xForwardedFor, ...request } = args.client;
    const results = args.paths.map((p) => explainWith(model, p, request));
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
    const peer = request.clientAddress ?? DEFAULT_CLIENT_ADDRESS;
    const trusted = trustedClientAddress({ peer, xForwardedFor, xffNumTrustedHops: request.xffNumTrustedHops });
    console.log(
        `Client: peer ${peer}${xForwardedFor !== undefined ? `, X-Forwarded-For "${xForwardedFor}"` : ""}, xff_num_trusted_hops ${request.xffNumTrustedHops ?? 0}: remote_address sends ${trusted}`,
    );
    console.log("Any other host on the gateway is not this stack's: no descriptor, no rate-limit call, unaffected by the service's failures.\n");
    for (const r of results) console.log(`${formatExplanation(r)}\n${formatPreLimit(model, pre, r.path)}\n`);
}
