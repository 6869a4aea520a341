/**
 * Mutual TLS for the stack's traffic (spec 2.10, 5.2), as wide as `scope` says.
 *
 * - scope `workloads` (default, both profiles): a PeerAuthentication `mesh-ratelimit-mtls` with mode
 *   STRICT in each of the stack's namespaces, selecting only the stack's pods
 *   (`app.kubernetes.io/part-of=mesh-ratelimit`). A workload-level policy takes precedence over the
 *   namespace's and the mesh's, so the stack's pods accept only mutual TLS whatever the mesh-wide
 *   policy says, and nobody else's traffic changes.
 * - scope `mesh`, `current` profile: PeerAuthentication `default` with mode STRICT in the root
 *   namespace (owned by this stack, deleted on destroy): every workload of the mesh.
 * - scope `mesh`, `seed` profile: `authPolicy: MUTUAL_TLS` inside the `mesh` text of Istio's ConfigMap `istio`.
 *   That ConfigMap belongs to the Istio installation. A ConfigMapPatch cannot be used: it would have
 *   to force-own the whole `mesh` key and deleting it removes that key (pulumi-kubernetes#2104).
 *   Instead a small dynamic resource edits that one line, remembers the original text and puts it
 *   back byte for byte on destroy. It uses `kubectl` with the ambient kubeconfig and `kubeContext` (required when a provider is passed in opts:
 *   kubectl cannot use the provider's kubeconfig).
 */
import { DEFAULTS } from "./defaults";
import { Problem } from "../lib/problems";
import * as pulumi from "@pulumi/pulumi";
import { PART_OF, stackLabels } from "../lib/common";
import { PeerAuthentication } from "./crds";
import { dnsProblem, selectorProblems, argsError, unknownFieldProblems } from "./arg-checks";
import { restoredText, setTopLevel } from "../builders/mesh-config-text";
import { ApiProfileName, MutualTlsScope } from "./mesh-enums";

export const MESH_CONFIGMAP = "istio";
export const MESH_CONFIG_KEY = "mesh";
export const AUTH_POLICY_KEY = "authPolicy";
export const AUTH_POLICY_VALUE = "MUTUAL_TLS";

/** Inputs of the dynamic resource; also what the offline renderer shows as the patch. */
export interface MeshConfigSettingInputs {
    namespace: string;
    configMap: string;
    dataKey: string;
    setting: string;
    value: string;
    kubeContext?: string;
}

export interface MeshConfigSettingOutputs extends MeshConfigSettingInputs {
    original: string;
    applied: string;
}

