/**
 * Renders "many teams, one gateway" (issue 26) for the istio tier's generator check
 * (tests/istio/xdscheck/many_teams_test.go): two teams, each its own program (its own Pulumi mock
 * run, nothing shared between the two, so no in-program refusal can see the other), each with its
 * own Gateway and VirtualService on the shared ingress gateway (istio=ingressgateway, port 8080)
 * and the package's GlobalRateLimit for its host:
 *
 *   team A: namespace team-a, domain a, host a.example.com (virtual host a.example.com:8080)
 *   team B: namespace team-b, domain b, host b.example.com (virtual host b.example.com:8080)
 *
 * once with the package's default layout (FilterLayout.PerInstance) and once with FilterLayout.Shared
 * (the old layout, the negative control). Writes <out>/<layout>/<team>/all.yaml, layout
 * per-instance|shared, team a|b. Team C's hand-written filter is written by the Go test.
 *
 *   npx tsx tests/istio/render-many-teams.ts <out dir>
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit } from "../../builders/rule-args";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";

const M = LimitUnit.Minute;
const GATEWAY_SELECTOR = { istio: "ingressgateway" };
const PORT = 8080;

/** The team's own objects: Gateway and VirtualService on the shared gateway, its web and checkout Services. */
function teamObjects(team: string): K8sObject[] {
    return hostObjects(`team-${team}`, `${team}.example.com`, team);
}

/** A host's own objects on the shared gateway, in `ns`: Gateway `<name>-gateway`, VirtualService `<name>` (routes checkout and web), its web and checkout Services. */
export function hostObjects(ns: string, host: string, name: string): K8sObject[] {
    const service = (name: string): K8sObject => ({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: ns },
        spec: { selector: { app: name }, ports: [{ name: "http", port: 80, targetPort: 8000 }] },
    });
    return [
        {
            apiVersion: "networking.istio.io/v1",
            kind: "Gateway",
            metadata: { name: `${name}-gateway`, namespace: ns },
            spec: { selector: GATEWAY_SELECTOR, servers: [{ port: { number: PORT, name: "http", protocol: "HTTP" }, hosts: [host] }] },
        },
        {
            apiVersion: "networking.istio.io/v1",
            kind: "VirtualService",
            metadata: { name, namespace: ns },
            spec: {
                hosts: [host],
                gateways: [`${ns}/${name}-gateway`],
                http: [
                    {
                        name: "checkout",
                        match: [{ uri: { prefix: "/checkout" } }],
                        route: [{ destination: { host: `checkout.${ns}.svc.cluster.local`, port: { number: 80 } } }],
                    },
                    { name: "web", route: [{ destination: { host: `web.${ns}.svc.cluster.local`, port: { number: 80 } } }] },
                ],
            },
        },
        service("web"),
        service("checkout"),
    ];
}

/** One team's program, rendered in its own mock run. */
export async function renderTeam(team: "a" | "b", layout: FilterLayout): Promise<K8sObject[]> {
    const ns = `team-${team}`;
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit(`${team}-limits`, {
                domain: team,
                gateway: { selector: GATEWAY_SELECTOR, namespace: "istio-system", virtualHosts: [`${team}.example.com:${PORT}`] },
                namespace: ns,
                filterLayout: layout,
                rules: [
                    { name: "everything", requestsPerUnit: 100, unit: M },
                    { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 5, unit: M },
                ],
            });
        },
        `team-${team}`,
        "istio",
    );
    return [...teamObjects(team), ...objects];
}

export const LAYOUTS: Record<string, FilterLayout> = { "per-instance": FilterLayout.PerInstance, shared: FilterLayout.Shared };

async function main(out: string): Promise<void> {
    for (const [dir, layout] of Object.entries(LAYOUTS)) {
        for (const team of ["a", "b"] as const) {
            const objs = await renderTeam(team, layout);
            const d = path.join(out, dir, team);
            fs.mkdirSync(d, { recursive: true });
            fs.writeFileSync(path.join(d, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
            console.log(`${objs.length} objects written to ${path.join(d, "all.yaml")}`);
        }
    }
}

if (require.main === module) {
    const out = process.argv[2];
    if (!out) {
        console.error("usage: tsx tests/istio/render-many-teams.ts <out dir>");
        process.exit(2);
    }
    main(out).catch((e) => {
        console.error(e);
        process.exit(1);
    });
}
