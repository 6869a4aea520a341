/**
 * The istio tier's cost check: what Istio's generator (xdscheck) made of a GlobalRateLimit with rule
 * costs (tests/istio/render-cost.ts). Reads the dumped route configuration `http.80` and prints one
 * `ok`/`FAIL` line per check: each cost rule's entries in the virtual host's `RateLimitPerRoute`
 * carry Envoy's `hits_addend` (and `apply_on_stream_done` for the response cost) as the package
 * wrote them. With `--control` (the render without costs) the entries must carry none.
 *
 *   npx tsx tests/istio/cost-check.ts <routes.json> [--control]
 */
import * as fs from "fs";

const [file, mode] = process.argv.slice(2);
const dump = JSON.parse(fs.readFileSync(file!, "utf8"));
const vhosts: any[] = dump.routeConfiguration?.virtualHosts ?? [];
const vh = vhosts.find((v) => v.name === "*:80");
const perFilter = vh?.typedPerFilterConfig ?? {};
const name = Object.keys(perFilter).find((k) => k.startsWith("envoy.filters.http.ratelimit/"));
const entries: any[] = name ? (perFilter[name].rateLimits ?? []) : [];
const ruleOf = (e: any) => e.actions?.[0]?.headerValueMatch?.descriptorValue ?? e.actions?.[0]?.genericKey?.descriptorValue;
const of = (rule: string) => entries.filter((e) => ruleOf(e) === rule);
const checks: [string, boolean, string][] = [];
const check = (id: string, cond: boolean, detail: unknown) => checks.push([id, cond, JSON.stringify(detail)]);

check("cost: the instance's RateLimitPerRoute is on the virtual host", name !== undefined && entries.length > 0, Object.keys(perFilter));
if (mode === "--control") {
    check(
        "cost control: without costs no entry has hits_addend or apply_on_stream_done",
        entries.every((e) => e.hitsAddend === undefined && !e.applyOnStreamDone),
        entries,
    );
    check(
        "cost control: one entry per rule",
        ["bulk", "search-cost", "llm-tokens"].every((r) => of(r).length === 1),
        entries.map(ruleOf),
    );
} else {
    check("cost fixed: hits_addend.number 40", of("bulk").length === 1 && String(of("bulk")[0].hitsAddend?.number) === "40", of("bulk"));
    const search = of("search-cost");
    check(
        "cost request header: %REQ(x-cost)% when valid, number 1 otherwise",
        search.length === 2 && search[0].hitsAddend?.format === "%REQ(x-cost)%" && String(search[1].hitsAddend?.number) === "1",
        search,
    );
    const llm = of("llm-tokens");
    check(
        "cost response header: checked with 0, then apply_on_stream_done with the dynamic metadata format",
        llm.length === 2 &&
            String(llm[0].hitsAddend?.number) === "0" &&
            !llm[0].applyOnStreamDone &&
            llm[1].applyOnStreamDone === true &&
            llm[1].hitsAddend?.format === "%DYNAMIC_METADATA(mesh-ratelimit.response-cost:x-tokens-used)%",
        llm,
    );
}
for (const [id, ok, detail] of checks) console.log(ok ? `ok   ${id}` : `FAIL ${id}: ${detail}`);
