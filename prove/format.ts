/**
 * The text `mesh-ratelimit explain` and `replay` print. Pure.
 */
import { ProgramExplanation, ProgramReplay } from "./api";
import { ReplayResult } from "./replay";
import { Decision } from "./simulate";

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
    if (b.by === "local bucket") return `REFUSED by the local bucket of the workload (EnvoyFilter ${b.envoyFilter})`;
    const whose = b.source ? `, the ${b.source === "team" ? "team's own limits" : `${b.source} limits`}` : "";
    return `REFUSED by rule ${b.rule} at the rate-limit service (${b.limit.requestsPerUnit} per ${b.limit.unit}${whose})`;
}

/** The lines of one decision. */
export function formatDecision(d: Decision, n: number): string {
    const r = d.request;
    const out = [`#${n} ${r.method ?? "GET"} ${r.path}${r.host ? ` (host ${r.host})` : ""}${r.clientAddress ? ` from ${r.clientAddress}` : ""}`];
    out.push(`  decision: ${d.allowed ? "ALLOWED" : refusal(d)}`);
    if (d.gateway) out.push(`  gateway: ${d.gateway}, virtual host ${d.virtualHost}${d.route ? `, route ${d.route}` : ""}`);
    if (!d.descriptors.length && d.gateway && d.route) out.push("  descriptors: none (no rule applies to this request; nothing is counted)");
    for (const c of d.descriptors) {
        const entries = c.entries.map((e) => `${e.key}=${e.value}`).join(", ");
        const limit = c.limit
            ? c.limit.unlimited
                ? "unlimited"
                : `${c.limit.requestsPerUnit} per ${c.limit.unit}${c.limit.shadow ? " (shadow)" : ""}`
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
        out.push("    (no Retry-After: Envoy's rate-limit filter sends none; X-RateLimit-Reset gives the seconds to wait)");
    if (d.response.status === 429) out.push(`    body: ${d.response.body ? JSON.stringify(d.response.body) : "(empty)"}`);
    for (const note of d.notes) out.push(`  note: ${note}`);
    return out.join("\n");
}

/** The whole explain output. */
export function formatExplanation(x: ProgramExplanation): string {
    const out = [`Model of the program ${x.main} (no Envoy runs here; docs/explain-and-replay.md says what is modelled)`];
    if (!x.gateways.length) out.push("No gateway: the program holds no rate-limit filter on a gateway.");
    for (const g of x.gateways)
        out.push(`Gateway: ${g.name}, hosts ${g.hosts.join(", ")}${g.standIn ? " (its routes are not in the program: one catch-all route modelled)" : ""}`);
    for (const b of x.localBuckets)
        out.push(
            `Local bucket: EnvoyFilter ${b.envoyFilter} on pods ${JSON.stringify(b.selector)} port ${b.port}: ${b.maxTokens} tokens, ${b.tokensPerFill} per ${b.fillSeconds} s`,
        );
    out.push("");
    x.decisions.forEach((d, i) => out.push(formatDecision(d, i + 1), ""));
    return out.join("\n");
}

function summaryLines(r: ReplayResult): string[] {
    const out = [
        `${r.lines} lines: ${r.requests} requests replayed, ${r.bad.length} bad lines, ${r.blank} blank${r.outOfOrder ? `; ${r.outOfOrder} lines earlier than the one above them (replayed in time order)` : ""}`,
        `refused: ${r.refused} of ${r.requests} (${r.refusedPercent.toFixed(2)} %)`,
    ];
    if (!r.rules.length) out.push("no rule counted any request");
    for (const rule of r.rules) {
        out.push(
            `rule ${rule.rule}: ${rule.requests} requests, ${rule.refused} refused${rule.firstRefusedLine !== undefined ? `, first refused at line ${rule.firstRefusedLine}` : ""}`,
        );
        for (const k of rule.topRefusedKeys) out.push(`    ${k.refused} refused: ${k.key}`);
        if (rule.firstRefusedText !== undefined) out.push(`    first refused line: ${rule.firstRefusedText}`);
    }
    return out;
}

/** The whole replay output. */
export function formatReplay(r: ProgramReplay): string {
    const out = summaryLines(r);
    if (r.bad.length) {
        out.push(`bad lines (${r.bad.length}, not replayed):`);
        for (const b of r.bad.slice(0, 20)) out.push(`    line ${b.line}: ${b.reason}`);
        if (r.bad.length > 20) out.push(`    ... and ${r.bad.length - 20} more (--json lists them all)`);
    }
    if (r.compared && r.changed) {
        out.push("", "compared program:", ...summaryLines(r.compared).map((l) => `  ${l}`));
        out.push(`decisions that change: ${r.changed.length}`);
        for (const c of r.changed.slice(0, 50))
            out.push(`    line ${c.line}: ${c.method} ${c.path}${c.clientAddress ? ` from ${c.clientAddress}` : ""}: ${c.before} -> ${c.after}`);
        if (r.changed.length > 50) out.push(`    ... and ${r.changed.length - 50} more (--json lists them all)`);
    }
    return out.join("\n");
}
