/**
 * The typed API of `mesh-ratelimit explain` and `replay`: a user's own program, rendered under
 * Pulumi's mocks, and requests or an access log through the model of what it deploys. Nothing runs
 * at import.
 */
import { LineSink, LogInputError, readLogFile, splitText } from "./log-input";
import { logReader, LogTable, ReadLog } from "./log-table";
import { FormatReader, formatLogsClaims, formatReader } from "./log-format";
import { headerReader } from "./read-fields";
import { renderProgram, RenderProgramOptions } from "./program-runner";
import { changedDecision, ChangedDecision, ReplayResult, requestOfLine, Tally, verdictOf } from "./replay";
import { Decision, ProveRequest, Simulator } from "./simulate";
import { LocalBucket } from "../gateway-model/workload-buckets";
import { accessLogSettings } from "../gateway-model/access-log-settings";
import { K8sObject } from "../lib/k8s-object";
import { ApproximationCount, ApproximationTally } from "./approximations";
import { CLAIM_NOT_LOGGED, UNVERIFIED_TOKEN } from "./identity-claims";
import { bearerToken, checkToken, JwtCheck, jwtChecksOf, redactedHeaders } from "./jwt-verify";

/** A request to explain; without `timeMs`, every request of one call arrives at the same instant. */
/** `shape` is replay's own (requests of one shape share a plan): an explained request is planned by its fields. */
export type ExplainRequest = Omit<ProveRequest, "timeMs" | "shape"> & { timeMs?: number };

export interface ProgramExplanation {
    /** The program's entry file. */
    main: string;
    /** The gateways the program's limits act on (`standIn`: the program does not declare it; one catch-all route modelled). */
    gateways: { name: string; hosts: string[]; standIn: boolean }[];
    localBuckets: LocalBucket[];
    /** One decision per request, in order; the requests share the counters and buckets. */
    decisions: Decision[];
    /** Every approximation of the decisions (each decision carries its own), with how many it affected and the first (by number). */
    approximations: ApproximationCount[];
    /** Set when the program renders no rate-limit filter and no local bucket: why nothing of it was modelled. */
    nothingModelled?: string;
}

/** What a program that renders no limit is told (exit status 5). */
export function nothingModelledOf(sim: Simulator): string | undefined {
    if (sim.gateways.length || sim.buckets.length) return undefined;
    return "the program renders no rate-limit filter on a gateway and no local bucket on a workload: no limit of it was modelled, so every request is allowed here. Does it create a GlobalRateLimit, PlatformRateLimit, LocalRateLimit or MeshRateLimit, and do they render (a component's error inside an output fails the command)?";
}

/**
 * What the gateway's JWT filter makes of a request's `Authorization` header when no `--claim` says
 * it: a bearer token verified against the program's RequestAuthentications (prove/jwt-verify.ts)
 * gives its claims or a 401; one that cannot be checked here is marked unknown on the identity rules.
 */
function withTokenKnowledge(r: ExplainRequest, checks: readonly JwtCheck[], nowMs: number): ExplainRequest {
    if (r.claims || r.claimsUnknown !== undefined || r.headers?.authorization === undefined) return r;
    const token = bearerToken(r.headers.authorization);
    if (token === undefined || !checks.length) return { ...r, claimsUnknown: UNVERIFIED_TOKEN };
    const t = checkToken(token, checks, nowMs);
    if ("claims" in t) return { ...r, claims: t.claims };
    if ("rejected" in t)
        return { ...r, tokenRejected: { reason: t.rejected, ...(t.requestAuthentication ? { requestAuthentication: t.requestAuthentication } : {}) } };
    return { ...r, claimsUnknown: t.unknown };
}

/** The decision as it is output: the request's bearer token never in it. */
function redacted(d: Decision): Decision {
    return d.request.headers?.authorization === undefined ? d : { ...d, request: { ...d.request, headers: redactedHeaders(d.request.headers) } };
}

export interface ExplainOptions extends RenderProgramOptions {
    /** When the requests without their own time arrive (ms since the epoch). Defaults to now. */
    nowMs?: number;
    /** The keys (a JWKS's `keys`) a bearer token of an issuer without inline keys is verified with (`--jwks`). */
    jwks?: JsonWebKey[];
}

/**
 * Renders the program in `dir` under Pulumi's mocks and decides each request in order, as the
 * gateway, the rate-limit service and the local buckets it deploys would (a model: no Envoy runs).
 */
