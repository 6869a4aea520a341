/**
 * The domain and descriptor keys the gateway filters send (read from the rendered EnvoyFilters by
 * the gateway MODEL) are the ones the rendered config defines, as the REAL service loads it.
 * A mismatch would not fail anywhere: the service answers OK and limiting silently stops.
 */
import { expect } from "chai";
import { parse } from "yaml";
import { World } from "./harness/fixture";
import { gatewayModel } from "../../gateway-model/read-rendered";

/** Paths that exercise every route and every rate_limits element of the rendered filters. */
const PROBES = ["/productpage", "/login", "/logout", "/static/x.js", "/api/v1/products/7", "/api/v1/products/99"];

for (const variant of ["A", "B"] as const) {
    describe(`rls keys, variant ${variant}: what the filters send (model) is what the real service's config defines`, function () {
        let w: World;
        before(async () => {
            w = await World.start(variant);
        });
        after(async () => {
            await w?.stop();
        });
        beforeEach(() => w.redis.flushAll());

        it("the service runs with the rendered env: only addresses, ports, the secret and the root are rewritten", () => {
            const svc = w.services[0];
            const rendered = Object.fromEntries(w.rendered.env.map((e) => [e.name, e.value]));
            const allowed = new Set(["REDIS_URL", "REDIS_AUTH", "RUNTIME_ROOT", "HOST", "GRPC_HOST", "DEBUG_HOST", "PORT", "GRPC_PORT", "DEBUG_PORT"]);
            for (const [k, v] of Object.entries(svc.env)) {
                if (allowed.has(k)) continue;
                expect(v, k).to.equal(rendered[k]);
            }
            expect(
                Object.keys(svc.env).filter((k) => !(k in rendered) && !allowed.has(k)),
                "variables the stack does not render",
            ).to.deep.equal([]);
            expect(
                Object.keys(rendered).filter((k) => !(k in svc.env)),
                "rendered variables dropped",
            ).to.deep.equal([]);
            expect(svc.env.RUNTIME_ROOT.endsWith(String(rendered.RUNTIME_ROOT))).to.equal(true);
            expect(svc.env.REDIS_URL).to.equal(w.redis.address);
        });

        it("the filter's domain equals the domain of the config the service loaded", async () => {
            const m = gatewayModel(w.objects);
            const loaded = await w.services[0].rlconfig();
            const domains = new Set(
                loaded
                    .trim()
                    .split("\n")
                    .map((l) => l.split(".")[0]),
            );
            expect([...domains]).to.deep.equal([m.domain]);
        });

        it("the service loaded exactly the rendered descriptors (debug /rlconfig)", async () => {
            const cfg = parse(w.rendered.configYaml);
            const expected = cfg.descriptors
                .map(
                    (d: any) =>
                        `${cfg.domain}.${d.key}${d.value === undefined ? "" : `_${d.value}`}: unit=${String(d.rate_limit.unit).toUpperCase()} requests_per_unit=${d.rate_limit.requests_per_unit}`,
                )
                .sort();
            const loaded = (await w.services[0].rlconfig())
                .trim()
                .split("\n")
                .map((l) => l.replace(/, shadow_mode.*$/, ""))
                .sort();
            expect(loaded).to.deep.equal(expected);
        });

        it("every descriptor the filters produce meets a configured limit in the real service (none answered 'no limit')", async () => {
            let sent = 0;
            for (const p of PROBES) {
                const x = w.explain(p);
                for (const d of x.descriptors) {
                    if (d.entries.some((e) => e.key === "long_path" && e.value === "within-1024-bytes")) {
                        // The catch-all's long-path marker of a short path: by design no config node, so no counter.
                        expect(d.limit, p).to.equal(undefined);
                        const res = await w.sideOf(d.service ?? "").clients[0]!.shouldRateLimit(x.domain, [d.entries]);
                        expect([res.overallCode, res.statuses[0].currentLimit], p).to.deep.equal(["OK", undefined]);
                        continue;
                    }
                    expect(d.limit, `${p}: model finds no config entry for ${JSON.stringify(d.entries)}`).to.not.equal(undefined);
                    // To the service the model says the gateway calls for it (the per-value one for per-path counters).
                    const res = await w.sideOf(d.service ?? "").clients[0]!.shouldRateLimit(x.domain, [d.entries]);
                    sent++;
                    expect(res.statuses[0].currentLimit, `${p}: the real service has no limit for ${JSON.stringify(d.entries)}`).to.not.equal(undefined);
                    expect(res.statuses[0].currentLimit!.requestsPerUnit, p).to.equal(d.limit!.requests);
                    expect(res.statuses[0].currentLimit!.unit, p).to.equal(d.limit!.unit.toUpperCase());
                }
            }
            expect(sent).to.be.greaterThan(3);
        });

        it("every descriptor key of the filters' actions is a key of the config", () => {
            const m = gatewayModel(w.objects);
            const actionKeys = new Set<string>();
            for (const rl of [...m.vhostRateLimits.flatMap((r) => r.rateLimits), ...m.routes.flatMap((r) => r.rateLimits)]) {
                for (const a of rl.actions) {
                    const k = a.request_headers?.descriptor_key ?? a.header_value_match?.descriptor_key ?? a.extension?.typed_config?.descriptor_key;
                    expect(k, `action ${JSON.stringify(a)} has a descriptor key`).to.be.a("string");
                    actionKeys.add(k);
                }
            }
            const configKeys = new Set(m.config.descriptors.map((d: any) => d.key));
            expect(
                [...actionKeys].every((k) => configKeys.has(k)),
                `actions send ${[...actionKeys]}, config has ${[...configKeys]}`,
            ).to.equal(true);
            if (variant === "A") {
                const api = m.routes.flatMap((r) => r.rateLimits)[0].actions[0].header_value_match.descriptor_value;
                expect(
                    m.config.descriptors.some((d: any) => d.key === "PATH" && d.value === api),
                    `descriptor_value ${api} has no config entry`,
                ).to.equal(true);
            }
        });

        it("negative control: a domain the config does not define is answered OK forever (why the check above matters)", async () => {
            const c = w.clients[0];
            for (let i = 0; i < 5; i++) {
                const d = await c.shouldRateLimit(`${gatewayModel(w.objects).domain}-typo`, [[{ key: "PATH", value: "/productpage" }]]);
                expect(d.overallCode).to.equal("OK");
                expect(d.statuses[0].currentLimit).to.equal(undefined);
            }
            for (let i = 0; i < 3; i++) {
                const d = await c.shouldRateLimit(gatewayModel(w.objects).domain, [[{ key: "path", value: "/productpage" }]]);
                expect(d.overallCode, "descriptor keys are case-sensitive").to.equal("OK");
            }
        });
    });
}
