/**
 * The `mesh-ratelimit` command line: its help texts and the parsing of its flags. Pure.
 */
import { parseIp } from "../builders/client-cidr";
import { METHOD_TOKEN } from "../builders/request-match";
import { ExplainRequest } from "./api";
import { MAX_LINE_BYTES } from "./log-input";
import { formatReader } from "./log-format";

/** A command line that cannot be run: the message says what is wrong and how to write it. */
export class UsageError extends Error {}

/** The exit statuses of `mesh-ratelimit`, one table (the help text and docs/explain-and-replay.md show it). */
export const EXIT = {
    /** Done; with a gate, the gate passed. */
    ok: 0,
    /** The program could not be found, loaded or read, or it threw; or the answer could not be written (a full disk). */
    program: 1,
    /** A usage error: a flag or argument that cannot be read. */
    usage: 2,
    /** The gate failed: --max-refused or --max-new-refusals exceeded. */
    gate: 3,
    /** The access log cannot be read: missing, a folder, unreadable, no request read from it, or the program's log format cannot be replayed. */
    input: 4,
    /** The program renders no rate-limit filter and no local bucket: nothing of it limits a request. */
    nothing: 5,
    /** --refuse-approximate: an answer rests on something the model could not model (listed). */
    approximate: 6,
} as const;

const EXIT_TABLE = `exit status:
  0  done (with a gate: the gate passed)
  1  the program could not be found, loaded or read, or it threw; or the answer could not be written
     (a full disk: the error says so)
  2  a usage error (a flag or argument that cannot be read)
  3  the gate failed: --max-refused or --max-new-refusals exceeded
  4  the access log cannot be read: missing, a folder, unreadable, no request read from it, or the
     program's own access log format cannot be replayed
  5  the program renders no rate-limit filter and no local bucket: no limit of it was modelled
     (a program whose limits failed to render is status 1)
  6  --refuse-approximate: an answer rests on something the model could not model (each is named)
A reader that closes the output early (| head) does not change the status.`;

const COMMON = `  --program <dir>       the folder of your Pulumi program (its Pulumi.yaml 'main', else index.ts or
                        index.js). It runs in this process under Pulumi's mocks: no cluster, no Pulumi
                        CLI; it must import 'mesh-ratelimit' and '@pulumi/pulumi' from its own
                        node_modules. Required.
  --stack <name>        read the program's config from Pulumi.<name>.yaml in its folder (secret values
                        read as a placeholder). Defaults to dev (no file: no config).
  --set <key>=<value>   a config value laid over the stack file's (key with or without '<project>:');
                        may be repeated.
  --json                print the result as JSON instead of text; an error too, as
                        {"error": {"status", "message"}}.
  --refuse-approximate  exit with status 6 when any decision rests on something the model could not
                        model (each such decision and the summary name what). Defaults to printing
                        them and exiting 0.
  --help                this text.`;