export async function explainProgram(dir: string, requests: ExplainRequest[], opts: ExplainOptions = {}): Promise<ProgramExplanation> {
    const program = await renderProgram(dir, opts);
    const sim = new Simulator(program.objects);
    const now = opts.nowMs ?? Date.now();
    const checks = jwtChecksOf(program.objects, opts.jwks);
    const decisions = requests.map((r) => {
        const timeMs = r.timeMs ?? now;
        return redacted(sim.decide({ ...withTokenKnowledge(r, checks, timeMs), timeMs }));
    });
    const tally = new ApproximationTally();
    decisions.forEach((d, i) => tally.add(d.approximations, i + 1));
    const nothing = nothingModelledOf(sim);
    return {
        main: program.main,
        gateways: sim.gateways.map((g) => ({ name: g.name, hosts: g.hosts, standIn: g.standIn })),
        localBuckets: sim.buckets,
        decisions,
        approximations: tally.result(),
        ...(nothing ? { nothingModelled: nothing } : {}),
    };
}

export interface ReplayOptions extends RenderProgramOptions {
    /** The program being proposed: the requests whose decision changes from `dir`'s are listed. */
    compare?: string;
    /**
     * The Envoy access log format the log was written with (text, or a JSON object of keys to
     * operators). Defaults to the format the program's own EnvoyFilters give the gateway's access log
     * (GlobalRateLimit's `accessLog`), else Istio's and Envoy's default formats and Istio's JSON keys.
     */
    logFormat?: string;
}

/** How many changed decisions are kept with their line (all are counted). */
export const CHANGED_KEPT = 1000;

export interface ProgramReplay extends ReplayResult {
    /** With `compare`: the first CHANGED_KEPT requests whose decision differs, by line. */
    changed?: ChangedDecision[];
    /** With `compare`: how many requests' decisions differ. */
    changedCount?: number;
    /** With `compare`: how many requests `dir`'s program allows and the compared one refuses. */
    newRefusals?: number;
    /** With `compare`: the second program's summary. */
    compared?: ReplayResult;
}

/** Feeds a log's lines to a sink (the log's text, or its file read in chunks). */
type LineSource = (sink: LineSink) => void;

/**
 * Replays an access log (its text; each line in a format prove/access-log.ts reads) through the
 * program in `dir`: the requests in the order of their timestamps, the service's windows taken from them.
 */
export function replayLog(dir: string, logText: string, opts: ReplayOptions = {}): Promise<ProgramReplay> {
    return replaySource(dir, (sink) => splitText(logText, sink), opts);
}

/** replayLog of a file, read in chunks: memory grows with the log's requests and distinct values, not its bytes. */
export function replayLogFile(dir: string, file: string, opts: ReplayOptions = {}): Promise<ProgramReplay> {
    return replaySource(dir, (sink) => readLogFile(file, sink), opts);
}

async function replaySource(dir: string, source: LineSource, opts: ReplayOptions): Promise<ProgramReplay> {
    const program = await renderProgram(dir, opts);
    const other = opts.compare !== undefined ? await renderProgram(opts.compare, opts) : undefined;
    // Without --log-format the program's own access-log settings name the format.
    const format = opts.logFormat ?? programLogFormat(program.objects);
    let reader: FormatReader | undefined;
    try {
        reader = format !== undefined ? formatReader(format) : undefined;
    } catch (e) {
        throw new LogInputError(`the program's own access log format cannot be replayed: ${(e as Error).message}`);
    }
    const programs = [program, ...(other ? [other] : [])];
    // Only the headers a rule can read are kept (prove/read-fields.ts): a header no rule reads costs nothing.
    const reads = programs.map((p) => headerReader(p.objects));
    const { log, sink } = logReader(reader, (name) => reads.some((r) => r(name)));
    source(sink);
    if (!log.table.size) throw new LogInputError(noRequestReason(log));
    const claimsUnknown = format !== undefined && formatLogsClaims(format) ? undefined : CLAIM_NOT_LOGGED;
    const sims = programs.map((p) => new Simulator(p.objects, { responses: false }));
    const tallies = sims.map(() => new Tally());
    const changed: ChangedDecision[] = [];
    let changedCount = 0;
    let newRefusals = 0;
    const requestAt = rowRequests(log.table, claimsUnknown);
    for (const i of log.table.order()) {
        const request = requestAt(i);
        const line = log.table.lineOf(i);
        const v0 = verdictOf(sims[0]!.decide(request));
        tallies[0]!.add(v0, line);
        if (sims.length < 2) continue;
        const v1 = verdictOf(sims[1]!.decide(request));
        tallies[1]!.add(v1, line);
        const c = changedDecision(log.table.at(i), v0, v1);
        if (!c) continue;
        changedCount++;
        if (c.before === "allowed") newRefusals++;
        if (changed.length < CHANGED_KEPT) changed.push(c);
    }
    const [result, compared] = tallies.map((t, k) => withNothing(t.result(log, log.table.outOfOrder), sims[k]!));
    withLineTexts(source, [result!, ...(compared ? [compared] : [])]);
    if (!compared) return result!;
    return { ...result!, compared, changed: changed.sort((x, y) => x.line - y.line), changedCount, newRefusals };
}

