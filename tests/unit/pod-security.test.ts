/**
 * Hardened workloads: every pod template the stack renders is checked against the Kubernetes Pod
 * Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/), by a
 * checker written here from the standard's tables (not from the components), plus requests and
 * limits on every container, the rate-limit service's disruption budget and spread. The cluster
 * tier (tests/cluster/apply.test.ts) shows the real API server's PodSecurity admission agrees.
 */
import { expect } from "chai";
import { DEV, Rendered, render } from "./helpers";

/** Capabilities `baseline` allows adding (the container runtime's default set). */
const BASELINE_CAPS = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];
/** Volume types `restricted` allows. */
const RESTRICTED_VOLUMES = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

/** Violations of `baseline` in a pod spec (empty when it passes). */
export function baselineViolations(pod: any): string[] {
    const out: string[] = [];
    const containers: any[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
    for (const f of ["hostNetwork", "hostPID", "hostIPC"]) if (pod[f]) out.push(`${f}`);
    for (const v of pod.volumes ?? []) if (v.hostPath) out.push(`hostPath volume ${v.name}`);
    const seccompTypes = [pod.securityContext?.seccompProfile?.type, ...containers.map((c) => c.securityContext?.seccompProfile?.type)];
    if (seccompTypes.includes("Unconfined")) out.push("seccomp Unconfined");
    for (const c of containers) {
        const sc = c.securityContext ?? {};
        if (sc.privileged) out.push(`${c.name}: privileged`);
        for (const cap of sc.capabilities?.add ?? []) if (!BASELINE_CAPS.includes(cap)) out.push(`${c.name}: adds capability ${cap}`);
        for (const p of c.ports ?? []) if (p.hostPort) out.push(`${c.name}: hostPort ${p.hostPort}`);
        if (sc.procMount && sc.procMount !== "Default") out.push(`${c.name}: procMount ${sc.procMount}`);
    }
    return out;
}

/** Violations of `restricted` (which includes `baseline`) for the named containers (default: all). */
export function restrictedViolations(pod: any, only?: string[]): string[] {
    const out = baselineViolations(pod);
    const psc = pod.securityContext ?? {};
    for (const v of pod.volumes ?? []) {
        const type = Object.keys(v).find((k) => k !== "name");
        if (!type || !RESTRICTED_VOLUMES.includes(type)) out.push(`volume ${v.name} of type ${type}`);
    }
    if (psc.runAsUser === 0) out.push("pod runAsUser 0");
    const containers: any[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])].filter((c) => !only || only.includes(c.name));
    for (const c of containers) {
        const sc = c.securityContext ?? {};
        if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation not false`);
        if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${c.name}: does not drop ALL capabilities`);
        for (const cap of sc.capabilities?.add ?? []) if (cap !== "NET_BIND_SERVICE") out.push(`${c.name}: adds ${cap}`);
        if ((sc.runAsNonRoot ?? psc.runAsNonRoot) !== true) out.push(`${c.name}: runAsNonRoot not true`);
        if (sc.runAsUser === 0) out.push(`${c.name}: runAsUser 0`);
        const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
        if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") out.push(`${c.name}: seccomp profile ${seccomp ?? "unset"}`);
    }
    return out;
}

const podSpecs = (r: Rendered) =>
    r.objects
        .filter((o) => o.kind === "Deployment")
        .map((d: any) => ({ name: d.metadata.name as string, ns: d.metadata.namespace as string, pod: d.spec.template.spec }));

