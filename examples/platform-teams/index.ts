/**
 * A platform team's limits on a shared ingress gateway and a team that tries to switch them off
 * everywhere (what `mesh-ratelimit explain --program` reads; docs/using-the-package.md, "Whose hosts
 * a team's switch reaches"). Defaults: 2 a minute per client on every host no team covers; the
 * platform assigns b.example.com to namespace team-b. Override: 100 a minute per client on every
 * host and every listener. Team a: a rule that matches nothing and `allVirtualHosts: true`, which
 * switches the defaults off only on the hosts it lists (none here), so b.example.com keeps them.
 * It imports the package's entry by path here; a user's program imports it by name.
 */
import { GlobalRateLimit, LimitUnit, PlatformRateLimit } from "../../index";

const gateway = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };

export const platform = new PlatformRateLimit("platform", {
    // The defaults on listener 8080; the overrides go on every listener whatever this says.
    gateway: { ...gateway, listenerPorts: [8080] },
    namespace: "platform",
    teamHosts: { "team-b": ["b.example.com"] },
    defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 2, unit: LimitUnit.Minute }] },
    overrides: { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Minute }] },
    filters: { overrides: { failureModeDeny: true } },
});

export const teamA = new GlobalRateLimit("a-limits", {
    domain: "a",
    namespace: "team-a",
    gateway: { ...gateway, allVirtualHosts: true },
    rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
    awaitRollout: false,
});