/** Request templates kept at most (a log's distinct shapes beyond it are built again). */
const TEMPLATES_KEPT = 200_000;

/**
 * The request the model replays for a row of the table: its shape's fields built once per shape
 * (requestOfLine), its time, client and shape id set per row, field by field.
 */
function rowRequests(table: LogTable, claimsUnknown: string | undefined): (i: number) => ProveRequest {
    const templates = new Map<number, ProveRequest>();
    return (i) => {
        const shape = table.shapeOf(i);
        let t = templates.get(shape);
        if (!t) {
            if (templates.size >= TEMPLATES_KEPT) templates.clear();
            const { clientAddress: _, ...rest } = requestOfLine(table.at(i), claimsUnknown);
            templates.set(shape, (t = rest));
        }
        const r: ProveRequest = { method: t.method, path: t.path, timeMs: table.timeOf(i), shape };
        if (t.host !== undefined) r.host = t.host;
        const client = table.clientOf(i);
        if (client !== undefined) r.clientAddress = client;
        if (t.headers !== undefined) r.headers = t.headers;
        if (t.upstream !== undefined) r.upstream = t.upstream;
        if (t.claims !== undefined) r.claims = t.claims;
        if (t.claimsUnknown !== undefined) r.claimsUnknown = t.claimsUnknown;
        return r;
    };
}

/** A replay's result with the program's "nothing modelled" said. */
function withNothing(r: ReplayResult, sim: Simulator): ReplayResult {
    const nothing = nothingModelledOf(sim);
    return nothing ? { ...r, nothingModelled: nothing } : r;
}

/**
 * The access-log format the program's gateways write (gateway-model/access-log-settings.ts): the one
 * format its EnvoyFilters set, undefined when they set none (the default formats are read), a throw
 * when they set several.
 */
export function programLogFormat(objects: K8sObject[]): string | undefined {
    const settings = accessLogSettings(objects);
    const formats = [...new Set(settings.map((s) => s.format))];
    if (formats.length > 1)
        throw new LogInputError(
            `the program sets ${formats.length} different access log formats (${settings.map((s) => s.filter).join(", ")}): give the one the log was written with as --log-format`,
        );
    return formats[0];
}

/** Why a log gave no request: empty, or every line bad (the first reasons named). */
function noRequestReason(log: ReadLog): string {
    if (!log.badCount) return `no request read from the access log: it is empty${log.blank ? ` (${log.blank} blank lines)` : ""}`;
    const first = log.bad.slice(0, 3).map((b) => `line ${b.line}: ${b.reason}`);
    return `no request read from the access log: all ${log.badCount} of its non-blank lines are bad (${first.join("; ")}). docs/explain-and-replay.md lists the formats read.`;
}

/** Each rule's first refused line, as written in the log (read again: the log's text is not kept). */
function withLineTexts(source: LineSource, results: ReplayResult[]): void {
    const wanted = new Set(results.flatMap((r) => r.rules.flatMap((rule) => (rule.firstRefusedLine !== undefined ? [rule.firstRefusedLine] : []))));
    if (!wanted.size) return;
    const texts = new Map<number, string>();
    source({
        line: (text, n) => {
            if (wanted.has(n)) texts.set(n, text.slice(0, 300));
            return texts.size === wanted.size;
        },
        bad: () => undefined,
    });
    for (const r of results) for (const rule of r.rules) if (rule.firstRefusedLine !== undefined) rule.firstRefusedText = texts.get(rule.firstRefusedLine);
}
