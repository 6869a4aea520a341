/**
 * Objects shared with the cluster (program/preflight.ts) against a real API server: the
 * preflight reads the cluster with kubectl (cluster/cluster-lookup.ts, the code `pulumi preview`
 * runs), decides, and the program registers only what it may create. "up" here creates exactly the
 * shared objects the program registered, with a plain create (POST) as pulumi-kubernetes ≥ 4.29
 * does, so an object that exists fails with AlreadyExists just as `pulumi up` would; "destroy"
 * deletes exactly those. Objects that existed before must come out byte-identical (uid,
 * resourceVersion, labels, annotations, spec). No Pulumi engine is needed.
 *
 * Each test uses its own mesh namespace and IngressClass names, so the other cluster-tier files
 * (which apply the default names) are not disturbed.
 *
 * Most tests pin the literal placement (`vhostScope=all filterNamespaces=root mutualTlsScope=mesh`):
 * every EnvoyFilter and PeerAuthentication `default` in the mesh namespace, so that namespace holds
 * all the fixed-name objects the decision table covers. The default placement (filters in the
 * gateway's and the workload's namespaces, mutual TLS through the stack's own selector policies)
 * has a test of its own at the end.
 */
import { expect } from "chai";
import { lookupSharedObjects } from "../../cluster/cluster-lookup";
import { LiveObject, SharedObjectsPlan, planSharedObjects, refName, sharedObjectRefs } from "../../program/preflight";
import { StackSettings } from "../../mesh/settings-types";
import { planOfConfig } from "../../program/config-args";
import { InputError } from "../../lib/problems";
import { K8sObject } from "../../lib/k8s-object";
import { registerProgram, toObjects } from "../../render/render";
import { ensureNamespace, kubectl, kubectlJson, kubectlRaw } from "./kube";
import { RENDER_STACK_ID } from "../../program/stack-identity";

const DEV: Record<string, string> = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

const tag = `${process.pid}`;
const meshNs = `shared-mesh-${tag}`;
/** The default placement's own namespaces: the gateway's (its filters) and the workload's (local filter, Redis, rate-limit service). */
const gwNs = `shared-gw-${tag}`;
const appsNs = `shared-apps-${tag}`;
let classSeq = 0;
/** A fresh IngressClass name per test (cluster-scoped, so never shared with other tests). */
const newClass = () => `istio-t${tag}-${++classSeq}`;

/** The specification's literal placement: every shared object in the mesh namespace. */
const LITERAL: Record<string, string> = { vhostScope: "all", filterNamespaces: "root", mutualTlsScope: "mesh" };

function config(over: Record<string, string>): Record<string, string> {
    return { ...DEV, meshNamespace: meshNs, ...LITERAL, ...over };
}

/** The preflight as `pulumi preview` runs it: settings → refs → kubectl → decisions. */
function preflight(over: Record<string, string>): { s: StackSettings; live: LiveObject[]; plan: SharedObjectsPlan } {
    const p = planOfConfig(config(over));
    const s = p.settings;
    const live = lookupSharedObjects(sharedObjectRefs(s, p.global), []);
    // The render runs as stack `render` with its placeholder id (render/render.ts): what it applied carries that owner.
    return { s, live, plan: planSharedObjects(s, live, p.global, `organization/mesh-ratelimit/render@${RENDER_STACK_ID}`) };
}

/** Runs the program with the cluster's answer; returns the shared objects it would create. */
async function programShared(over: Record<string, string>): Promise<{ objects: K8sObject[]; reports: string[]; error?: unknown }> {
    const { live } = preflight(over);
    const reports: string[] = [];
    try {
        const { registrations } = await registerProgram({ base: config(over), cluster: live, onReport: (m) => reports.push(m) });
        const objects = toObjects(registrations).filter(
            (o) => o.kind === "IngressClass" || ((o.kind === "PeerAuthentication" || o.kind === "EnvoyFilter") && o.metadata.namespace === meshNs),
        );
        return { objects, reports };
    } catch (error) {
        return { objects: [], reports, error };
    }
}

function resourceOf(o: { kind: string }): string {
    return {
        IngressClass: "ingressclasses.networking.k8s.io",
        PeerAuthentication: "peerauthentications.security.istio.io",
        EnvoyFilter: "envoyfilters.networking.istio.io",
    }[o.kind]!;
}

/** `pulumi up` for the shared objects: a plain create of each (fails on AlreadyExists). */
function up(objects: K8sObject[]): void {
    for (const o of objects) kubectl(["create", "-f", "-"], JSON.stringify(o));
}

