/**
 * The gateway MODEL checked against Istio's own generator: a table of request paths goes through
 * the model twice, once built from the rendered EnvoyFilters/VirtualService and once from the route
 * configuration Istio generated for the gateway (dumped by the xdscheck test, XDSCHECK_DUMP). Both
 * must pick the same route and send the same descriptors, with the same limits.
 *
 *   npx tsx tests/istio/model-agree.ts <render dir> <dump.json> <label>
 * Prints one `ok`/`FAIL` line per path and exits 1 on any disagreement.
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { gatewayModelFromEnvoy } from "../../gateway-model/read-envoy";
import { GatewayModel } from "../../gateway-model/model";
import { K8sObject } from "../../lib/k8s-object";
import {
    PreLimitConfigModel,
    PreLimitPod,
    matchingDescriptor,
    preLimitDescriptors,
    preLimitFromEnvoy,
    readPreLimit,
} from "../../gateway-model/pre-limit-model";

/** The paths: the limited path, each route, the api range edges, and what clients send to dodge limits. */
export function agreementPaths(): string[] {
    const out = ["/productpage", "/login", "/logout", "/static/app.css", "/static", "/", "/nope", "/productpage/", "//productpage"];
    for (let n = 0; n <= 100; n += n < 12 ? 1 : 11) out.push(`/api/v1/products/${n}`);
    out.push("/api/v1/products/99", "/api/v1/products/07", "/api/v1/products", "/api/v1/products/", "/api/v1/products/7/reviews", "/api/v1/productsx");
    const withQueries = out.flatMap((p) => [p, `${p}?x=1`, `${p}?`]);
    return [...withQueries, `/productpage?pad=${"q".repeat(3000)}`, "/static/../productpage?a", "/api/v1/products/%37", "/api/v1/products//7"];
}

function loadRender(dir: string): K8sObject[] {
    const files = [
        "all.yaml",
        ...(fs.existsSync(path.join(dir, "not-appliable")) ? fs.readdirSync(path.join(dir, "not-appliable")).map((f) => path.join("not-appliable", f)) : []),
    ];
    return files.flatMap((f) =>
        parseAllDocuments(fs.readFileSync(path.join(dir, f), "utf8"))
            .map((d) => d.toJSON())
            .filter((o) => o && o.kind),
    );
}

/**
 * The model of Istio's generated gateway: one per rate-limit filter on the generated listener (in
 * chain order), each reading the generated routes for its own stage and per-filter config; the
 * first carries the others (as the model from the render does). An older dump names one filter.
 */
function modelFromDump(dump: any, objects: K8sObject[]): GatewayModel {
    const filters: any[] = dump.rateLimitFilters?.length
        ? dump.rateLimitFilters
        : [{ domain: dump.domain, failureModeDeny: dump.failureModeDeny === true, stage: 0 }];
    const models = filters.map((f) =>
        gatewayModelFromEnvoy(
            dump.routeConfiguration,
            dump.virtualHost,
            {
                domain: f.domain,
                failureModeDeny: f.failureModeDeny === true,
                rateLimitHeaders: f.rateLimitHeaders === true,
                stage: Number(f.stage ?? 0),
                ...(f.cluster ? { cluster: f.cluster } : {}),
                ...(f.name ? { name: f.name } : {}),
            },
            objects,
        ),
    );
    const [first, ...others] = models;
    return others.length ? { ...first!, others } : first!;
}

/**
 * With the per-value counters in a store of their own (`--split`): on Istio's generated gateway,
 * the fixed limits' requests call the fixed service only and other paths the per-value service
 * only, one call per request, and two filters are on the listener.
 */
function splitCalls(label: string, m: GatewayModel, objects: K8sObject[]): number {
    const services = [m, ...(m.others ?? [])].map((x) => x.service ?? "");
    const fail = (what: string) => (console.log(`FAIL ${label} split calls: ${what}`), 1);
    if (services.length !== 2) return fail(`expected two rate-limit filters on the generated listener, found ${services.length}: ${services.join(", ")}`);
    const fixed = services.find((s) => !s.includes("-per-value."));
    const perValue = services.find((s) => s.includes("-per-value."));
    if (!fixed || !perValue) return fail(`expected a fixed and a per-value service, found ${services.join(", ")}`);
    const hasApi = objects.some((o) => o.kind === "EnvoyFilter" && o.metadata?.name === "filter-ratelimit-svc-api");
    const random = `/static/${Math.random().toString(36).slice(2)}`;
    const cases: [string, string][] = [
        ["/productpage", fixed],
        ["/productpage?x=1", fixed],
        [random, perValue],
        [`${random}?q`, perValue],
        ["/login", perValue],
        ...(hasApi
            ? ([
                  ["/api/v1/products/7", fixed],
                  ["/api/v1/products/99?a=b", fixed],
                  ["/api/v1/products/100", perValue],
              ] as [string, string][])
            : ([["/api/v1/products/7", perValue]] as [string, string][])),
    ];
    let bad = 0;
    for (const [p, want] of cases) {
        const calls = explainWith(m, p).calls.map((c) => c.service);
        if (calls.length !== 1 || calls[0] !== want) bad += fail(`${p}: calls ${JSON.stringify(calls)}, want exactly one, to ${want}`);
    }
    if (!bad)
        console.log(`ok   ${label} split calls: ${cases.length} requests on Istio's generated gateway, each one call, to ${fixed} or ${perValue} as expected`);
    return bad;
}

