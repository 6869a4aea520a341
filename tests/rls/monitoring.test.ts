/**
 * The dashboard and the alert rules the stack renders, on a REAL Prometheus (v0.316.0 from the Go
 * module proxy) scraping the REAL rate-limit service of two teams' stacks (and a shadow-mode one),
 * each with its own Redis, while this test sends traffic within and over the limits, stops Redis,
 * breaks a config update and stops a service. Every panel query and every alert expression comes
 * from the rendered ConfigMap and PrometheusRule (`monitoringAlerts=true`), not from the builder.
 *
 * What the test changes, and why (each only speeds the run up; names and expressions are untouched):
 * - the service's `STATS_FLUSH_INTERVAL` is 1 s instead of its default 10 s;
 * - the dashboard's `$__rate_interval` (Grafana's) is replaced by 20 s;
 * - in the rules Prometheus evaluates, every `for:` is 0 s and MeshRateLimitRedisErrors' 2 m window is
 *   15 s (its `[2m]` and `offset 2m`), so an alert fires and resolves within the test; the SHIPPED rules, with their production
 *   `for:` durations, are checked separately with `promtool check rules`.
 *
 * Envoy's stats: no Envoy runs here. A MODEL of the gateway's and the sidecar's Prometheus
 * endpoint (a loopback HTTP server below) serves counters under the names Envoy documents
 * (`cluster.<route target cluster>.ratelimit.*`, `<stat_prefix>.http_local_rate_limit.*`) in
 * Envoy's Prometheus form, written here by hand, not taken from the builder: the gateway queries are
 * checked against that model only.
 *
 * MESH_RL_RECORD_DASHBOARD=<file> writes every panel's series (query_range over the run) to a JSON
 * file for the picture in docs/monitoring.md (scripts/render-dashboard-png.sh).
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as http from "http";
import { stringify } from "yaml";
import { World } from "./harness/fixture";
import { ensureWindow } from "./harness/window";
import { sleep, waitFor, freePort } from "./harness/ports";
import { PrometheusServer, prometheusMissing, promtoolCheckRules } from "./harness/prometheus";
import { missingTools } from "./harness/tools";
import { renderVariant } from "./harness/stack";

/** One store for every counter (counterStore single, the specification's layout): this file is about one service and its Redis, not the split. */
const ONE_STORE = { counterStore: "single" };

const RATE_WINDOW = "20s";
const FLUSH = { STATS_FLUSH_INTERVAL: "1s" };

interface Team {
    name: string;
    world: World;
    dashboard: any;
    groups: any[];
    namespace: string;
}

function renderedMonitoring(world: World): { dashboard: any; groups: any[] } {
    const cm = world.objects.find((o: any) => o.kind === "ConfigMap" && o.metadata.labels?.grafana_dashboard === "1") as any;
    const rule = world.objects.find((o: any) => o.kind === "PrometheusRule") as any;
    if (!cm || !rule)
        throw new Error(`the render has no dashboard ConfigMap or PrometheusRule: ${world.objects.map((o: any) => `${o.kind}/${o.metadata.name}`).join(", ")}`);
    return { dashboard: JSON.parse(Object.values(cm.data as Record<string, string>)[0]!), groups: rule.spec.groups };
}

/** The rules as Prometheus evaluates them in this test (see the header): `for: 0s`, the Redis window 15 s. */
function testRules(groups: any[]): any[] {
    return groups.map((g) => ({
        ...g,
        rules: g.rules.map((r: any) => ({ ...r, for: "0s", expr: r.alert === "MeshRateLimitRedisErrors" ? r.expr.replaceAll("2m", "15s") : r.expr })),
    }));
}

const panelExprs = (dashboard: any, title: RegExp): string[] =>
    dashboard.panels
        .filter((p: any) => title.test(p.title))
        .flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr.replaceAll("$__rate_interval", RATE_WINDOW)));

/** The counter selector inside a panel's `rate(<selector>[window])`. */
const selectorOf = (expr: string): string => /rate\((.*)\[[^\]]+\]\)/.exec(expr)![1]!;

