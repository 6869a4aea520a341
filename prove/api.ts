/**
 * The typed API of `mesh-ratelimit explain` and `replay`: a user's own program, rendered under
 * Pulumi's mocks, and requests or an access log through the model of what it deploys. Nothing runs
 * at import.
 */
import * as fs from "fs";
import { parseLog } from "./access-log";
import { renderProgram, RenderProgramOptions } from "./program-runner";
import { changedDecisions, ChangedDecision, decideAll, inTimeOrder, lineText, ReplayResult, summarize } from "./replay";
import { Decision, ProveRequest, Simulator } from "./simulate";
import { LocalBucket } from "./gateways";

/** A request to explain; without `timeMs`, every request of one call arrives at the same instant. */
export type ExplainRequest = Omit<ProveRequest, "timeMs"> & { timeMs?: number };

export interface ProgramExplanation {
    /** The program's entry file. */
    main: string;
    /** The gateways the program's limits act on (`standIn`: the program does not declare it; one catch-all route modelled). */
    gateways: { name: string; hosts: string[]; standIn: boolean }[];
    localBuckets: LocalBucket[];
    /** One decision per request, in order; the requests share the counters and buckets. */
    decisions: Decision[];
}

export interface ExplainOptions extends RenderProgramOptions {
    /** When the requests without their own time arrive (ms since the epoch). Defaults to now. */
    nowMs?: number;
}

/**
 * Renders the program in `dir` under Pulumi's mocks and decides each request in order, as the
 * gateway, the rate-limit service and the local buckets it deploys would (a model: no Envoy runs).
 */
export async function explainProgram(dir: string, requests: ExplainRequest[], opts: ExplainOptions = {}): Promise<ProgramExplanation> {
    const program = await renderProgram(dir, opts);
    const sim = new Simulator(program.objects);
    const now = opts.nowMs ?? Date.now();
    return {
        main: program.main,
        gateways: sim.gateways.map((g) => ({ name: g.name, hosts: g.hosts, standIn: g.standIn })),
        localBuckets: sim.buckets,
        decisions: requests.map((r) => sim.decide({ ...r, timeMs: r.timeMs ?? now })),
    };
}

export interface ReplayOptions extends RenderProgramOptions {
    /** A second program folder: the requests whose decision changes are listed. */
    compare?: string;
}

export interface ProgramReplay extends ReplayResult {
    /** With `compare`: the requests whose decision differs, by line. */
    changed?: ChangedDecision[];
    /** With `compare`: the second program's summary. */
    compared?: ReplayResult;
}

/**
 * Replays an access log (its text, Istio's default text format or JSON lines) through the program in
 * `dir`: the requests in the order of their timestamps, the service's windows taken from them.
 */
export async function replayLog(dir: string, logText: string, opts: ReplayOptions = {}): Promise<ProgramReplay> {
    const log = parseLog(logText);
    const { ordered, outOfOrder } = inTimeOrder(log.requests);
    const program = await renderProgram(dir, opts);
    const decisions = decideAll(program.objects, ordered);
    const result: ProgramReplay = summarize(log, ordered, decisions, outOfOrder);
    withLineTexts(result, logText);
    if (opts.compare !== undefined) {
        const other = await renderProgram(opts.compare, opts);
        const otherDecisions = decideAll(other.objects, ordered);
        result.compared = withLineTexts(summarize(log, ordered, otherDecisions, outOfOrder), logText);
        result.changed = changedDecisions(ordered, decisions, otherDecisions);
    }
    return result;
}

/** Each rule's first refused line, as written in the log. */
function withLineTexts(r: ReplayResult, text: string): ReplayResult {
    for (const rule of r.rules) if (rule.firstRefusedLine !== undefined) rule.firstRefusedText = lineText(text, rule.firstRefusedLine);
    return r;
}

/** replayLog of a file. */
export function replayLogFile(dir: string, file: string, opts: ReplayOptions = {}): Promise<ProgramReplay> {
    return replayLog(dir, fs.readFileSync(file, "utf8"), opts);
}
