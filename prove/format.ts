/**
 * The text `mesh-ratelimit explain` and `replay` print. Pure.
 */
import { CHANGED_KEPT, ProgramExplanation, ProgramReplay } from "./api";
import { BAD_LINES_KEPT } from "./log-table";
import { ReplayResult, verdictOf } from "./replay";
import { Decision } from "./simulate";
import { DEFAULT_PATH_NORMALIZATION } from "../gateway-model/model";
import { EVERY_SPELLING_TEXT } from "../builders/path-spellings";
import { ApproximationCount, approximationText } from "./approximations";

/** How headers are spelt on the wire in the output (names are case-insensitive in HTTP). */
const SPELLING: Record<string, string> = {
    "x-ratelimit-limit": "X-RateLimit-Limit",
    "x-ratelimit-remaining": "X-RateLimit-Remaining",
    "x-ratelimit-reset": "X-RateLimit-Reset",
    "ratelimit-policy": "RateLimit-Policy",
    "retry-after": "Retry-After",
};

function refusal(d: Decision): string {
    const b = d.refusedBy!;
    if (b.by === "pre-limit") return `REFUSED by the gateway's pre-limit (EnvoyFilter ${b.envoyFilter})`;
    if (b.by === "token check")
        return `REFUSED by the gateway's JWT filter: 401 ${b.reason}${b.requestAuthentication ? ` (RequestAuthentication ${b.requestAuthentication})` : ""}`;
    if (b.by === "local bucket") return `REFUSED by the local bucket of the workload (EnvoyFilter ${b.envoyFilter})`;
    const whose = b.source ? `, the ${b.source === "team" ? "team's own limits" : `${b.source} limits`}` : "";
    return `REFUSED by rule ${b.rule} at the rate-limit service (${b.limit.requests} per ${b.limit.unit}${whose})`;
}

/** The lines of one decision. */
export function formatDecision(d: Decision, n: number, standIns: ReadonlySet<string> = new Set()): string {
    const r = d.request;
    const out = [`#${n} ${r.method ?? "GET"} ${r.path}${r.host ? ` (host ${r.host})` : ""}${r.clientAddress ? ` from ${r.clientAddress}` : ""}`];
    for (const [k, v] of Object.entries(r.headers ?? {}))
        out.push(`  header ${k}: ${Array.isArray(v) ? v.join(" | ") : v}${Array.isArray(v) && v.length > 1 ? ` (sent ${v.length} times)` : ""}`);
    if (r.claims)
        out.push(
            `  verified token: ${Object.entries(r.claims)
                .map(([k, v]) => `${k}=${v}`)
                .join(", ")}${r.claims.iss === undefined ? " (iss: the program's issuer)" : ""}`,
        );
    out.push(`  decision: ${d.allowed ? "ALLOWED" : refusal(d)}${d.approximations.length ? " (APPROXIMATE: see below)" : ""}`);
    if (d.gateway) out.push(`  gateway: ${d.gateway}, virtual host ${d.virtualHost}${d.route ? `, route ${d.route}` : ""}`);
    if (!d.descriptors.length && d.gateway && d.route)
        out.push(
            standIns.has(d.gateway)
                ? "  descriptors: none (no rule applies to this request; nothing is counted). The program does not declare this gateway's VirtualService, so a rule on a named route can never match here: declare the VirtualService in the program to model such rules"
                : "  descriptors: none (no rule applies to this request; nothing is counted)",
        );
    for (const c of d.descriptors) {
        const entries = c.entries.map((e) => `${e.key}=${e.value}`).join(", ");
        const limit = c.limit
            ? c.limit.unlimited
                ? "unlimited"
                : `${c.limit.requests} per ${c.limit.unit}${c.limit.shadow ? " (shadow)" : ""}`
            : "no limit in the service's config";
        const cost = c.cost !== undefined ? `; this request costs ${c.cost}` : "";
        const counted = c.counter ? `${cost}; counter ${c.counter} = ${c.count}${c.over ? " (over)" : `, ${c.remaining} left`}` : "";
        out.push(`  descriptor ${entries} -> rule ${c.rule}: ${limit}${counted}`);
    }
    const status = d.response.status === "upstream" ? "the workload's own (the gateway passes the request on)" : String(d.response.status);
    out.push(`  response: status ${status}`);
    const names = Object.keys(d.response.headers);
    for (const k of names) out.push(`    ${SPELLING[k] ?? k}: ${d.response.headers[k]}`);
    if (!names.some((k) => k === "retry-after") && d.response.status === 429)
        out.push(
            names.includes("x-ratelimit-reset")
                ? "    (no Retry-After: Envoy's rate-limit filter sends none; X-RateLimit-Reset gives the seconds to wait)"
                : "    (no Retry-After and no X-RateLimit-Reset: the filter that refused sends neither, so the client is not told when to retry)",
        );
    if (d.response.status === 429) out.push(`    body: ${d.response.body ? JSON.stringify(d.response.body) : "(empty)"}`);
    for (const note of d.notes) out.push(`  note: ${note}`);
    for (const a of d.approximations) out.push(`  not modelled: ${approximationText(a)}`);
    return out.join("\n");
}