/** The model of Envoy's Prometheus endpoint: counters growing by `perSecond` since `t0`. */
function envoyModel(t0: number, series: [string, number][]): http.Server {
    return http.createServer((_req, res) => {
        const s = (Date.now() - t0) / 1000;
        const text = series.map(([name, perSecond]) => `${name} ${Math.floor(perSecond * s)}`).join("\n");
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
        res.end(`${text}\n`);
    });
}

describe("rls monitoring: the rendered dashboard and alerts on a real Prometheus scraping the real service", function () {
    this.timeout(300_000);
    const teams: Team[] = [];
    let shadow: World | undefined;
    let prom: PrometheusServer | undefined;
    let model: http.Server | undefined;
    let t0 = 0;
    const seen = { refused: 0, allowedPage: 0 };

    before(async function () {
        const missing = [...prometheusMissing(), ...missingTools()];
        if (missing.length) {
            const line = `SKIPPED: rls monitoring: not built: ${missing.join(", ")} (bash scripts/tools/build-prometheus.sh)`;
            console.log(line);
            if (process.env.CI === "true" || process.env.MESH_RL_REQUIRE_TOOLS === "1") throw new Error(line);
            this.skip();
        }
        t0 = Date.now();
        const common = { ratelimitPrometheus: "true", monitoringAlerts: "true" };
        for (const [name, ns] of [
            ["team-a", "default"],
            ["team-b", "team-b"],
        ] as const) {
            const world = await World.start("A", 1, { ...common, ...ONE_STORE, ratelimitNamespace: ns, workloadNamespace: ns }, FLUSH);
            teams.push({ name, world, namespace: ns, ...renderedMonitoring(world) });
        }
        shadow = await World.start("A", 1, { ...common, ...ONE_STORE, ratelimitNamespace: "shadow", workloadNamespace: "shadow", shadowMode: "true" }, FLUSH);
        const modelPort = await freePort();
        // Written from Envoy's documented stat names (model), in Envoy's Prometheus form under Istio.
        const cluster = (ns: string) => `outbound|9080||productpage.${ns}.svc.cluster.local`;
        model = envoyModel(t0, [
            [`envoy_cluster_ratelimit_ok{cluster_name="${cluster("default")}"}`, 5],
            [`envoy_cluster_ratelimit_over_limit{cluster_name="${cluster("default")}"}`, 2],
            [`envoy_cluster_ratelimit_error{cluster_name="${cluster("default")}"}`, 1],
            [`envoy_cluster_ratelimit_over_limit{cluster_name="${cluster("team-b")}"}`, 50],
            [`envoy_mesh_ratelimit_pre_limit_http_local_rate_limit_rate_limited`, 3],
            [`envoy_http_local_rate_limiter_http_local_rate_limit_rate_limited`, 4],
        ]);
        await new Promise<void>((r) => model!.listen(modelPort, "127.0.0.1", () => r()));
        const svc = (w: World, ns: string, pod: string) => ({
            job: "ratelimit",
            address: `127.0.0.1:${w.services[0]!.metricsPort}`,
            labels: { namespace: ns, app: "ratelimit", pod },
        });
        prom = await PrometheusServer.start(
            [
                svc(teams[0]!.world, "default", "ratelimit-a"),
                svc(teams[1]!.world, "team-b", "ratelimit-b"),
                svc(shadow, "shadow", "ratelimit-s"),
                { job: "gateway", address: `127.0.0.1:${modelPort}`, labels: { namespace: "istio-system", istio: "ingressgateway", pod: "gw-0" } },
                { job: "productpage", address: `127.0.0.1:${modelPort}`, labels: { namespace: "default", app: "productpage", pod: "productpage-0" } },
            ],
            [...testRules(teams[0]!.groups), ...testRules(teams[1]!.groups)],
        );
    });

    after(async () => {
        if (process.env.MESH_RL_RECORD_DASHBOARD && prom && teams[0]) {
            const out: any[] = [];
            for (const p of teams[0].dashboard.panels) {
                if (!p.targets) continue;
                const series = [];
                for (const t of p.targets) {
                    for (const s of await prom.queryRange(t.expr.replaceAll("$__rate_interval", RATE_WINDOW), t0, Date.now()))
                        series.push({ legend: t.legendFormat.replace(/\{\{(\w+)\}\}/g, (_m: string, k: string) => s.metric[k] ?? k), values: s.values });
                }
                out.push({ title: p.title, unit: p.fieldConfig?.defaults?.unit ?? "", series });
            }
            fs.writeFileSync(process.env.MESH_RL_RECORD_DASHBOARD, JSON.stringify({ t0: t0 / 1000, panels: out }));
        }
        await prom?.stop();
        model?.close();
        for (const t of teams) await t.world.stop();
        await shadow?.stop();
    });

    it("the shipped rule groups (production 'for:' durations) pass promtool check rules; the test's variant is loaded by Prometheus", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-rules-"));
        try {
            for (const t of teams) {
                const file = path.join(dir, `${t.name}.yaml`);
                fs.writeFileSync(file, stringify({ groups: t.groups }));
                const r = promtoolCheckRules(file);
                expect(r.ok, r.output).to.equal(true);
                expect(r.output).to.match(/SUCCESS: \d+ rules found/);
                for (const g of t.groups) for (const rule of g.rules) expect(rule.for).to.match(/^[1-9]\d*m$/);
            }
            // The default split layout's rule group too (its per-value store alert on its own service).
            const split = await renderVariant("A", { ratelimitPrometheus: "true", monitoringAlerts: "true" });
            const rule = split.find((o) => o.kind === "PrometheusRule")!;
            const names = rule.spec.groups.flatMap((g: any) => g.rules.map((r: any) => r.alert));
            expect(names).to.include("MeshRateLimitPerValueStoreFailing");
            const perValue = rule.spec.groups.flatMap((g: any) => g.rules).find((r: any) => r.alert === "MeshRateLimitPerValueStoreFailing");
            expect(perValue.expr).to.contain('app="ratelimit-per-value"').and.to.contain('err_type="redis_error"');
            const file = path.join(dir, "split.yaml");
            fs.writeFileSync(file, stringify({ groups: rule.spec.groups }));
            const r = promtoolCheckRules(file);
            expect(r.ok, r.output).to.equal(true);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
        // Prometheus applies its targets a few seconds after start; then every one is scraped.
        await waitFor("every target up", async () => (await prom!.targets()).filter((t) => t.health === "up").length === 5, 60_000, 500);
    });

    it("traffic within and over the limits: each limit's panel counts exactly what the service answered, per team", async () => {
        await ensureWindow(25);
        const a = teams[0]!.world;
        const codes: string[] = [];
        // Spread over several scrapes: a counter appears at its first count, and rate() never counts a
        // series' first value, so the panels' rates need the later requests (the totals count all).
        for (const n of [1, 1, 3]) {
            for (let i = 0; i < n; i++) codes.push((await a.send("/productpage"))!.statuses[0]!.code);
            await sleep(2_500);
        }
        expect(codes).to.deep.equal(["OK", "OVER_LIMIT", "OVER_LIMIT", "OVER_LIMIT", "OVER_LIMIT"]);
        seen.allowedPage = 1;
        seen.refused = 4;
        for (let i = 0; i < 3; i++) {
            expect((await a.send("/login"))!.overallCode).to.equal("OK");
            await sleep(1_200);
        }
        for (let i = 0; i < 7; i++) expect((await teams[1]!.world.send("/login"))!.overallCode).to.equal("OK");
        for (let i = 0; i < 3; i++) await shadow!.send("/productpage");

        const page = (t: Team, outcome: RegExp) => selectorOf(panelExprs(t.dashboard, /^PATH=\/productpage/).find((e) => outcome.test(e))!);
        const catchAll = (t: Team, outcome: RegExp) => selectorOf(panelExprs(t.dashboard, /^PATH \(each value\)/).find((e) => outcome.test(e))!);
        const total = async (sel: string) => (await prom!.query(`sum(${sel})`))[0]?.value ?? 0;
        await waitFor("the refusals in Prometheus", async () => (await total(page(teams[0]!, /over_limit/))) === seen.refused, 30_000, 500);
        expect(await total(page(teams[0]!, /within_limit/)), "allowed /productpage").to.equal(seen.allowedPage);
        await waitFor("the catch-all in Prometheus", async () => (await total(catchAll(teams[0]!, /within_limit/))) === 3, 30_000, 500);
        await waitFor("team B's catch-all", async () => (await total(catchAll(teams[1]!, /within_limit/))) === 7, 30_000, 500);
        // Team B saw no /productpage and no refusal; team A's catch-all is not team B's.
        expect(await total(page(teams[1]!, /over_limit/))).to.equal(0);
        expect(await total(catchAll(teams[0]!, /within_limit/))).to.equal(3);
        // The panels' own expressions (rate over the window) show the refusals now.
        const rateExpr = panelExprs(teams[0]!.dashboard, /^PATH=\/productpage/).find((e) => /over_limit/.test(e))!;
        await waitFor("the refused panel's rate", async () => ((await prom!.query(rateExpr))[0]?.value ?? 0) > 0, 20_000, 500);
        expect((await prom!.query(`sum(${page(teams[0]!, /near_limit/)})`))[0]?.value ?? 0, "near_limit of /productpage").to.be.at.least(1);
    });

    it("global shadow mode: the shadow world's let-through answers are counted by the dashboard's shadow panel (its selector, namespace shadow), not team A's", async () => {
        const sel = selectorOf(panelExprs(teams[0]!.dashboard, /^Shadow mode/)[0]!);
        expect(sel).to.contain('namespace="default"');
        const inShadow = sel.replace('namespace="default"', 'namespace="shadow"');
        await waitFor("global_shadow_mode in Prometheus", async () => ((await prom!.query(`sum(${inShadow})`))[0]?.value ?? 0) === 2, 30_000, 500);
        expect((await prom!.query(`sum(${sel})`))[0]?.value ?? 0).to.equal(0);
    });

    it("every panel query of both dashboards is valid PromQL on the real Prometheus; the service's panels have data, Envoy's match the model", async () => {
        for (const t of teams) {
            for (const e of panelExprs(t.dashboard, /./)) await prom!.query(e);
        }
        const d = teams[0]!.dashboard;
        const one = async (title: RegExp) => (await prom!.query(panelExprs(d, title)[0]!)).map((s) => s.value);
        // Whole milliseconds under a _seconds name (checked on the service: builders/monitoring.ts): p99 within the buckets (0 … 10 ms).
        const p99 = (await prom!.queryRange(panelExprs(d, /answer time/)[1]!, t0, Date.now()))
            .flatMap((s) => s.values.map((v) => v[1]))
            .filter(Number.isFinite);
        expect(p99.length, "p99 answer time has values").to.be.greaterThan(0);
        for (const v of p99) expect(v).to.be.within(0, 10);
        expect((await one(/Redis connections/))[0], "the pool's connections").to.be.greaterThan(0);
        expect(await one(/pods answering/)).to.deep.equal([1]);
        expect(await one(/Config loads/), "loaded once").to.deep.equal([1]);
        // No refused load yet: the service creates that counter at its first refusal.
        expect(await prom!.query(panelExprs(d, /Config loads/)[1]!)).to.deep.equal([]);
        // Envoy (model): team A's gateway panel counts its own cluster only (ok 5/s, over 2/s, error 1/s; team B's 50/s not).
        const gw = await Promise.all(panelExprs(d, /rate-limit filter/).map(async (e) => (await prom!.query(e))[0]?.value ?? NaN));
        // Rates as the model serves them (5 : 2 : 1 per second; scrapes on a loaded machine blur the absolute values),
        // and never team B's 50 per second.
        expect(gw[0]! > gw[1]! && gw[1]! > gw[2]! && gw[2]! > 0, `ok > over_limit > error > 0: ${gw}`).to.equal(true);
        expect(gw[0]).to.be.lessThan(10);
        const pre = (await one(/pre-limit/))[0]!;
        const local = (await one(/Local bucket/))[0]!;
        expect(pre > 0 && local > pre, `pre-limit 3/s, local 4/s: ${pre}, ${local}`).to.equal(true);
    });

    it("alerts: none of the failure alerts fire while all is well; MostlyRefused names /productpage only; the model's gateway errors fire for team A only", async () => {
        await waitFor(
            "MostlyRefused firing",
            async () => (await prom!.alerts()).some((a) => a.labels.alertname === "MeshRateLimitMostlyRefused" && a.state === "firing"),
            20_000,
            500,
        );
        const alerts = await prom!.alerts();
        const firing = alerts.filter((a) => a.state === "firing").map((a) => `${a.labels.alertname}/${a.labels.namespace}/${a.labels.limit ?? ""}`);
        expect(firing.sort()).to.deep.equal(["MeshRateLimitGatewayErrors/default/", "MeshRateLimitMostlyRefused/default/PATH=/productpage"]);
        const mostly = alerts.find((a) => a.labels.alertname === "MeshRateLimitMostlyRefused")!;
        expect(mostly.labels).to.include({ domain: "ratelimit", namespace: "default", mesh_ratelimit_instance: "ratelimit", severity: "info" });
    });

    it("Redis stopped: the Redis-errors alert fires for team A only, the errors panel shows redis_error, then it resolves when Redis is back", async () => {
        const a = teams[0]!.world;
        await a.redis.kill();
        // Spread over scrapes, as a gateway's calls would be (rate() needs the counter to rise after it appears).
        const errorCalls = async () => {
            for (let i = 0; i < 3; i++) {
                await a.clients[0]!.shouldRateLimit("ratelimit", [[{ key: "PATH", value: "/login" }]], { deadlineMs: 3_000 }).catch(() => undefined);
                await sleep(1_500);
            }
        };
        await errorCalls();
        await waitFor(
            "MeshRateLimitRedisErrors firing",
            async () => (await prom!.alerts()).some((x) => x.labels.alertname === "MeshRateLimitRedisErrors" && x.state === "firing"),
            30_000,
            500,
        );
        const redisAlerts = (await prom!.alerts()).filter((x) => x.labels.alertname === "MeshRateLimitRedisErrors");
        expect(redisAlerts.map((x) => x.labels.namespace)).to.deep.equal(["default"]);
        expect(redisAlerts[0]!.labels.severity).to.equal("critical");
        await errorCalls();
        const errsExpr = panelExprs(teams[0]!.dashboard, /Service errors/)[0]!;
        await waitFor(
            "redis_error on the errors panel",
            async () => (await prom!.query(errsExpr)).some((x) => x.metric.err_type === "redis_error" && x.value > 0),
            20_000,
            500,
        );
        expect((await prom!.query(panelExprs(teams[0]!.dashboard, /Redis connections/)[0]!))[0]?.value, "no Redis connection left").to.equal(0);
        await a.redis.resume();
        await waitFor("an OK answer again", async () => (await a.send("/logout").catch(() => undefined))?.overallCode === "OK", 30_000, 500);
        await waitFor(
            "MeshRateLimitRedisErrors resolved",
            async () => !(await prom!.alerts()).some((x) => x.labels.alertname === "MeshRateLimitRedisErrors"),
            60_000,
            1000,
        );
    });

    it("a refused config update fires ConfigNotLoaded (team A); a stopped service fires NoServicePod (team B only)", async () => {
        teams[0]!.world.services[0]!.updateConfig({
            "config.yaml": "domain: ratelimit\ndescriptors:\n  - key: PATH\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n",
        });
        await waitFor(
            "ConfigNotLoaded firing",
            async () => (await prom!.alerts()).some((x) => x.labels.alertname === "MeshRateLimitConfigNotLoaded" && x.state === "firing"),
            30_000,
            500,
        );
        await teams[1]!.world.services[0]!.stop();
        await waitFor(
            "NoServicePod firing",
            async () => (await prom!.alerts()).some((x) => x.labels.alertname === "MeshRateLimitNoServicePod" && x.state === "firing"),
            30_000,
            500,
        );
        const byName = (n: string) => (async () => (await prom!.alerts()).filter((x) => x.labels.alertname === n).map((x) => x.labels.namespace))();
        expect(await byName("MeshRateLimitNoServicePod")).to.deep.equal(["team-b"]);
        expect(await byName("MeshRateLimitConfigNotLoaded")).to.deep.equal(["default"]);
        await sleep(0);
    });
});