export const HELP = {
    main: `usage: mesh-ratelimit <command> [flags]

Answers "would this request, or this access log, be refused?" for your own Pulumi program holding
GlobalRateLimit, LocalRateLimit or MeshRateLimit, before anything is deployed. It is a model of
Envoy and envoyproxy/ratelimit, not Envoy.

commands:
  explain   decide requests one after another (they share counters: the sixth POST of a
            5-a-minute rule is refused) and show the response each gets
  replay    replay an access log through the program and count what each rule refuses

mesh-ratelimit <command> --help explains each command's flags; mesh-ratelimit --version prints the
package's version.

${EXIT_TABLE}`,
    explain: `usage: mesh-ratelimit explain --program <dir> [--method M] [--header k=v]... [--client-address ip]
                              [--claim k=v]... [--jwks file] [--host h] [--upstream svc.ns:port] [--stack name] [--set k=v]...
                              [--json] [--detail] [--refuse-approximate] <path>...

For each request path, in order: the decision (allowed, or refused and by what: the gateway's
pre-limit, a rule at the rate-limit service, or a workload's local bucket), the descriptors and
their counters, and the response the client gets (status, X-RateLimit-*, RateLimit-Policy,
Retry-After, body). All the requests of one command arrive at the same instant and share counters.

In the mesh-ratelimit repository itself, explain without --program explains the repository's own
stack from its render (mesh-ratelimit explain --stack NAME <path>..., --stack reading Pulumi.NAME.yaml;
npm run explain -- <path>... is the same command); its flags: npm run explain -- --help.

${COMMON}
A request flag applies to the paths written after it (one command can send six POSTs from one
client, then another client's POST, then a GET); written after the last path, to every path.

  --method <M>          the requests' HTTP method. Defaults to GET.
  --header <k>=<v>      a request header (name in any case); may be repeated (a repeated name sends
                        the header twice; given again after a path, it replaces the earlier values).
  --client-address <ip> the client's address as the gateway trusts it (what per-client rules count).
                        Defaults to 192.0.2.1.
  --claim <k>=<v>       a claim of the request's token as the gateway verified it (what identity rules
                        count): --claim sub=alice; iss defaults to the program's one issuer, and
                        --claim iss=<other> sends another issuer's token. May be repeated. Without it
                        the request has no verified token.
  --header authorization="Bearer <jwt>"  a token as the client sends it: verified as the gateway's
                        JWT filter does for the program's RequestAuthentication (issuer, signature
                        RS/PS/ES, exp and nbf against the request's time with 60 s of skew, audiences).
                        Verified: its claims count (as --claim); invalid, expired, of another audience
                        or of an issuer no RequestAuthentication names: 401 before any rate limit.
                        Printed as Bearer <redacted>. Without keys for its issuer it is not verified
                        (said on each identity rule it meets).
  --jwks <file>         the issuer's JWKS document ({"keys": [...]}) to verify bearer tokens with;
                        a RequestAuthentication with inline jwks needs none.
  --host <h>            the Host header: which gateway and virtual host serve the requests. Defaults
                        to the first host of the program's first gateway.
  --upstream <svc.ns:port>  the service the gateway routes the requests to: a LocalRateLimit on its
                        pods then counts them too. Defaults to none (no local bucket).
  --detail              with more than 20 requests, print every request's decision (without it:
                        the summary and the first 20).
  <path>...             request paths, each starting with '/', query included.

${EXIT_TABLE}`,
    replay: `usage: mesh-ratelimit replay --program <dir> [--compare <dir>] [--max-refused <percent>] [--max-new-refusals <n>]
                             [--log-format <format>] [--stack name] [--set k=v]... [--json] [--refuse-approximate]
                             <access log>

Replays an access log through the program: the requests in the order of their timestamps, each
rule's fixed windows taken from those times. Prints per rule: requests, refused, the keys most
refused and the first refused line. Bad lines (a line over ${MAX_LINE_BYTES.toLocaleString("en")} bytes, NUL bytes, a format not
read) are never replayed: counted, and listed by number with the reason.

Formats read, line by line: Istio's default text format, Envoy's default text format, and JSON
lines with Istio's JSON keys (start_time, method, path, authority, downstream_remote_address,
x_forwarded_for, upstream_cluster).

${COMMON}
  --compare <dir>       the program being proposed, compared with --program (the one deployed): lists
                        the requests whose decision changes. The gates then judge this program.
  --max-refused <pct>   exit with status 3 when more than this percentage of the requests is refused
                        (by --compare's program when given, else by --program's). Defaults to no gate.
  --max-new-refusals <n>  with --compare: exit with status 3 when more than n requests that --program
                        allows are refused by --compare's program. Defaults to no gate.
  --log-format <format> the Envoy access log format the gateway wrote the log with (its
                        accessLogFormat: text, or a JSON object of keys to %OPERATOR%s), so a
                        %REQ(name)% header is replayed per value. Defaults to the format of the
                        program's own access log (GlobalRateLimit accessLog), else the formats above.
  <access log>          the log file, or - for standard input; gzip-compressed or not (read by its
                        content, whatever its name).

${EXIT_TABLE}`,
};

export interface Common {
    program: string;
    stack?: string;
    config: Record<string, string>;
    json: boolean;
    refuseApproximate: boolean;
}

export type Command =
    | { command: "help"; topic: keyof typeof HELP }
    | { command: "version" }
    | (Common & { command: "explain"; requests: ExplainRequest[]; detail: boolean; jwks?: string })
    | (Common & { command: "replay"; log: string; compare?: string; maxRefused?: number; maxNewRefusals?: number; logFormat?: string });