/** What explain assumes of paths: the mesh's normalization (the program does not say it), and what a path rule's matcher takes. */
export const PATHS_LINE =
    `Paths: normalized as Istio's pathNormalization ${DEFAULT_PATH_NORMALIZATION} does (assumed: the program does not say the mesh's setting); ` +
    `an exact or prefix path rule counts ${EVERY_SPELLING_TEXT}, unless its spellings is exact`;

/** How many decisions explain prints without --detail. */
export const DECISIONS_SHOWN = 20;

/** Per rule (or pre-limit / local bucket): the requests it counted, those it refused and the first refused. */
function explainSummary(x: ProgramExplanation): string[] {
    const rules = new Map<string, { counted: number; refused: number; first?: number }>();
    const of = (name: string) => rules.get(name) ?? rules.set(name, { counted: 0, refused: 0 }).get(name)!;
    x.decisions.forEach((d, i) => {
        const v = verdictOf(d);
        for (const r of v.counted) of(r).counted++;
        if (!v.refusedBy) return;
        const r = of(v.refusedBy);
        if (!v.counted.includes(v.refusedBy)) r.counted++;
        r.refused++;
        r.first ??= i + 1;
    });
    const refused = x.decisions.filter((d) => !d.allowed).length;
    const out = [`Summary: ${x.decisions.length} requests, ${refused} refused`];
    if (!rules.size) out.push("  no rule counted any request");
    for (const [name, r] of rules)
        out.push(`  rule ${name}: ${r.counted} requests, ${r.refused} refused${r.first !== undefined ? `, first refused: request #${r.first}` : ""}`);
    return out;
}

/** Where a local bucket sits: the sidecars of its pods, or the waypoint serving one Service (one bucket per waypoint pod). */
function bucketPlace(b: ProgramExplanation["localBuckets"][number]): string {
    return b.waypoint
        ? `on waypoint ${b.waypoint.name} for Service ${b.namespace}/${b.waypoint.service} (per waypoint pod)`
        : `on pods ${JSON.stringify(b.selector)}`;
}

/** The whole explain output: the program's gateways and buckets, the summary, then each decision (the first DECISIONS_SHOWN without `detail`). */
export function formatExplanation(x: ProgramExplanation, detail = true): string {
    const out = [`Model of the program ${x.main} (no Envoy runs here; docs/explain-and-replay.md says what is modelled)`];
    if (!x.gateways.length) out.push("No gateway: the program holds no rate-limit filter on a gateway.");
    for (const g of x.gateways)
        out.push(`Gateway: ${g.name}, hosts ${g.hosts.join(", ")}${g.standIn ? " (its routes are not in the program: one catch-all route modelled)" : ""}`);
    if (x.gateways.length) out.push(PATHS_LINE);
    for (const b of x.localBuckets)
        out.push(
            `Local bucket: EnvoyFilter ${b.envoyFilter} ${bucketPlace(b)} port ${b.port}: ${b.maxTokens} tokens, ${b.tokensPerFill} per ${b.fillSeconds} s`,
        );
    if (x.nothingModelled) out.push(`NOTHING MODELLED: ${x.nothingModelled}`);
    out.push(...explainSummary(x), ...approximationLines(x.approximations, "request #"), "");
    const shown = detail ? x.decisions : x.decisions.slice(0, DECISIONS_SHOWN);
    const standIns = new Set(x.gateways.filter((g) => g.standIn).map((g) => g.name));
    shown.forEach((d, i) => out.push(formatDecision(d, i + 1, standIns), ""));
    if (shown.length < x.decisions.length) out.push(`... ${x.decisions.length - shown.length} more requests: --detail prints every one, --json gives them all`);
    return out.join("\n");
}

/** The summary's list of approximations (none: the answer is exact as far as the model goes). */
function approximationLines(all: ApproximationCount[], at: string): string[] {
    if (!all.length) return [];
    return [
        `not modelled (${all.length}; --refuse-approximate makes this exit status 6):`,
        ...all.map((a) => `    ${a.requests} ${a.requests === 1 ? "decision" : "decisions"} from ${at}${a.first}: ${approximationText(a)}`),
    ];
}

function summaryLines(r: ReplayResult): string[] {
    const out = [
        `${r.lines} lines: ${r.requests} requests replayed, ${r.badCount} bad lines (not replayed), ${r.blank} blank${r.outOfOrder ? `; ${r.outOfOrder} lines earlier than the one above them (replayed in time order)` : ""}`,
        `refused: ${r.refused} of ${r.requests} (${r.refusedPercent.toFixed(2)} %)`,
    ];
    if (r.nothingModelled) out.push(`NOTHING MODELLED: ${r.nothingModelled}`);
    if (!r.rules.length) out.push("no rule counted any request");
    for (const rule of r.rules) {
        out.push(
            `rule ${rule.rule}: ${rule.requests} requests, ${rule.refused} refused${rule.firstRefusedLine !== undefined ? `, first refused at line ${rule.firstRefusedLine}` : ""}`,
        );
        for (const a of rule.approximations ?? []) out.push(`    not modelled (its counts are approximate): ${a}`);
        for (const k of rule.topRefusedKeys) out.push(`    ${k.refused} refused: ${k.key}`);
        if (rule.firstRefusedText !== undefined) out.push(`    first refused line: ${rule.firstRefusedText}`);
    }
    out.push(...approximationLines(r.approximations, "line "));
    return out;
}

/** The whole replay output. */
export function formatReplay(r: ProgramReplay): string {
    const out = summaryLines(r);
    if (r.badCount) {
        out.push(`bad lines (${r.badCount}, not replayed):`);
        for (const b of r.bad.slice(0, 20)) out.push(`    line ${b.line}: ${b.reason}`);
        if (r.badCount > 20) out.push(`    ... and ${r.badCount - 20} more (--json lists the first ${BAD_LINES_KEPT})`);
    }
    if (r.compared && r.changed) {
        out.push("", "compared program:", ...summaryLines(r.compared).map((l) => `  ${l}`));
        out.push(`decisions that change: ${r.changedCount ?? r.changed.length}, of which ${r.newRefusals ?? 0} newly refused`);
        for (const c of r.changed.slice(0, 50))
            out.push(`    line ${c.line}: ${c.method} ${c.path}${c.clientAddress ? ` from ${c.clientAddress}` : ""}: ${c.before} -> ${c.after}`);
        const total = r.changedCount ?? r.changed.length;
        if (total > 50) out.push(`    ... and ${total - 50} more (--json lists the first ${CHANGED_KEPT})`);
    }
    return out.join("\n");
}