describe("Pod Security Standards, resources and availability of the stack's workloads", function () {
    this.timeout(120_000);

    it("the checker can fail: an unhardened pod violates restricted, a privileged one baseline", function () {
        const plain = { containers: [{ name: "c", image: "x" }] };
        expect(restrictedViolations(plain)).to.include.members([
            "c: allowPrivilegeEscalation not false",
            "c: does not drop ALL capabilities",
            "c: runAsNonRoot not true",
            "c: seccomp profile unset",
        ]);
        expect(baselineViolations(plain)).to.deep.equal([]);
        expect(
            baselineViolations({ hostNetwork: true, containers: [{ name: "c", securityContext: { privileged: true, capabilities: { add: ["NET_ADMIN"] } } }] }),
        ).to.deep.equal(["hostNetwork", "c: privileged", "c: adds capability NET_ADMIN"]);
    });

    for (const variant of ["A", "B"] as const) {
        for (const apiProfile of ["current", "seed"] as const) {
            it(`variant ${variant}, ${apiProfile}: every pod but ESP's meets restricted; ESP's meets baseline and its echo container restricted`, async function () {
                const r = await render({ variant, apiProfile });
                const pods = podSpecs(r);
                expect(pods.map((p) => p.name).sort()).to.deep.equal([
                    "details-v1",
                    "esp-echo",
                    "productpage-v1",
                    "ratelimit",
                    "ratelimit-per-value",
                    "ratings-v1",
                    "redis",
                    "redis-per-value",
                    "reviews-v1",
                    "reviews-v2",
                    "reviews-v3",
                ]);
                for (const p of pods) {
                    if (p.name === "esp-echo") {
                        expect(baselineViolations(p.pod), p.name).to.deep.equal([]);
                        expect(restrictedViolations(p.pod, ["echo"]), p.name).to.deep.equal([]);
                        // The documented exception: ESP runs as root (its image needs it).
                        expect(restrictedViolations(p.pod, ["esp"])).to.include("esp: runAsNonRoot not true");
                    } else {
                        expect(restrictedViolations(p.pod), p.name).to.deep.equal([]);
                    }
                }
            });
        }
    }

    it("non-root user ids: ratelimit 65532, Redis 10001:10001 (above the host's system range), bookinfo 1000", async function () {
        const r = await render();
        const uid = (name: string) => r.get("Deployment", name).spec.template.spec.securityContext;
        expect(uid("ratelimit")).to.include({ runAsUser: 65532, runAsNonRoot: true });
        expect(uid("redis")).to.include({ runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001 });
        for (const d of ["details-v1", "ratings-v1", "reviews-v1", "reviews-v2", "reviews-v3", "productpage-v1"])
            expect(uid(d)).to.include({ runAsUser: 1000 });
    });

    it("read-only root filesystem everywhere but ESP; the writable paths are emptyDirs (Redis /data, reviews' Liberty output and /tmp)", async function () {
        const r = await render();
        for (const { name, pod } of podSpecs(r)) {
            for (const c of pod.containers) {
                const ro = c.securityContext?.readOnlyRootFilesystem === true;
                expect(ro, `${name}/${c.name}`).to.equal(c.name !== "esp");
                for (const m of c.volumeMounts ?? []) {
                    const vol = pod.volumes.find((v: any) => v.name === m.name);
                    expect(vol, `${name}/${c.name} mount ${m.name}`).to.not.equal(undefined);
                    if (!m.readOnly && !vol.emptyDir) expect.fail(`${name}/${c.name} writes to ${m.mountPath}, which is not an emptyDir`);
                }
            }
        }
        const mounts = (d: string) =>
            r
                .get("Deployment", d)
                .spec.template.spec.containers[0].volumeMounts.map((m: any) => m.mountPath)
                .sort();
        expect(mounts("redis")).to.deep.equal(["/data"]);
        expect(mounts("reviews-v2")).to.deep.equal(["/opt/ibm/wlp/output", "/tmp"]);
        expect(r.get("Deployment", "reviews-v2").spec.template.spec.containers[0].env).to.deep.equal([{ name: "LOG_DIR", value: "/tmp/logs" }]);
    });

    it("requests and limits (cpu and memory) on every container", async function () {
        const r = await render();
        let n = 0;
        for (const { name, pod } of podSpecs(r)) {
            for (const c of pod.containers) {
                n++;
                for (const side of ["requests", "limits"])
                    for (const res of ["cpu", "memory"]) expect(c.resources?.[side]?.[res], `${name}/${c.name} ${side}.${res}`).to.be.a("string");
            }
        }
        expect(n).to.equal(12);
    });

    it("rate-limit service: PodDisruptionBudget (maxUnavailable 1) and a soft spread over nodes, both selecting its pods", async function () {
        const r = await render({ overrides: { ratelimitServiceName: "rls", ratelimitNamespace: "limits" } });
        const pdb = r.get("PodDisruptionBudget", "rls", "limits");
        expect(pdb.apiVersion).to.equal("policy/v1");
        expect(pdb.spec).to.deep.equal({ maxUnavailable: 1, selector: { matchLabels: { app: "rls" } } });
        const dep = r.get("Deployment", "rls", "limits");
        expect(dep.spec.template.metadata.labels).to.include({ app: "rls" });
        expect(dep.spec.template.spec.topologySpreadConstraints).to.deep.equal([
            { maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { app: "rls" } } },
        ]);
        expect(r.names("PodDisruptionBudget")).to.deep.equal(["rls", "rls-per-value"]);
    });

    it("managedApiNamespace moves ESP, its Service and Ingress (only those, and a mutual TLS policy for them) to a namespace of their own", async function () {
        const r = await render({ overrides: { managedApiNamespace: "esp" } });
        const inEsp = r.objects
            .filter((o) => o.metadata.namespace === "esp")
            .map((o) => `${o.kind}/${o.metadata.name}`)
            .sort();
        // ESP's namespace also gets the stack's workload-level mutual TLS policy.
        expect(inEsp).to.deep.equal(["Deployment/esp-echo", "Ingress/simple-ingress", "PeerAuthentication/mesh-ratelimit-mtls", "Service/esp-echo"]);
        const dflt = await render();
        expect(dflt.get("Deployment", "esp-echo").metadata.namespace).to.equal(DEV.workloadNamespace ?? "default");
    });
});
