/**
 * The gateway MODEL of a `rate_limits` entry's cost, as Envoy computes it (Envoy 1.38,
 * source/extensions/filters/common/ratelimit_config/ratelimit_config.cc): `hits_addend.number` as
 * it is; `hits_addend.format` evaluated for the request (its text read as a number, negative or
 * above 10^9 drops the descriptor, a fraction is cut to a whole number); an entry with
 * `apply_on_stream_done` is sent only when the response is done, in a call of its own.
 */
import { field } from "../builders/rendered-config";

/** Envoy's largest `hits_addend`. */
const MAX_HITS_ADDEND = 1_000_000_000;

/** What an entry's cost is for one request. */
export type EntryCost =
    /** No `hits_addend`: the service counts the request-level addend (1 from Envoy). */
    | { kind: "none" }
    /** Sent with this per-descriptor addend. */
    | { kind: "known"; hitsAddend: number }
    /** The format yields no number for this request: Envoy drops the descriptor (nothing sent for the entry). */
    | { kind: "dropped" }
    /** Sent when the response is done, from a response value: not known before. */
    | { kind: "after-response"; format: string };

/** Envoy's reading of a formatted value as a number (absl::SimpleAtod, then the range check), or undefined. */
export function addendOfText(text: string | undefined): number | undefined {
    if (text === undefined) return undefined;
    const t = text.trim();
    // SimpleAtod takes a decimal or exponent form, with optional sign; "inf"/"nan" fail the range check.
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return undefined;
    const n = Number(t);
    return n >= 0 && n <= MAX_HITS_ADDEND ? Math.trunc(n) : undefined;
}

/** The cost of entry `rl` for a request whose header values (first of each) are `firstHeaders`. */
export function entryCost(rl: unknown, firstHeaders: Record<string, string>): EntryCost {
    const h = field(rl, "hits_addend");
    if (field(rl, "apply_on_stream_done") === true) return { kind: "after-response", format: String(h?.format ?? "") };
    if (h === undefined) return { kind: "none" };
    if (h.number !== undefined) return { kind: "known", hitsAddend: Number(h.number) };
    const req = /^%REQ\(([^)]+)\)%$/.exec(String(h.format ?? ""));
    const n = req ? addendOfText(firstHeaders[req[1]!.toLowerCase()]) : undefined;
    return n === undefined ? { kind: "dropped" } : { kind: "known", hitsAddend: n };
}
