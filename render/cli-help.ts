/**
 * What `--help` prints for the render and explain commands: what the command does, then one line
 * per flag (what it sets, with an example). One table: a flag both commands take is described once.
 */

export interface FlagHelp {
    flag: string;
    /** The value's placeholder (`A|B`, `FILE`); absent for a switch. */
    value?: string;
    /** What it does, one line. */
    text: string;
    /** A whole example of its use. */
    example: string;
}

/** The flags every command shares (render/args.ts parses them). */
export const SHARED_FLAGS: readonly FlagHelp[] = [
    { flag: "--variant", value: "A|B", text: "the specification's preset (config key variant; default A)", example: "--variant B" },
    { flag: "--profile", value: "seed|current", text: "the API versions of the objects (config key apiProfile; default current)", example: "--profile seed" },
    {
        flag: "--local-placement",
        value: "all-routes|single-route",
        text: "where the sidecar's token bucket sits (config key localPlacement)",
        example: "--local-placement single-route",
    },
    { flag: "--port-mode", value: "http|tcp", text: "the ESP Service's port protocol (config key espPortMode)", example: "--port-mode tcp" },
    {
        flag: "--set",
        value: "key=value",
        text: "sets any config key (docs/configuration.md lists them); repeat it, a later one wins",
        example: "--set managedApi=false --set catchAllLimit=50",
    },
    {
        flag: "--stack",
        value: "NAME",
        text: "reads Pulumi.NAME.yaml instead of Pulumi.dev.yaml as the stack's config, and runs as that stack (its objects' owner)",
        example: "--stack prod",
    },
    {
        flag: "--config",
        value: "FILE",
        text: "lays a stack config file (config: mesh-ratelimit:<key>: <value>) over Pulumi.yaml's defaults and the stack's file; the files read are printed to stderr",
        example: "--config team.yaml",
    },
    { flag: "--help", text: "prints this help and exits", example: "--help" },
];

/** The help text: what the command does, its usage line, then each flag on one line with an example. */
export function helpText(about: string, usage: string, flags: readonly FlagHelp[]): string {
    const all = [...flags, ...SHARED_FLAGS];
    const names = all.map((f) => (f.value ? `${f.flag} ${f.value}` : f.flag));
    const width = Math.max(...names.map((n) => n.length));
    const lines = all.map((f, i) => `  ${names[i].padEnd(width)}  ${f.text} (e.g. ${f.example})`);
    return [about, "", usage, "", "flags:", ...lines, ""].join("\n");
}

/** The extra flags of `npm run render`. */
export const RENDER_FLAGS: readonly FlagHelp[] = [
    {
        flag: "--out",
        value: "DIR",
        text: "the folder to write the objects to (default rendered/); files of an earlier render there are replaced",
        example: "--out out/b-seed",
    },
];

/** The extra flags of `npm run explain`. */
export const EXPLAIN_FLAGS: readonly FlagHelp[] = [
    { flag: "--method", value: "METHOD", text: "the request's method (default GET)", example: "--method POST" },
    { flag: "--host", value: "HOST", text: "the request's Host header: which virtual host serves it", example: "--host bookinfo.example.com" },
    { flag: "--client-address", value: "IP", text: "the client's address as the gateway sees the connection", example: "--client-address 203.0.113.7" },
    { flag: "--xff", value: "LIST", text: "the X-Forwarded-For header the request arrives with", example: '--xff "198.51.100.1, 203.0.113.7"' },
    {
        flag: "--trusted-hops",
        value: "N",
        text: "how many X-Forwarded-For entries the gateway trusts (Istio's numTrustedProxies)",
        example: "--trusted-hops 1",
    },
    { flag: "--json", text: "prints the explanation as JSON", example: "--json" },
];
