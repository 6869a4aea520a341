/**
 * Least privilege: the rendered AuthorizationPolicies, NetworkPolicies and ServiceAccounts, checked
 * against the rendered Deployments and Services (selectors, ports, identities), plus a small model of
 * Istio's ALLOW semantics with negative controls (another identity, another port).
 */
import { expect } from "chai";
import { resolveSettings } from "../../program/config-args";
import { DEV, Rendered, beforeAllTests, render } from "./helpers";

const GW = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account";

/**
 * Istio ALLOW semantics for one workload: with at least one ALLOW policy selecting it, a request is
 * allowed only when some rule matches (source principal and destination port); otherwise allowed.
 */
function allowed(r: Rendered, ns: string, podLabels: Record<string, string>, principal: string, port: number): boolean {
    const policies = (r.objects as any[])
        .filter((o) => o.kind === "AuthorizationPolicy" && o.metadata.namespace === ns && (o.spec.action ?? "ALLOW") === "ALLOW")
        .filter((o) => Object.entries(o.spec.selector?.matchLabels ?? {}).every(([k, v]) => podLabels[k] === v));
    if (!policies.length) return true;
    return policies.some((p) =>
        (p.spec.rules ?? []).some(
            (rule: any) =>
                (rule.from ?? [{}]).some((f: any) => !f.source?.principals || f.source.principals.includes(principal)) &&
                (rule.to ?? [{}]).some((t: any) => !t.operation?.ports || t.operation.ports.includes(String(port))),
        ),
    );
}

function pod(r: Rendered, name: string) {
    return r.get("Deployment", name, "default").spec.template;
}