/** `pulumi destroy` for them: delete exactly what `up` created. */
function destroy(objects: K8sObject[]): void {
    for (const o of objects) kubectl(["delete", resourceOf(o), o.metadata.name, ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : []), "--wait=true"]);
}

/** What must not change on an object the stack did not create. */
function snapshot(kind: string, name: string, namespace?: string): unknown {
    const o = kubectlJson(["get", resourceOf({ kind }), name, ...(namespace ? ["-n", namespace] : [])]);
    return { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, labels: o.metadata.labels, annotations: o.metadata.annotations, spec: o.spec };
}

function exists(kind: string, name: string, namespace?: string): boolean {
    return kubectlRaw(["get", resourceOf({ kind }), name, ...(namespace ? ["-n", namespace] : [])]).status === 0;
}

function createForeign(o: LiveObject & { apiVersion: string }): void {
    kubectl(["create", "-f", "-"], JSON.stringify(o));
}

const ingressClass = (name: string, controller: string) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: { name, labels: { team: "platform" } },
    spec: { controller },
});
const peerAuth = (mode: string) => ({
    apiVersion: "security.istio.io/v1",
    kind: "PeerAuthentication",
    metadata: { name: "default", namespace: meshNs, labels: { team: "mesh" } },
    spec: { mtls: { mode } },
});