function kubectl(args: string[], context: string | undefined, input?: string): string {
    // Loaded here: this function runs inside Pulumi's dynamic-provider host.
    const { execFileSync } = require("child_process") as typeof import("child_process");
    const full = [...(context ? ["--context", context] : []), ...args];
    try {
        return execFileSync("kubectl", full, { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
    } catch (e: any) {
        const detail = (e.stderr || e.message || "").toString().trim();
        throw new Error(
            `kubectl ${full.join(" ")} failed: ${detail}. The seed profile edits Istio's mesh ConfigMap with kubectl; make sure kubectl is on PATH and uses the cluster Pulumi deploys to.`,
            { cause: e },
        );
    }
}

function readConfigMap(i: MeshConfigSettingInputs): any {
    return JSON.parse(kubectl(["get", "configmap", i.configMap, "-n", i.namespace, "-o", "json"], i.kubeContext));
}

function writeText(i: MeshConfigSettingInputs, cm: any, text: string): void {
    // `replace` carries the resourceVersion just read: a concurrent edit fails instead of being lost.
    cm.data = { ...(cm.data ?? {}), [i.dataKey]: text };
    kubectl(["replace", "-f", "-"], i.kubeContext, JSON.stringify(cm));
}

function applySetting(i: MeshConfigSettingInputs): MeshConfigSettingOutputs {
    const cm = readConfigMap(i);
    const original: string | undefined = cm.data?.[i.dataKey];
    if (original === undefined) {
        throw new Error(`ConfigMap ${i.namespace}/${i.configMap} has no '${i.dataKey}' entry; is Istio installed in ${i.namespace}?`);
    }
    const applied = setTopLevel(original, i.setting, i.value);
    if (applied !== original) writeText(i, cm, applied);
    return { ...i, original, applied };
}

function restoreSetting(o: MeshConfigSettingOutputs): void {
    let cm: any;
    try {
        cm = readConfigMap(o);
    } catch (e) {
        if (/NotFound|not found/.test(String(e))) return; // Istio was uninstalled: nothing to restore.
        throw e;
    }
    const current: string = cm.data?.[o.dataKey] ?? "";
    const restored = restoredText(current, o.applied, o.original, o.setting);
    if (restored !== current) writeText(o, cm, restored);
}

/** The dynamic provider; exported for the cluster tier, which drives it against a real API server. */
export const meshConfigSettingProvider: pulumi.dynamic.ResourceProvider = {
    async create(inputs: MeshConfigSettingInputs) {
        const outs = applySetting(inputs);
        return { id: `${inputs.namespace}/${inputs.configMap}#${inputs.dataKey}.${inputs.setting}`, outs };
    },
    async diff(_id: string, olds: MeshConfigSettingOutputs, news: MeshConfigSettingInputs) {
        const replaces = (["namespace", "configMap", "dataKey", "setting"] as const).filter((k) => olds[k] !== news[k]);
        const changes = replaces.length > 0 || olds.value !== news.value || olds.kubeContext !== news.kubeContext;
        return { changes, replaces, deleteBeforeReplace: true };
    },
    async update(_id: string, olds: MeshConfigSettingOutputs, news: MeshConfigSettingInputs) {
        // Keep the text from before the first create as the one to restore.
        const outs = applySetting(news);
        return { outs: { ...outs, original: olds.original } };
    },
    async delete(_id: string, props: MeshConfigSettingOutputs) {
        restoreSetting(props);
    },
};

/** One top-level setting inside a text entry of a ConfigMap the stack does not own. */
export class MeshConfigSetting extends pulumi.dynamic.Resource {
    public readonly original!: pulumi.Output<string>;
    public readonly applied!: pulumi.Output<string>;

    constructor(name: string, args: MeshConfigSettingInputs, opts?: pulumi.CustomResourceOptions) {
        super(meshConfigSettingProvider, name, { ...args, original: undefined, applied: undefined }, opts, "MeshConfigSetting");
    }
}

/** Name of the stack's workload-level PeerAuthentications. */
export const STACK_PEER_AUTHENTICATION = "mesh-ratelimit-mtls";

export interface MeshMutualTlsArgs {
    /**
     * `MutualTlsScope.Workloads`: STRICT for the pods labelled `selector` in `namespaces` only.
     * `MutualTlsScope.Mesh`: STRICT for the whole mesh (every team's workloads). Defaults to `MutualTlsScope.Workloads`.
     */
    scope?: MutualTlsScope;
    /** Workloads scope: the namespaces holding the pods (one PeerAuthentication each). Required with that scope. */
    namespaces?: string[];
    /** Workloads scope: labels of the pods. Defaults to `{ "app.kubernetes.io/part-of": "mesh-ratelimit" }`. */
    selector?: Record<string, string>;
    /** Mesh scope: `current`: PeerAuthentication `default` STRICT; `seed`: `authPolicy: MUTUAL_TLS` in the mesh ConfigMap. Defaults to `ApiProfileName.Current`. */
    apiProfile?: ApiProfileName;
    /** Istio's root namespace (PeerAuthentication, mesh ConfigMap `istio`). Defaults to `istio-system`. */
    meshNamespace?: string;
    /**
     * kubectl context for the seed profile's ConfigMap edit (the provider's `kubernetes:context`). Defaults to the
     * current context; required when a provider is passed in opts (kubectl cannot use its kubeconfig).
     */
    kubeContext?: string;
    /**
     * Mesh scope, current profile: whether the stack creates PeerAuthentication `default` (false when the mesh
     * already has a STRICT one that the stack did not create; see program/preflight.ts). Defaults to `true`.
     */
    createPeerAuthentication?: boolean;
    /**
     * Mesh scope, current profile, with `createPeerAuthentication`: `pulumi destroy` leaves PeerAuthentication
     * `default` in place (Pulumi's `retainOnDelete`), for a mesh whose other workloads now run under it.
     * Decided at `pulumi up`. Defaults to `false`.
     */
    keepPeerAuthenticationOnDestroy?: boolean;
}

/** MeshMutualTls's arguments checked (every problem, each under its field) and defaulted. */
function resolveMeshMutualTls(args: MeshMutualTlsArgs, opts?: pulumi.ComponentResourceOptions) {
    const a: MeshMutualTlsArgs = args ?? {};
    const profile: ApiProfileName = a.apiProfile ?? DEFAULTS.apiProfile;
    const meshNamespace = a.meshNamespace ?? DEFAULTS.meshNamespace;
    const scope = a.scope ?? MutualTlsScope.Workloads;
    const selector = a.selector ?? { "app.kubernetes.io/part-of": PART_OF };
    const problems: Problem[] = [...unknownFieldProblems("MeshMutualTls", args), ...dnsProblem("meshNamespace", meshNamespace, "label")];
    if (!(Object.values(ApiProfileName) as string[]).includes(profile))
        problems.push({ key: "apiProfile", value: profile, problem: "must be current or seed", fix: "use ApiProfileName.Current" });
    if (!(Object.values(MutualTlsScope) as string[]).includes(scope))
        problems.push({ key: "scope", value: scope, problem: "must be workloads or mesh", fix: "use MutualTlsScope.Workloads" });
    if (scope === MutualTlsScope.Workloads) {
        if (!Array.isArray(a.namespaces) || !a.namespaces.length)
            problems.push({
                key: "namespaces",
                value: a.namespaces,
                problem: "must list the namespaces of the pods (scope workloads)",
                fix: 'give e.g. ["shop"]',
            });
        else a.namespaces.forEach((n, i) => problems.push(...dnsProblem(`namespaces[${i}]`, n, "label")));
        problems.push(...selectorProblems("selector", selector));
    }
    // kubectl cannot use an explicit provider's kubeconfig: without a context naming that cluster,
    // the edit would go to whatever cluster the ambient kubeconfig points at.
    const explicitProvider = opts?.provider !== undefined || (opts?.providers !== undefined && Object.keys(opts.providers).length > 0);
    if (scope === MutualTlsScope.Mesh && profile === ApiProfileName.Seed && explicitProvider && !a.kubeContext)
        problems.push({
            key: "kubeContext",
            value: a.kubeContext,
            problem:
                "must name the provider's cluster: the seed profile edits the mesh ConfigMap with kubectl, which cannot use the kubeconfig of the provider passed in opts",
            fix: "give the kubeconfig context of that cluster (kubeContext), or use apiProfile current (a PeerAuthentication, created through the provider)",
        });
    return { a, profile, meshNamespace, scope, selector, problems };
}

export class MeshMutualTls extends pulumi.ComponentResource {
    constructor(name: string, args: MeshMutualTlsArgs, opts?: pulumi.ComponentResourceOptions) {
        const { a, profile, meshNamespace, scope, selector, problems } = resolveMeshMutualTls(args, opts);
        if (problems.length) throw argsError(`MeshMutualTls ${name}`, problems);
        super("mesh-ratelimit:index:MeshMutualTls", name, {}, opts);
        const s = { apiProfile: profile, mesh: { namespace: meshNamespace } };
        if (scope === MutualTlsScope.Workloads) {
            for (const ns of new Set(a.namespaces)) {
                new PeerAuthentication(
                    `${name}-${ns}`,
                    {
                        metadata: { name: STACK_PEER_AUTHENTICATION, namespace: ns, labels: stackLabels("mesh-mtls") },
                        spec: { selector: { matchLabels: { ...selector } }, mtls: { mode: "STRICT" } },
                    },
                    { parent: this },
                );
            }
        } else if (s.apiProfile === "current") {
            if (args.createPeerAuthentication !== false) {
                new PeerAuthentication(
                    "default",
                    { metadata: { name: "default", namespace: s.mesh.namespace, labels: stackLabels("mesh-mtls") }, spec: { mtls: { mode: "STRICT" } } },
                    { parent: this, retainOnDelete: args.keepPeerAuthenticationOnDestroy === true },
                );
            }
        } else {
            new MeshConfigSetting(
                `${name}-auth-policy`,
                {
                    namespace: s.mesh.namespace,
                    configMap: MESH_CONFIGMAP,
                    dataKey: MESH_CONFIG_KEY,
                    setting: AUTH_POLICY_KEY,
                    value: AUTH_POLICY_VALUE,
                    ...(args.kubeContext ? { kubeContext: args.kubeContext } : {}),
                },
                { parent: this },
            );
        }
        this.registerOutputs({});
    }
}
