/**
 * Replay: an access log's requests, in the order of their timestamps, through the model of a
 * program (prove/simulate.ts), with the windows taken from the log's own times. Per rule: how many
 * requests it counted, how many it refused, the keys most refused and the first refused line; and,
 * against a second program, the requests whose decision changes. Pure once the objects are given.
 */
import { BadLine, LogRequest, ParsedLog } from "./access-log";
import { Decision, ProveRequest } from "./simulate";
import { Approximation, ApproximationCount, ApproximationTally, EXACT } from "./approximations";

export interface RuleReplay {
    /** The rule's name, or `pre-limit <EnvoyFilter>` / `local bucket <EnvoyFilter>`. */
    rule: string;
    /** Requests that reached it (that the rule's counter counted). */
    requests: number;
    refused: number;
    /** The counter keys (descriptor entries after the rule's own) it refused most, most first, up to 5. */
    topRefusedKeys: { key: string; refused: number }[];
    /** The first line it refused. */
    firstRefusedLine?: number;
    /** That line's text (cut to 300 characters). */
    firstRefusedText?: string;
    /** What the model could not model of this rule's decisions (its counts are then approximate, or unknown). */
    approximations?: string[];
}

export interface ReplayResult {
    /** Lines read (blank ones included). */
    lines: number;
    requests: number;
    refused: number;
    /** refused / requests × 100 (0 without requests). */
    refusedPercent: number;
    rules: RuleReplay[];
    /** The first bad lines (BAD_LINES_KEPT of prove/log-table.ts), each with its number and reason. */
    bad: BadLine[];
    /** Every bad line counted (none is replayed). */
    badCount: number;
    blank: number;
    /** Requests whose time is earlier than a line above them: replayed in time order all the same. */
    outOfOrder: number;
    /** Every approximation of the decisions, with how many requests it affected and the first line. */
    approximations: ApproximationCount[];
    /** Set when the program renders no limit (see ProgramExplanation). */
    nothingModelled?: string;
}

/** The request the model replays for a log line; `claimsUnknown`: why the log cannot say the request's verified token (it records none). */
export function requestOfLine(r: LogRequest, claimsUnknown?: string): ProveRequest {
    return {
        method: r.method,
        path: r.path,
        timeMs: r.timeMs,
        ...(r.host ? { host: r.host } : {}),
        ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}),
        ...(r.xForwardedFor || r.headers ? { headers: { ...r.headers, ...(r.xForwardedFor ? { "x-forwarded-for": r.xForwardedFor } : {}) } } : {}),
        ...(r.upstream ? { upstream: r.upstream } : {}),
        ...(r.claims ? { claims: r.claims } : {}),
        ...(claimsUnknown !== undefined ? { claimsUnknown } : {}),
    };
}

/** The log's requests in time order (a stable sort: lines of one instant keep their order). */
export function inTimeOrder(requests: LogRequest[]): { ordered: LogRequest[]; outOfOrder: number } {
    let outOfOrder = 0;
    for (let i = 1; i < requests.length; i++) if (requests[i]!.timeMs < requests[i - 1]!.timeMs) outOfOrder++;
    const ordered = outOfOrder ? [...requests].sort((a, b) => a.timeMs - b.timeMs || a.line - b.line) : requests;
    return { ordered, outOfOrder };
}

/** What replay keeps of one decision: who refused it (absent: allowed), the counter key refused, and the rules that counted it. */
export interface Verdict {
    refusedBy?: string;
    key?: string;
    counted: string[];
    approximations: readonly Approximation[];
}

const NONE: string[] = [];

/** The name a refusal is reported under: the rule, or `pre-limit <EnvoyFilter>` / `local bucket <EnvoyFilter>`. */
function refuserOf(d: Decision): string | undefined {
    const b = d.refusedBy;
    if (!b) return undefined;
    if (b.by === "service") return b.rule;
    if (b.by === "token check") return `token check ${b.requestAuthentication ?? ""}`.trim();
    return `${b.by} ${b.envoyFilter}`;
}