/** Flags that take a value, per command. */
const VALUE_FLAGS = {
    explain: ["--program", "--stack", "--set", "--method", "--header", "--client-address", "--claim", "--jwks", "--host", "--upstream"],
    replay: ["--program", "--stack", "--set", "--compare", "--max-refused", "--max-new-refusals", "--log-format"],
};

function keyValue(flag: string, v: string): [string, string] {
    const eq = v.indexOf("=");
    if (eq < 1) throw new UsageError(`${flag} takes <key>=<value>, got '${v}'`);
    return [v.slice(0, eq), v.slice(eq + 1)];
}

/** The flags and positionals of `explain` or `replay`, in the order written. */
interface Flags {
    values: Map<string, string[]>;
    json: boolean;
    detail: boolean;
    refuseApproximate: boolean;
    positional: string[];
    help: boolean;
    /** Every flag with a value and every positional, in order (explain applies a flag to the paths after it). */
    sequence: ({ flag: string; value: string } | { positional: string })[];
}

/** Reads the flags of `explain` or `replay`. */
function readFlags(command: "explain" | "replay", argv: string[]): Flags {
    const f: Flags = { values: new Map(), json: false, detail: false, refuseApproximate: false, positional: [], help: false, sequence: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i]!;
        if (a === "--json") f.json = true;
        else if (a === "--refuse-approximate") f.refuseApproximate = true;
        else if (a === "--detail" && command === "explain") f.detail = true;
        else if (a === "--help" || a === "-h") f.help = true;
        else if (a.startsWith("--")) {
            if (!VALUE_FLAGS[command].includes(a))
                throw new UsageError(`${command} has no flag ${a} (its flags: ${VALUE_FLAGS[command].join(", ")}, --json, --refuse-approximate, --help)`);
            const v = argv[++i];
            if (v === undefined || v.startsWith("--")) throw new UsageError(`${a} needs a value`);
            if (a === "--log-format") checkLogFormat(v);
            if (v.trim() === "") throw new UsageError(`${a} was given an empty value: write a value after it`);
            f.values.set(a, [...(f.values.get(a) ?? []), v]);
            f.sequence.push({ flag: a, value: v });
        } else {
            f.positional.push(a);
            f.sequence.push({ positional: a });
        }
    }
    return f;
}

/** A --log-format that replay cannot read is a usage error, named with what it lacks. */
function checkLogFormat(v: string): void {
    try {
        formatReader(v);
    } catch (e) {
        throw new UsageError(`--log-format: ${(e as Error).message}`);
    }
}

function common(values: Map<string, string[]>, json: boolean, refuseApproximate: boolean): Common {
    const program = values.get("--program")?.at(-1);
    if (!program) throw new UsageError("--program <dir> is required: the folder of your Pulumi program");
    const stack = values.get("--stack")?.at(-1);
    const config = Object.fromEntries((values.get("--set") ?? []).map((v) => keyValue("--set", v)));
    return { program, ...(stack ? { stack } : {}), config, json, refuseApproximate };
}

/**
 * One request flag read into the request the following paths take. `fresh`: the headers given
 * since the last path; a header given again before the next path is sent twice, one given again
 * after a path replaces its earlier values (a sequence can switch a client's token).
 */
function applyRequestFlag(r: Omit<ExplainRequest, "path">, flag: string, v: string, fresh: Set<string>): void {
    if (flag === "--method") {
        if (!METHOD_TOKEN.test(v)) throw new UsageError(`--method takes an HTTP method such as POST, got '${v}'`);
        r.method = v;
    } else if (flag === "--client-address") {
        if (!parseIp(v)) throw new UsageError(`--client-address takes an IPv4 or IPv6 address, got '${v}'`);
        r.clientAddress = v;
    } else if (flag === "--header") {
        const [k, value] = keyValue("--header", v);
        const headers = { ...(r.headers ?? {}) } as Record<string, string[]>;
        const name = k.toLowerCase();
        headers[name] = [...((fresh.has(name) ? headers[name] : undefined) ?? []), value];
        fresh.add(name);
        r.headers = headers;
    } else if (flag === "--host") r.host = v;
    else if (flag === "--upstream") r.upstream = v;
    else if (flag === "--claim") {
        const [k, value] = keyValue("--claim", v);
        r.claims = { ...(r.claims ?? {}), [k]: value };
    }
}