describe("cluster: objects shared with the cluster (preflight against a real API server)", function () {
    this.timeout(120_000);
    const cleanupClasses: string[] = [];

    before(() => {
        for (const ns of [meshNs, gwNs, appsNs]) ensureNamespace(ns);
    });
    afterEach(() => {
        for (const ns of [meshNs, gwNs, appsNs])
            kubectlRaw(["delete", "peerauthentications.security.istio.io,envoyfilters.networking.istio.io", "--all", "-n", ns, "--wait=true"]);
        for (const c of cleanupClasses.splice(0)) kubectlRaw(["delete", "ingressclasses.networking.k8s.io", c, "--ignore-not-found"]);
    });
    // Not waited for: the namespace is empty by now (afterEach), and its removal needs the namespace
    // controller, which a control-plane-only cluster (MESH_RL_FAKE_NODES=0) does not run.
    after(() => kubectlRaw(["delete", "namespace", meshNs, gwNs, appsNs, "--ignore-not-found", "--wait=false"]));

    it("IngressClass and PeerAuthentication absent: created, then managed on the next run, removed by destroy", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        const first = await programShared({ ingressClassName: cls });
        expect(first.error).to.equal(undefined);
        expect(first.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).to.deep.equal(
            [
                `IngressClass/${cls}`,
                "PeerAuthentication/default",
                "EnvoyFilter/filter-ratelimit",
                "EnvoyFilter/filter-ratelimit-svc",
                "EnvoyFilter/filter-ratelimit-svc-api",
                "EnvoyFilter/filter-ratelimit-per-value",
                "EnvoyFilter/filter-ratelimit-per-value-svc",
                "EnvoyFilter/filter-ratelimit-per-value-svc-api",
                "EnvoyFilter/filter-local-ratelimit-svc",
            ].sort(),
        );
        expect(first.reports.join("\n")).to.contain(`IngressClass ${cls}: not in the cluster; the stack creates it`);
        up(first.objects);
        expect(kubectlJson(["get", "ingressclass", cls]).spec.controller).to.equal("istio.io/ingress-controller");
        expect(kubectlJson(["get", "peerauthentications.security.istio.io", "default", "-n", meshNs]).spec.mtls.mode).to.equal("STRICT");

        // Next `pulumi up`: the objects are the stack's own (label), so they stay registered
        // (a skipped registration would make Pulumi delete them).
        const second = preflight({ ingressClassName: cls });
        expect(second.plan.problems).to.deep.equal([]);
        // The IngressClass, the PeerAuthentication and the seven EnvoyFilters (three of them the per-path counters').
        expect(second.plan.decisions.map((d) => d.action)).to.deep.equal(Array(9).fill("manage"));
        const again = await programShared({ ingressClassName: cls });
        expect(again.objects).to.have.length(9);

        destroy(first.objects);
        expect(exists("IngressClass", cls)).to.equal(false);
        expect(exists("PeerAuthentication", "default", meshNs)).to.equal(false);
    });

    it("IngressClass already there for Istio (someone else's): not created, left exactly as it was by up and destroy", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        createForeign(ingressClass(cls, "istio.io/ingress-controller"));
        const before = snapshot("IngressClass", cls);
        const run = await programShared({ ingressClassName: cls });
        expect(run.error).to.equal(undefined);
        expect(run.objects.filter((o) => o.kind === "IngressClass")).to.deep.equal([]);
        expect(run.reports.join("\n")).to.match(new RegExp(`IngressClass ${cls}: already exists with controller istio\\.io/ingress-controller`));
        up(run.objects); // would fail with AlreadyExists if the class were registered
        destroy(run.objects);
        expect(snapshot("IngressClass", cls)).to.deep.equal(before);
    });

    it("IngressClass of another controller: config error before anything is created; the class is untouched", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        createForeign(ingressClass(cls, "k8s.io/ingress-nginx"));
        const before = snapshot("IngressClass", cls);
        const run = await programShared({ ingressClassName: cls });
        expect(run.error).to.be.instanceOf(InputError);
        expect((run.error as Error).message).to.contain(`IngressClass ${cls} already exists with controller 'k8s.io/ingress-nginx'`);
        expect(run.objects).to.deep.equal([]);
        expect(exists("PeerAuthentication", "default", meshNs)).to.equal(false);
        expect(snapshot("IngressClass", cls)).to.deep.equal(before);
    });

    it("PeerAuthentication default STRICT (someone else's): nothing created, up and destroy leave it byte-identical", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        createForeign(peerAuth("STRICT"));
        const before = snapshot("PeerAuthentication", "default", meshNs);
        const run = await programShared({ ingressClassName: cls });
        expect(run.error).to.equal(undefined);
        expect(run.objects.filter((o) => o.kind === "PeerAuthentication")).to.deep.equal([]);
        expect(run.reports.join("\n")).to.contain(`PeerAuthentication ${meshNs}/default: already exists with mtls.mode STRICT`);
        up(run.objects);
        destroy(run.objects);
        expect(snapshot("PeerAuthentication", "default", meshNs)).to.deep.equal(before);
    });

    it("PeerAuthentication default PERMISSIVE: stops with its name and the fix, nothing created, it stays PERMISSIVE", async () => {
        createForeign(peerAuth("PERMISSIVE"));
        const before = snapshot("PeerAuthentication", "default", meshNs);
        const cls = newClass();
        const run = await programShared({ ingressClassName: cls });
        expect(run.error).to.be.instanceOf(InputError);
        const msg = (run.error as Error).message;
        expect(msg).to.contain(`PeerAuthentication ${meshNs}/default already exists with mtls.mode PERMISSIVE`);
        expect(msg).to.contain(`kubectl -n ${meshNs} patch peerauthentication default`);
        expect(msg).to.contain("pulumi config set mutualTls false");
        expect(exists("IngressClass", cls)).to.equal(false);
        expect(snapshot("PeerAuthentication", "default", meshNs)).to.deep.equal(before);
    });

    it("pre-existing IngressClass for Istio and STRICT PeerAuthentication together: up + destroy leave both exactly as they were", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        createForeign(ingressClass(cls, "istio.io/ingress-controller"));
        createForeign(peerAuth("STRICT"));
        const before = [snapshot("IngressClass", cls), snapshot("PeerAuthentication", "default", meshNs)];
        const run = await programShared({ ingressClassName: cls });
        expect(run.error).to.equal(undefined);
        expect(run.objects.map((o) => o.kind).sort()).to.deep.equal(Array(7).fill("EnvoyFilter"));
        up(run.objects);
        destroy(run.objects);
        expect([snapshot("IngressClass", cls), snapshot("PeerAuthentication", "default", meshNs)]).to.deep.equal(before);
    });

    it("a foreign EnvoyFilter filter-ratelimit in the mesh namespace: config error, the filter is untouched", async () => {
        createForeign({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: "filter-ratelimit", namespace: meshNs },
            spec: { workloadSelector: { labels: { istio: "ingressgateway" } } },
        });
        const before = snapshot("EnvoyFilter", "filter-ratelimit", meshNs);
        const run = await programShared({ ingressClassName: newClass() });
        expect(run.error).to.be.instanceOf(InputError);
        expect((run.error as Error).message).to.contain(`EnvoyFilter ${meshNs}/filter-ratelimit already exists and was not created by this stack`);
        expect(snapshot("EnvoyFilter", "filter-ratelimit", meshNs)).to.deep.equal(before);
    });

    it("negative controls: without the preflight the create fails with AlreadyExists, and the snapshot sees a change", async () => {
        createForeign(peerAuth("STRICT"));
        const before = snapshot("PeerAuthentication", "default", meshNs);
        // What the program would register without the preflight (cluster assumed empty).
        const { registrations } = await registerProgram({ base: config({ ingressClassName: newClass() }) });
        const pa = toObjects(registrations).find((o) => o.kind === "PeerAuthentication")!;
        const r = kubectlRaw(["create", "-f", "-"], JSON.stringify(pa));
        expect(r.status).to.not.equal(0);
        expect(r.stderr).to.match(/AlreadyExists|already exists/);
        kubectl(["label", "peerauthentications.security.istio.io", "default", "-n", meshNs, "touched=yes"]);
        expect(snapshot("PeerAuthentication", "default", meshNs)).to.not.deep.equal(before);
    });
    it("default placement: filters in the gateway's and the workload's namespaces, mutual TLS by the stack's own selector policies; a foreign PERMISSIVE `default` in the mesh namespace no longer stops it", async () => {
        const cls = newClass();
        cleanupClasses.push(cls);
        // No LITERAL: vhostScope gateway-hosts, filterNamespaces own, mutualTlsScope workloads.
        const base = { ...DEV, meshNamespace: meshNs, gatewayNamespace: gwNs, workloadNamespace: appsNs, ratelimitNamespace: appsNs, ingressClassName: cls };
        const p = planOfConfig(base);
        const refs = sharedObjectRefs(p.settings, p.global);
        expect(refs.map(refName).sort()).to.deep.equal(
            [
                `IngressClass ${cls}`,
                `EnvoyFilter ${gwNs}/filter-ratelimit`,
                `EnvoyFilter ${gwNs}/filter-ratelimit-svc`,
                `EnvoyFilter ${gwNs}/filter-ratelimit-svc-api`,
                `EnvoyFilter ${gwNs}/filter-ratelimit-per-value`,
                `EnvoyFilter ${gwNs}/filter-ratelimit-per-value-svc`,
                `EnvoyFilter ${gwNs}/filter-ratelimit-per-value-svc-api`,
                `EnvoyFilter ${appsNs}/filter-local-ratelimit-svc`,
            ].sort(),
        );
        createForeign(peerAuth("PERMISSIVE")); // what stops the literal placement (test above)
        const paBefore = snapshot("PeerAuthentication", "default", meshNs);

        const reports: string[] = [];
        const { registrations } = await registerProgram({ base, cluster: lookupSharedObjects(refs, []), onReport: (m) => reports.push(m) });
        const all = toObjects(registrations);
        expect(
            all.filter((o) => o.metadata.namespace === meshNs),
            "nothing in the mesh namespace",
        ).to.deep.equal([]);
        const objects = all.filter((o) => o.kind === "IngressClass" || o.kind === "EnvoyFilter" || o.kind === "PeerAuthentication");
        expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`).sort()).to.deep.equal(
            [...refs.map(refName), `PeerAuthentication ${appsNs}/mesh-ratelimit-mtls`].sort(),
        );
        const mtls = objects.find((o) => o.kind === "PeerAuthentication")! as any;
        expect(mtls.spec).to.deep.equal({ selector: { matchLabels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } }, mtls: { mode: "STRICT" } });
        expect(reports.join("\n")).to.not.contain("PeerAuthentication");

        // up: the real API server takes them (schema incl. the selector policy); the foreign policy is untouched.
        up(objects);
        expect(kubectlJson(["get", "peerauthentications.security.istio.io", "mesh-ratelimit-mtls", "-n", appsNs]).spec.selector.matchLabels).to.deep.equal({
            "app.kubernetes.io/part-of": "mesh-ratelimit",
        });
        expect(
            kubectlJson(["get", "envoyfilters.networking.istio.io", "-n", gwNs])
                .items.map((o: any) => o.metadata.name)
                .sort(),
        ).to.deep.equal([
            "filter-ratelimit",
            "filter-ratelimit-per-value",
            "filter-ratelimit-per-value-svc",
            "filter-ratelimit-per-value-svc-api",
            "filter-ratelimit-svc",
            "filter-ratelimit-svc-api",
        ]);
        destroy(objects);
        expect(snapshot("PeerAuthentication", "default", meshNs)).to.deep.equal(paBefore);

        // The collision check follows the filters: a foreign filter-ratelimit in the mesh namespace
        // is no longer in the way; one in the gateway's namespace is.
        createForeign({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: "filter-ratelimit", namespace: meshNs },
            spec: { workloadSelector: { labels: { istio: "ingressgateway" } } },
        });
        await registerProgram({ base, cluster: lookupSharedObjects(refs, []), onReport: () => undefined });
        createForeign({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: "filter-ratelimit", namespace: gwNs },
            spec: { workloadSelector: { labels: { istio: "ingressgateway" } } },
        });
        const refused = await registerProgram({ base, cluster: lookupSharedObjects(refs, []), onReport: () => undefined }).then(
            () => undefined,
            (e: unknown) => e,
        );
        expect(refused).to.be.instanceOf(InputError);
        expect((refused as Error).message).to.contain(`EnvoyFilter ${gwNs}/filter-ratelimit already exists and was not created by this stack`);
    });
});