function main(): number {
    const args = process.argv.slice(2);
    const split = args.includes("--split");
    const [dir, dumpFile, label = ""] = args.filter((a) => a !== "--split");
    if (!dir || !dumpFile) {
        console.error("usage: tsx tests/istio/model-agree.ts <render dir> <dump.json> [label]");
        return 2;
    }
    const objects = loadRender(dir);
    const dump = JSON.parse(fs.readFileSync(dumpFile, "utf8"));
    const fromRender = gatewayModel(objects);
    const fromIstio = modelFromDump(dump, objects);
    let bad = 0;
    // Each descriptor with the service it goes to (the calling filter's cluster): with several
    // rate-limit filters on the listener, the two models must also agree on who is asked.
    const summary = (x: ReturnType<typeof explainWith>) =>
        JSON.stringify({
            route: x.route?.name ?? (x.route ? "(unnamed)" : "404"),
            descriptors: x.descriptors.map((d) => [d.entries, d.limit?.entry, d.limit?.requests, d.service ?? ""]),
            // What the client is told: each filter's X-RateLimit headers and the RateLimit-Policy values.
            headers: x.calls.map((c) => c.responseHeaders),
            policy: x.rateLimitPolicy ?? [],
        });
    if (fromRender.domain !== fromIstio.domain) {
        console.log(`FAIL ${label} model agreement: domain ${fromRender.domain} (rendered) vs ${fromIstio.domain} (generated)`);
        bad++;
    }
    const paths = agreementPaths();
    for (const p of paths) {
        const a = summary(explainWith(fromRender, p));
        const b = summary(explainWith(fromIstio, p));
        if (a !== b) {
            bad++;
            console.log(`FAIL ${label} model agreement ${p.slice(0, 80)}: rendered ${a} vs generated ${b}`);
        }
    }
    if (!bad)
        console.log(
            `ok   ${label} model agreement: ${paths.length} paths, the model from the render and from Istio's generated routes send the same descriptors`,
        );
    if (split) bad += splitCalls(label, fromIstio, objects);
    bad += preLimitAgreement(
        label,
        paths,
        fromRender,
        readPreLimit(objects, fromRender),
        fromIstio,
        preLimitFromEnvoy(dump.routeConfiguration, dump.virtualHost),
    );
    return bad ? 1 : 0;
}

/**
 * The pre-limit MODEL from the render and from the generated virtual host: the same buckets, the
 * same descriptors and bucket per path, and the same passes under a flood (10,000 requests in 10 s
 * on one modelled pod) of /productpage and /api/v1/products/7.
 */
function preLimitAgreement(label: string, paths: string[], mr: GatewayModel, r?: PreLimitConfigModel, mi?: GatewayModel, i?: PreLimitConfigModel): number {
    const fail = (what: string) => (console.log(`FAIL ${label} pre-limit model agreement: ${what}`), 1);
    if (!r || !i) return r || i ? fail(`rendered ${r ? "has" : "has no"} pre-limit, generated ${i ? "has" : "has no"} pre-limit config`) : 0;
    const shape = (c: PreLimitConfigModel) => JSON.stringify([c.vhMode, c.descriptors, c.defaultBucket, c.alwaysConsumeDefault, c.header, c.statPrefix]);
    if (shape(r) !== shape(i)) return fail(`config ${shape(r)} (rendered) vs ${shape(i)} (generated)`);
    let bad = 0;
    for (const p of paths) {
        const a = JSON.stringify(preLimitDescriptors(mr, r, p).map((d) => [d, !!matchingDescriptor(r, d)]));
        const b = JSON.stringify(preLimitDescriptors(mi!, i, p).map((d) => [d, !!matchingDescriptor(i, d)]));
        if (a !== b) bad += fail(`${p.slice(0, 80)}: rendered ${a} vs generated ${b}`);
    }
    const passes: string[] = [];
    for (const p of ["/productpage", "/api/v1/products/7"]) {
        const [pa, pb] = [new PreLimitPod(r, 0), new PreLimitPod(i, 0)];
        let [na, nb] = [0, 0];
        for (let k = 0; k < 10_000; k++) {
            if (pa.decide(preLimitDescriptors(mr, r, `${p}?n=${k}`), k / 1000).allowed) na++;
            if (pb.decide(preLimitDescriptors(mi!, i, `${p}?n=${k}`), k / 1000).allowed) nb++;
        }
        if (na !== nb) bad += fail(`flood of ${p}: ${na} pass (rendered) vs ${nb} (generated)`);
        passes.push(`${p} ${na} of 10,000`);
    }
    if (!bad)
        console.log(
            `ok   ${label} pre-limit model agreement: ${r.descriptors.length} bucket(s), ${paths.length} paths with the same descriptors and buckets; a flood passes ${passes.join(", ")} on both`,
        );
    return bad;
}

if (require.main === module) process.exit(main());