/**
 * The explain requests of the flags: a request flag applies to every path after it, so one command
 * can send six POSTs from one client and then a GET or another client's POST; flags written after
 * the last path apply to every path.
 */
function explainRequests(f: Flags): ExplainRequest[] {
    if (!f.positional.length) throw new UsageError("give at least one request path, e.g. mesh-ratelimit explain --program . /login");
    for (const p of f.positional) if (!p.startsWith("/")) throw new UsageError(`a request path starts with '/', got '${p}'`);
    const lastPath = f.sequence.map((x) => "positional" in x).lastIndexOf(true);
    const trailing = f.sequence.slice(lastPath + 1);
    const current: Omit<ExplainRequest, "path"> = {};
    const trailingHeaders = new Set<string>();
    for (const x of trailing) if ("flag" in x) applyRequestFlag(current, x.flag, x.value, trailingHeaders);
    const out: ExplainRequest[] = [];
    const running: Omit<ExplainRequest, "path"> = {};
    const fresh = new Set<string>();
    for (const x of f.sequence.slice(0, lastPath + 1)) {
        if ("flag" in x) applyRequestFlag(running, x.flag, x.value, fresh);
        else {
            out.push({ path: x.positional, ...running, ...current });
            fresh.clear();
        }
    }
    return out;
}

/** The command of a command line. */
export function parseCommand(argv: string[]): Command {
    const [command, ...rest] = argv;
    if (command === undefined || command === "--help" || command === "-h" || command === "help") return { command: "help", topic: "main" };
    if (command === "--version" || command === "-V" || command === "version") return { command: "version" };
    if (command !== "explain" && command !== "replay") throw new UsageError(`unknown command '${command}': the commands are explain and replay`);
    const f = readFlags(command, rest);
    if (f.help) return { command: "help", topic: command };
    const base = common(f.values, f.json, f.refuseApproximate);
    if (command === "explain") {
        const jwks = f.values.get("--jwks")?.at(-1);
        return { ...base, command, requests: explainRequests(f), detail: f.detail, ...(jwks ? { jwks } : {}) };
    }
    if (f.positional.length !== 1) throw new UsageError(`replay takes one access log file, got ${f.positional.length} (${f.positional.join(" ") || "none"})`);
    const maxRefused = gateValue(f, "--max-refused", /^\d+(\.\d+)?%?$/, "a percentage from 0 to 100, such as 2.5 or 2.5%");
    if (maxRefused !== undefined && maxRefused > 100) throw new UsageError(`--max-refused takes a percentage from 0 to 100, got '${maxRefused}'`);
    const maxNewRefusals = gateValue(f, "--max-new-refusals", /^\d+$/, "a whole number of requests, such as 0");
    const compare = f.values.get("--compare")?.at(-1);
    const logFormat = f.values.get("--log-format")?.at(-1);
    if (maxNewRefusals !== undefined && !compare)
        throw new UsageError("--max-new-refusals counts the requests --compare's program refuses that --program's allows: give --compare <dir> too");
    return {
        ...base,
        command,
        log: f.positional[0]!,
        ...(compare ? { compare } : {}),
        ...(maxRefused !== undefined ? { maxRefused } : {}),
        ...(maxNewRefusals !== undefined ? { maxNewRefusals } : {}),
        ...(logFormat !== undefined ? { logFormat } : {}),
    };
}

/** A gate's threshold: the last value given, which must match `form` (an empty value is a usage error, never 0). */
function gateValue(f: Flags, flag: string, form: RegExp, what: string): number | undefined {
    const all = f.values.get(flag);
    if (!all) return undefined;
    if (new Set(all).size > 1) throw new UsageError(`${flag} was given ${all.length} different values (${all.join(", ")}): give it once`);
    const v = all.at(-1)!.trim();
    if (!form.test(v)) throw new UsageError(`${flag} takes ${what}, got '${v}'`);
    return Number(v.replace(/%$/, ""));
}
