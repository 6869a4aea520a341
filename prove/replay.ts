/**
 * Replay: an access log's requests, in the order of their timestamps, through the model of a
 * program (prove/simulate.ts), with the windows taken from the log's own times. Per rule: how many
 * requests it counted, how many it refused, the keys most refused and the first refused line; and,
 * against a second program, the requests whose decision changes. Pure once the objects are given.
 */
import { K8sObject } from "../lib/k8s-object";
import { BadLine, LogRequest, ParsedLog } from "./access-log";
import { Decision, ProveRequest, Simulator } from "./simulate";

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
}

/** The text of 1-based line `n` of a log, cut to 300 characters. */
export function lineText(text: string, n: number): string | undefined {
    let start = 0;
    for (let i = 1; i < n; i++) {
        start = text.indexOf("\n", start) + 1;
        if (start === 0) return undefined;
    }
    const end = text.indexOf("\n", start);
    return text.slice(start, end < 0 ? undefined : end).slice(0, 300);
}

export interface ReplayResult {
    /** Lines read (blank ones included). */
    lines: number;
    requests: number;
    refused: number;
    /** refused / requests × 100 (0 without requests). */
    refusedPercent: number;
    rules: RuleReplay[];
    bad: BadLine[];
    blank: number;
    /** Requests whose time is earlier than a line above them: replayed in time order all the same. */
    outOfOrder: number;
}

/** The request the model replays for a log line. */
export function requestOfLine(r: LogRequest): ProveRequest {
    return {
        method: r.method,
        path: r.path,
        timeMs: r.timeMs,
        ...(r.host ? { host: r.host } : {}),
        ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}),
        ...(r.xForwardedFor ? { headers: { "x-forwarded-for": r.xForwardedFor } } : {}),
        ...(r.upstream ? { upstream: r.upstream } : {}),
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
}

const NONE: string[] = [];

/** The name a refusal is reported under: the rule, or `pre-limit <EnvoyFilter>` / `local bucket <EnvoyFilter>`. */
function refuserOf(d: Decision): string | undefined {
    const b = d.refusedBy;
    if (!b) return undefined;
    if (b.by === "service") return b.rule;
    return `${b.by} ${b.envoyFilter}`;
}

/** The verdict of a decision. */
export function verdictOf(d: Decision): Verdict {
    let counted = NONE;
    for (const c of d.descriptors) if (c.counter && !counted.includes(c.rule)) counted = counted === NONE ? [c.rule] : [...counted, c.rule];
    const by = refuserOf(d);
    if (!by) return { counted };
    const entries = d.refusedBy?.by === "service" ? d.refusedBy.descriptor : d.refusedBy?.by === "pre-limit" ? (d.refusedBy.descriptor ?? []) : [];
    const key =
        entries
            .filter((e, j) => !(j === 0 && e.key === "rule"))
            .map((e) => `${e.key}=${e.value}`)
            .join(", ") || "(the rule's one counter)";
    return { refusedBy: by, key, counted };
}

/** Every request's verdict, in time order (the decisions themselves are not kept: a log may hold millions). */
export function decideAll(objects: K8sObject[], ordered: LogRequest[]): Verdict[] {
    const sim = new Simulator(objects, { responses: false });
    return ordered.map((r) => verdictOf(sim.decide(requestOfLine(r))));
}

/** The per-rule summary of decisions in time order. */
export function summarize(log: ParsedLog, ordered: LogRequest[], verdicts: Verdict[], outOfOrder: number): ReplayResult {
    const rules = new Map<string, { requests: number; refused: number; keys: Map<string, number>; first?: number }>();
    const ruleOf = (name: string) => {
        let r = rules.get(name);
        if (!r) rules.set(name, (r = { requests: 0, refused: 0, keys: new Map() }));
        return r;
    };
    let refused = 0;
    verdicts.forEach((v, i) => {
        const line = ordered[i]!.line;
        for (const rule of v.counted) ruleOf(rule).requests++;
        if (!v.refusedBy) return;
        refused++;
        const r = ruleOf(v.refusedBy);
        if (!v.counted.includes(v.refusedBy)) r.requests++;
        r.refused++;
        if (r.first === undefined || line < r.first) r.first = line;
        r.keys.set(v.key!, (r.keys.get(v.key!) ?? 0) + 1);
    });
    const requests = verdicts.length;
    return {
        lines: log.requests.length + log.bad.length + log.blank,
        requests,
        refused,
        refusedPercent: requests ? (refused / requests) * 100 : 0,
        rules: [...rules.entries()]
            .map(([rule, r]) => ({
                rule,
                requests: r.requests,
                refused: r.refused,
                topRefusedKeys: [...r.keys.entries()]
                    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
                    .slice(0, 5)
                    .map(([key, n]) => ({ key, refused: n })),
                ...(r.first !== undefined ? { firstRefusedLine: r.first } : {}),
            }))
            .sort((a, b) => b.refused - a.refused || a.rule.localeCompare(b.rule)),
        bad: log.bad,
        blank: log.blank,
        outOfOrder,
    };
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

/** The requests whose decision (allowed, or refused and by what) changes from `before` to `after`. */
export function changedDecisions(ordered: LogRequest[], before: Verdict[], after: Verdict[]): ChangedDecision[] {
    const out: ChangedDecision[] = [];
    ordered.forEach((r, i) => {
        const a = verdict(before[i]!);
        const b = verdict(after[i]!);
        if (a !== b)
            out.push({ line: r.line, method: r.method, path: r.path, ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}), before: a, after: b });
    });
    return out.sort((x, y) => x.line - y.line);
}
