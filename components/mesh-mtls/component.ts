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
import { Problem } from "../../lib/problems";
import * as pulumi from "@pulumi/pulumi";
import { stackLabels } from "../../lib/common";
import { Resolved, fieldProblems, withDefaults } from "../../lib/field-decl";
import { deepFreeze } from "../../lib/frozen";
import { PeerAuthentication } from "../common/crds";
import { argsError } from "../common/arg-checks";
import { componentFieldProblems } from "../common/arg-checks";
import { MTLS_ARG_TYPES } from "./arg-types";
import { MeshMutualTlsArgs } from "./args.generated";
import { MTLS_CONTEXT_CHECK, MTLS_FIELDS } from "./fields";
import { bindCrossCheck } from "../../lib/cross-checks";
import { restoredText, setTopLevel } from "../../builders/mesh-config-text";
import { ApiProfileName, MutualTlsScope } from "../common/mesh-enums";

export { MeshMutualTlsArgs };

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

/** MeshMutualTls's arguments resolved once: read-only, every default filled in. */
export type ResolvedMeshMutualTls = Resolved<Omit<typeof MTLS_FIELDS, "namespaces" | "selector">> & {
    /** The namespaces of the pods (scope workloads; none with scope mesh). */
    readonly namespaces: readonly string[];
    readonly selector: Readonly<Record<string, string>>;
};

/**
 * Every problem of MeshMutualTls's arguments, each under its field (the declared rules of
 * mesh-mtls-fields.ts, `namespaces` and `selector` with scope workloads only), or the resolved
 * value (pure; exported for the tests).
 */
export function resolveMeshMutualTls(args: MeshMutualTlsArgs, opts?: pulumi.ComponentResourceOptions): { problems: Problem[]; value?: ResolvedMeshMutualTls } {
    const a: MeshMutualTlsArgs = args ?? {};
    const F = MTLS_FIELDS;
    const { scope, apiProfile: profile, selector, meshNamespace, createPeerAuthentication, keepPeerAuthenticationOnDestroy } = withDefaults(F, a);
    // A null is taken as not given (its default), as `??` always took it.
    const problems: Problem[] = [
        ...componentFieldProblems(MTLS_ARG_TYPES, "MeshMutualTls", args),
        ...fieldProblems(F.meshNamespace, "meshNamespace", a.meshNamespace ?? undefined),
        ...fieldProblems(F.apiProfile, "apiProfile", a.apiProfile ?? undefined),
        ...fieldProblems(F.scope, "scope", a.scope ?? undefined),
        ...fieldProblems(F.kubeContext, "kubeContext", a.kubeContext),
        ...fieldProblems(F.createPeerAuthentication, "createPeerAuthentication", a.createPeerAuthentication),
        ...fieldProblems(F.keepPeerAuthenticationOnDestroy, "keepPeerAuthenticationOnDestroy", a.keepPeerAuthenticationOnDestroy),
    ];
    if (scope === MutualTlsScope.Workloads)
        problems.push(...F.namespaces.rule.problems("namespaces", a.namespaces, undefined), ...fieldProblems(F.selector, "selector", a.selector ?? undefined));
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
    if (problems.length) return { problems };
    const value: ResolvedMeshMutualTls = {
        scope,
        namespaces: scope === MutualTlsScope.Workloads ? [...new Set(a.namespaces)] : [],
        selector: { ...selector },
        apiProfile: profile,
        meshNamespace,
        ...(a.kubeContext ? { kubeContext: a.kubeContext } : {}),
        // Taken as given (not checked): only `false` turns the first off, only `true` the second on.
        createPeerAuthentication: createPeerAuthentication !== false,
        keepPeerAuthenticationOnDestroy: keepPeerAuthenticationOnDestroy === true,
    };
    return { problems, value: deepFreeze(value) };
}

/** `kubeContext`'s cross-field check (mesh-mtls-fields.ts). */
bindCrossCheck(MTLS_CONTEXT_CHECK, "mesh-mtls.ts resolveMeshMutualTls", resolveMeshMutualTls);

export class MeshMutualTls extends pulumi.ComponentResource {
    constructor(name: string, args: MeshMutualTlsArgs, opts?: pulumi.ComponentResourceOptions) {
        const { problems, value } = resolveMeshMutualTls(args, opts);
        if (problems.length) throw argsError(`MeshMutualTls ${name}`, problems);
        super("mesh-ratelimit:index:MeshMutualTls", name, {}, opts);
        const v = value!;
        if (v.scope === MutualTlsScope.Workloads) {
            for (const ns of v.namespaces) {
                new PeerAuthentication(
                    `${name}-${ns}`,
                    {
                        metadata: { name: STACK_PEER_AUTHENTICATION, namespace: ns, labels: stackLabels("mesh-mtls") },
                        spec: { selector: { matchLabels: { ...v.selector } }, mtls: { mode: "STRICT" } },
                    },
                    { parent: this },
                );
            }
        } else if (v.apiProfile === ApiProfileName.Current) {
            if (v.createPeerAuthentication) {
                new PeerAuthentication(
                    "default",
                    { metadata: { name: "default", namespace: v.meshNamespace, labels: stackLabels("mesh-mtls") }, spec: { mtls: { mode: "STRICT" } } },
                    { parent: this, retainOnDelete: v.keepPeerAuthenticationOnDestroy },
                );
            }
        } else {
            new MeshConfigSetting(
                `${name}-auth-policy`,
                {
                    namespace: v.meshNamespace,
                    configMap: MESH_CONFIGMAP,
                    dataKey: MESH_CONFIG_KEY,
                    setting: AUTH_POLICY_KEY,
                    value: AUTH_POLICY_VALUE,
                    ...(v.kubeContext ? { kubeContext: v.kubeContext } : {}),
                },
                { parent: this },
            );
        }
        this.registerOutputs({});
    }
}