describe("access policies: who may talk to whom", () => {
    let r: Rendered;
    beforeAllTests(async () => {
        r = await render();
    });

    it("the rate-limit service and Redis run under ServiceAccounts of their own, which the stack creates (token not mounted)", () => {
        for (const d of ["ratelimit", "redis"]) {
            const sa = pod(r, d).spec.serviceAccountName;
            expect(sa, `${d} serviceAccountName`).to.be.a("string").and.not.equal("default");
            expect(r.get("ServiceAccount", sa, "default").automountServiceAccountToken).to.equal(false);
        }
        expect(pod(r, "ratelimit").spec.serviceAccountName).to.not.equal(pod(r, "redis").spec.serviceAccountName);
    });

    it("only the gateway's identity may call the rate-limit service, and only its gRPC port (the Service's grpc port)", () => {
        const labels = pod(r, "ratelimit").metadata.labels;
        const grpc = r.get("Service", "ratelimit", "default").spec.ports.find((p: any) => p.name === "grpc").targetPort;
        expect(allowed(r, "default", labels, GW, grpc)).to.equal(true);
        // Negative controls: another identity (bookinfo's productpage), the gateway on another port.
        expect(allowed(r, "default", labels, "cluster.local/ns/default/sa/bookinfo-productpage", grpc)).to.equal(false);
        expect(allowed(r, "default", labels, GW, 8080)).to.equal(false);
    });

    it("only the rate-limit service's identity (from its Deployment's ServiceAccount) may reach Redis on its container port", () => {
        const labels = pod(r, "redis").metadata.labels;
        const port = pod(r, "redis").spec.containers[0].ports[0].containerPort;
        const rlIdentity = `cluster.local/ns/default/sa/${pod(r, "ratelimit").spec.serviceAccountName}`;
        expect(allowed(r, "default", labels, rlIdentity, port)).to.equal(true);
        expect(allowed(r, "default", labels, GW, port), "the gateway may not reach Redis").to.equal(false);
        expect(allowed(r, "default", labels, "cluster.local/ns/default/sa/bookinfo-productpage", port)).to.equal(false);
    });

    it("legitimate traffic elsewhere is untouched: no policy selects bookinfo's pods", () => {
        expect(allowed(r, "default", pod(r, "productpage-v1").metadata.labels, "cluster.local/ns/foo/sa/bar", 9080)).to.equal(true);
    });

    it("NetworkPolicies: gateway pods in the gateway's namespace -> gRPC port; rate-limit pods -> Redis port; selectors match the Deployments", () => {
        const rl = r.get("NetworkPolicy", "ratelimit-from-gateway", "default").spec;
        expect(rl.podSelector.matchLabels).to.deep.equal({ app: pod(r, "ratelimit").metadata.labels.app });
        expect(rl.ingress).to.have.length(1);
        expect(rl.ingress[0].from).to.deep.equal([
            {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "istio-system" } },
                podSelector: { matchLabels: { istio: "ingressgateway" } },
            },
        ]);
        expect(rl.ingress[0].ports).to.deep.equal([{ protocol: "TCP", port: 8081 }]);
        const rd = r.get("NetworkPolicy", "redis-from-ratelimit", "default").spec;
        const rlLabels = pod(r, "ratelimit").metadata.labels;
        expect(Object.entries(rd.ingress[0].from[0].podSelector.matchLabels).every(([k, v]) => rlLabels[k] === v)).to.equal(true);
        expect(rd.ingress[0].ports[0].port).to.equal(pod(r, "redis").spec.containers[0].ports[0].containerPort);
        expect(rd.policyTypes).to.deep.equal(["Ingress"]);
    });

    it("the gateway's namespace moves the default principal: the default gateway's service account there", async () => {
        const c = await render({ overrides: { gatewayNamespace: "edge" } });
        const labels = pod(c, "ratelimit").metadata.labels;
        expect(allowed(c, "default", labels, "cluster.local/ns/edge/sa/istio-ingressgateway-service-account", 8081)).to.equal(true);
        expect(allowed(c, "default", labels, GW, 8081)).to.equal(false);
    });

    it("a principal of another namespace than the gateway's is refused (the policies would refuse the gateway), naming both fixes", async () => {
        let err: Error | undefined;
        try {
            await render({ overrides: { gatewayPrincipal: "example.org/ns/gateways/sa/public-gw" } });
        } catch (e) {
            err = e as Error;
        }
        expect(err?.message).to.contain(
            'mesh-ratelimit:gatewayPrincipal = "example.org/ns/gateways/sa/public-gw": names namespace gateways, but the gateway runs in gatewayNamespace istio-system',
        );
        expect(err?.message).to.contain("fix: pulumi config set gatewayPrincipal example.org/ns/istio-system/sa/public-gw");
        expect(err?.message).to.contain("or pulumi config set gatewayNamespace gateways");
        // Without access policies the principal admits nothing, so it need not match.
        await render({ overrides: { gatewayPrincipal: "example.org/ns/gateways/sa/public-gw", accessPolicies: "false" } });
    });

    it("a custom gateway principal moves the allowed identity and the NetworkPolicy's namespace", async () => {
        const c = await render({ overrides: { gatewayPrincipal: "example.org/ns/gateways/sa/public-gw", gatewayNamespace: "gateways" } });
        const labels = pod(c, "ratelimit").metadata.labels;
        expect(allowed(c, "default", labels, "example.org/ns/gateways/sa/public-gw", 8081)).to.equal(true);
        expect(allowed(c, "default", labels, GW, 8081)).to.equal(false);
        expect(
            c.get("NetworkPolicy", "ratelimit-from-gateway", "default").spec.ingress[0].from[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"],
        ).to.equal("gateways");
        // The service's identity takes the gateway's trust domain.
        expect(c.get("AuthorizationPolicy", "redis-from-ratelimit", "default").spec.rules[0].from[0].source.principals).to.deep.equal([
            "example.org/ns/default/sa/ratelimit",
        ]);
    });

    it("Prometheus on: the metrics ports stay reachable for scrapers", async () => {
        const c = await render({ overrides: { ratelimitPrometheus: "true" } });
        const ports = c.get("NetworkPolicy", "ratelimit-from-gateway", "default").spec.ingress.flatMap((i: any) => i.ports.map((p: any) => p.port));
        expect(ports).to.include.members([8081, 9090, 15020]);
    });

    it("an existing Redis: no Redis policies or ServiceAccount; accessPolicies=false: no policies at all, ServiceAccounts kept", async () => {
        const ext = await render({ overrides: { redisMode: "external", redisAddress: "redis.cache:6379" } });
        // The existing Redis holds the fixed counters; the per-path counters get a Redis of their
        // own (never the user's), with its policies.
        expect(ext.names("AuthorizationPolicy")).to.deep.equal([
            "ratelimit-from-gateway",
            "ratelimit-per-value-from-gateway",
            "redis-per-value-from-ratelimit",
        ]);
        expect(ext.names("NetworkPolicy")).to.deep.equal(["ratelimit-from-gateway", "ratelimit-per-value-from-gateway", "redis-per-value-from-ratelimit"]);
        expect(ext.find("ServiceAccount", "redis")).to.equal(undefined);
        const off = await render({ overrides: { accessPolicies: "false" } });
        expect(off.names("AuthorizationPolicy")).to.deep.equal([]);
        expect(off.names("NetworkPolicy")).to.deep.equal([]);
        expect(off.get("ServiceAccount", pod(off, "ratelimit").spec.serviceAccountName, "default")).to.exist;
    });

    it("every pod runs under a ServiceAccount the render creates in its namespace (else the pods are never created), in every combination", async () => {
        for (const overrides of [
            {},
            { variant: "B", apiProfile: "seed" },
            { accessPolicies: "false" },
            { redisMode: "external", redisAddress: "redis.cache:6379" },
            { ratelimitNamespace: "limits", managedApiNamespace: "esp" },
        ] as Record<string, string>[]) {
            const c = await render({ overrides });
            const accounts = new Set(c.objects.filter((o) => o.kind === "ServiceAccount").map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
            for (const d of c.objects.filter((o) => o.kind === "Deployment") as any[]) {
                const sa = d.spec.template.spec.serviceAccountName ?? "default";
                if (sa !== "default")
                    expect(accounts, `${JSON.stringify(overrides)}: Deployment ${d.metadata.namespace}/${d.metadata.name} runs as ${sa}`).to.include(
                        `${d.metadata.namespace}/${sa}`,
                    );
            }
        }
    });

    it("gatewayPrincipal must be '<trust domain>/ns/<ns>/sa/<sa>'; a spiffe:// prefix is dropped in the fix", () => {
        expect(() => resolveSettings({ ...DEV, gatewayPrincipal: "spiffe://cluster.local/ns/istio-system/sa/gw" })).to.throw(
            /gatewayPrincipal[\s\S]*fix: pulumi config set gatewayPrincipal cluster.local\/ns\/istio-system\/sa\/gw/,
        );
        expect(() => resolveSettings({ ...DEV, gatewayPrincipal: "istio-ingressgateway" })).to.throw(/must be an Istio principal/);
    });
});
