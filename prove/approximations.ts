/**
 * What the model could not model of a decision, said on the decision it affects: an approximation
 * names the rule it touches (when it touches one) and what was assumed. Every decision carries its
 * own; explain and replay list them in their summary and in `--json`, and `--refuse-approximate`
 * turns an answer that holds any into exit status 6. Pure.
 *
 * Where one is raised: the chain of calls (a cost read from the response, prove/request-chain.ts),
 * identity rules whose request's token is not known (prove/identity-claims.ts). A part of the model
 * that approximates something new adds it to its plan's `approximations` (RequestPlan in
 * simulate.ts, or chainOf's result for what a call costs).
 */

/** One thing the model assumed for a decision. */
export interface Approximation {
    /** The rule it affects (absent: the whole decision, e.g. the gateway it was modelled on). */
    rule?: string;
    /** What was assumed, and how to give the model what it needs instead. */
    what: string;
}

/** One approximation over many decisions: how many it affected, and the first. */
export interface ApproximationCount extends Approximation {
    /** Decisions it affected. */
    requests: number;
    /** The first: a request's number (explain) or a log's line (replay). */
    first: number;
}

/** The text of an approximation. */
export function approximationText(a: Approximation): string {
    return a.rule !== undefined ? `rule ${a.rule}: ${a.what}` : a.what;
}

/** Approximations counted over decisions added one at a time. */
export class ApproximationTally {
    private readonly counts = new Map<string, ApproximationCount>();

    add(list: readonly Approximation[], at: number): void {
        for (const a of list) {
            const key = approximationText(a);
            const c = this.counts.get(key);
            if (c) {
                c.requests++;
                if (at < c.first) c.first = at;
            } else this.counts.set(key, { ...a, requests: 1, first: at });
        }
    }

    /** Every approximation, the most frequent first. */
    result(): ApproximationCount[] {
        return [...this.counts.values()].sort((a, b) => b.requests - a.requests || a.first - b.first);
    }

    /** The approximations touching `rule`. */
    static ofRule(all: ApproximationCount[], rule: string): string[] {
        return all.filter((a) => a.rule === rule).map((a) => a.what);
    }
}

/** No approximation (shared: most decisions have none). */
export const EXACT: readonly Approximation[] = Object.freeze([]);
