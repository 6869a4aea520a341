/**
 * Renders "platform defaults with a team override" for the istio tier's generator check
 * (tests/istio/xdscheck/platform_test.go): two programs, each in its own Pulumi mock run, nothing
 * shared between them, on the shared ingress gateway (istio=ingressgateway, port 8080):
 *
 *   platform: PlatformRateLimit (namespace platform): defaults 1,000/min per client, 20,000/min in
 *             all and a catch-all per path, overrides 10,000/min per client and 50,000/min in all
 *             (the fixed ones get a pre-limit: xdscheck/platform_prelimit_test.go)
 *   team A:   namespace team-a, host a.example.com, its GlobalRateLimit (the default layout and
 *             platformDefaults), its Gateway, VirtualService and Services
 *   other:    host other.example.com (namespace other), a Gateway and VirtualService, no limits of its own
 *   team C:   host c.example.com on port 8443 of the same pods (namespace team-c), its own Gateway and
 *             VirtualService: the overrides must reach it (listenerPorts [8080] places the defaults only)
 *
 * Writes <out>/platform/all.yaml, <out>/team/all.yaml, and <out>/model.json: what the listener MODEL
 * (gateway-model/listener.ts) read from these renders says each rate-limit filter reads on each
 * route, with both stacks and with the team's alone (the Go test compares the generated routes).
 *
 *   npx tsx tests/istio/render-platform.ts <out dir>
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { LimitUnit } from "../../builders/rule-args";
import { ListenerLayout, listenerCalls, listenerModel } from "../../gateway-model/listener";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";
import { hostObjects } from "./render-many-teams";

const M = LimitUnit.Minute;
const GATEWAY_SELECTOR = { istio: "ingressgateway" };
const PORT = 8080;

export async function renderPlatform(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new PlatformRateLimit("platform", {
                gateway: { selector: GATEWAY_SELECTOR, namespace: "istio-system", listenerPorts: [PORT] },
                namespace: "platform",
                defaults: {
                    rules: [
                        { name: "per-client", perClientAddress: true, requestsPerUnit: 1000, unit: M },
                        { name: "all", requestsPerUnit: 20000, unit: M },
                    ],
                    perPath: { eachPath: { requestsPerUnit: 600, unit: M } },
                },
                overrides: {
                    rules: [
                        { name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 10000, unit: M },
                        { name: "ceiling", requestsPerUnit: 50000, unit: M },
                    ],
                },
            });
        },
        "platform",
        "istio",
    );
    return [...hostObjects("other", "other.example.com", "other"), ...teamGatewayOn(TEAM_PORT), ...objects];
}

/** Another team's port on the same pods (xdscheck/platform_ports_test.go): team-c's own Gateway and VirtualService for c.example.com on 8443. */
const TEAM_PORT = 8443;
function teamGatewayOn(port: number): K8sObject[] {
    return hostObjects("team-c", "c.example.com", "team-c").map((o) =>
        o.kind === "Gateway" ? { ...o, spec: { ...o.spec, servers: o.spec.servers.map((sv: any) => ({ ...sv, port: { ...sv.port, number: port } })) } } : o,
    );
}

export async function renderTeam(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("a-limits", {
                domain: "a",
                gateway: { selector: GATEWAY_SELECTOR, namespace: "istio-system", virtualHosts: [`a.example.com:${PORT}`] },
                namespace: "team-a",
                rules: [
                    { name: "everything", requestsPerUnit: 100, unit: M },
                    { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 5, unit: M },
                ],
            });
        },
        "team-a",
        "istio",
    );
    return [...hostObjects("team-a", "a.example.com", "team-a"), ...objects];
}

/**
 * Team A as the rogue team (xdscheck/platform_ports_test.go TestPlatformRogueSwitch): one rule
 * that matches nothing, and `allVirtualHosts: true` (no switch of the defaults on any host), or, the
 * control, other.example.com in its virtualHosts (the switch there, which its preview refuses when
 * it can read the cluster; under mocks nothing is read).
 */
export async function renderRogueTeam(listed: boolean): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("a-limits", {
                domain: "a",
                gateway: listed
                    ? { selector: GATEWAY_SELECTOR, namespace: "istio-system", virtualHosts: [`a.example.com:${PORT}`, `other.example.com:${PORT}`] }
                    : { selector: GATEWAY_SELECTOR, namespace: "istio-system", allVirtualHosts: true },
                namespace: "team-a",
                rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: M }],
            });
        },
        "team-a",
        listed ? "rogue-listed" : "rogue-all",
    );
    return [...hostObjects("team-a", "a.example.com", "team-a"), ...objects];
}

/**
 * The control of xdscheck/platform_prelimit_test.go: the platform's render with each pre-limit
 * anchored on the other source's platform filter, so neither sits directly before its own.
 */
export function misplacedPreLimits(objects: K8sObject[]): K8sObject[] {
    const other: Record<string, string> = {
        "envoy.filters.http.local_ratelimit.platform-overrides": "envoy.filters.http.ratelimit.platform-defaults",
        "envoy.filters.http.local_ratelimit.platform-defaults": "envoy.filters.http.ratelimit.platform-overrides",
    };
    const copy: K8sObject[] = JSON.parse(JSON.stringify(objects));
    for (const o of copy)
        for (const p of o.kind === "EnvoyFilter" ? (o.spec?.configPatches ?? []) : []) {
            const anchor = other[p.patch?.value?.name];
            if (p.applyTo === "HTTP_FILTER" && anchor) p.match.listener.filterChain.filter.subFilter.name = anchor;
        }
    return copy;
}

export const LAYOUT: ListenerLayout = {
    port: PORT,
    podLabels: { istio: "ingressgateway", app: "istio-ingressgateway" },
    namespace: "istio-system",
    virtualHosts: [
        { name: `a.example.com:${PORT}`, routes: ["checkout", "web"] },
        { name: `other.example.com:${PORT}`, routes: ["checkout", "web"] },
    ],
};

/** What the model says each rate-limit filter reads, per `<virtual host>|<route>|<filter name>`: its rate_limits entries. */
export function modelReads(objects: K8sObject[]): Record<string, unknown[]> {
    const m = listenerModel(objects, LAYOUT);
    const out: Record<string, unknown[]> = {};
    for (const vh of LAYOUT.virtualHosts)
        for (const route of vh.routes)
            for (const c of listenerCalls(m, { virtualHost: vh.name, route, path: "/x" }))
                if (c.entries.length) out[`${vh.name}|${route}|${c.filter.name}`] = c.entries;
    return out;
}

async function main(out: string): Promise<void> {
    const platform = await renderPlatform();
    const team = await renderTeam();
    const write = (dir: string, objs: K8sObject[]) => {
        fs.mkdirSync(path.join(out, dir), { recursive: true });
        fs.writeFileSync(path.join(out, dir, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
        console.log(`${objs.length} objects written to ${path.join(out, dir, "all.yaml")}`);
    };
    write("platform", platform);
    write("team", team);
    write("team-all", await renderRogueTeam(false));
    write("team-listed", await renderRogueTeam(true));
    write("platform-misplaced", misplacedPreLimits(platform));
    const model = { both: modelReads([...platform, ...team]), teamOnly: modelReads(team) };
    fs.writeFileSync(path.join(out, "model.json"), JSON.stringify(model, null, 2));
}

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-platform.ts <out dir>");
        process.exit(2);
    }
    main(out).catch((e) => {
        console.error(e);
        process.exit(1);
    });
}