/** The verdict of a decision. */
export function verdictOf(d: Decision): Verdict {
    let counted = NONE;
    for (const c of d.descriptors) if (c.counter && !counted.includes(c.rule)) counted = counted === NONE ? [c.rule] : [...counted, c.rule];
    const by = refuserOf(d);
    const approximations = d.approximations ?? EXACT;
    if (!by) return { counted, approximations };
    const entries = d.refusedBy?.by === "service" ? d.refusedBy.descriptor : d.refusedBy?.by === "pre-limit" ? (d.refusedBy.descriptor ?? []) : [];
    const key =
        entries
            .filter((e, j) => !(j === 0 && e.key === "rule"))
            .map((e) => `${e.key}=${e.value}`)
            .join(", ") || "(the rule's one counter)";
    return { refusedBy: by, key, counted, approximations };
}

interface RuleTally {
    requests: number;
    refused: number;
    keys: Map<string, number>;
    first?: number;
}

/** The per-rule counts of verdicts added one at a time (a log's verdicts are never all held). */
export class Tally {
    private readonly rules = new Map<string, RuleTally>();
    private readonly approximations = new ApproximationTally();
    requests = 0;
    refused = 0;

    private rule(name: string): RuleTally {
        let r = this.rules.get(name);
        if (!r) this.rules.set(name, (r = { requests: 0, refused: 0, keys: new Map() }));
        return r;
    }

    add(v: Verdict, line: number): void {
        this.requests++;
        if (v.approximations.length) this.approximations.add(v.approximations, line);
        for (const rule of v.counted) this.rule(rule).requests++;
        if (!v.refusedBy) return;
        this.refused++;
        const r = this.rule(v.refusedBy);
        if (!v.counted.includes(v.refusedBy)) r.requests++;
        r.refused++;
        if (r.first === undefined || line < r.first) r.first = line;
        r.keys.set(v.key!, (r.keys.get(v.key!) ?? 0) + 1);
    }

    /** The summary, with the log's line counts. */
    result(log: { lines: number; bad: BadLine[]; badCount: number; blank: number }, outOfOrder: number): ReplayResult {
        const approximations = this.approximations.result();
        const rules = [...this.rules.entries()].map(([rule, r]) => ruleReplay(rule, r, ApproximationTally.ofRule(approximations, rule)));
        return {
            lines: log.lines,
            requests: this.requests,
            refused: this.refused,
            refusedPercent: this.requests ? (this.refused / this.requests) * 100 : 0,
            rules: rules.sort((a, b) => b.refused - a.refused || a.rule.localeCompare(b.rule)),
            bad: log.bad,
            badCount: log.badCount,
            blank: log.blank,
            outOfOrder,
            approximations,
        };
    }
}

function ruleReplay(rule: string, r: RuleTally, approximations: string[]): RuleReplay {
    return {
        rule,
        requests: r.requests,
        refused: r.refused,
        topRefusedKeys: [...r.keys.entries()]
            .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
            .slice(0, 5)
            .map(([key, n]) => ({ key, refused: n })),
        ...(r.first !== undefined ? { firstRefusedLine: r.first } : {}),
        ...(approximations.length ? { approximations } : {}),
    };
}

/** The per-rule summary of decisions in time order. */
export function summarize(log: ParsedLog, ordered: LogRequest[], verdicts: Verdict[], outOfOrder: number): ReplayResult {
    const t = new Tally();
    verdicts.forEach((v, i) => t.add(v, ordered[i]!.line));
    const lines = log.requests.length + log.bad.length + log.blank;
    return t.result({ lines, bad: log.bad, badCount: log.bad.length, blank: log.blank }, outOfOrder);
}

/** A request whose decision differs between two programs. */
export interface ChangedDecision {
    line: number;
    method: string;
    path: string;
    clientAddress?: string;
    /** `allowed`, or `refused by <rule>`. */
    before: string;
    after: string;
}

const verdict = (v: Verdict) => (v.refusedBy ? `refused by ${v.refusedBy}` : "allowed");

/** A changed decision, or undefined when both programs decide alike. */
export function changedDecision(r: LogRequest, before: Verdict, after: Verdict): ChangedDecision | undefined {
    const a = verdict(before);
    const b = verdict(after);
    if (a === b) return undefined;
    return { line: r.line, method: r.method, path: r.path, ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}), before: a, after: b };
}
