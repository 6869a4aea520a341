/**
 * MeshMutualTls's fields, each declared once (lib/field-decl.ts): their documentation, default, rule
 * and where they go. MeshMutualTls's resolve (mesh-mtls.ts) runs these rules and reads these
 * defaults, and components/mesh-mtls/args.generated.ts is generated from this table (`npm run gen`).
 * The stack sets none of them by a key of its own: its keys set MeshRateLimit's fields (`mesh.*`). Pure.
 */
import { ArgInterface, Rule, customRule, field, oneOfRule, takenAsGiven } from "../../lib/field-decl";
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { PART_OF } from "../../lib/common";
import { Problem } from "../../lib/problems";
import { dnsProblem } from "../common/arg-checks";
import { DEFAULTS } from "../common/defaults";
import { LABELS_RULE, dnsRule } from "../local-ratelimit/fields";
import { ApiProfileName, MutualTlsScope } from "../common/mesh-enums";
import { t } from "../../lib/field-types";

/** One of an enum's values, refused as "must be a or b" with the default (as docs show it) for the fix. */
function choiceRule<E extends Readonly<Record<string, string>>>(values: E, enumName: string): Rule<E[keyof E]> {
    const base = oneOfRule(values, enumName);
    const all: readonly string[] = Object.values(values);
    return {
        ...base,
        problems: (path, value, fallback): Problem[] =>
            typeof value === "string" && all.includes(value)
                ? []
                : [{ key: path, value, problem: `must be ${all.join(" or ")}`, fix: `use ${base.show!(fallback ?? (all[0] as E[keyof E]))}` }],
    };
}

/** `namespaces`: a non-empty list of DNS labels. */
const namespacesRule = customRule<string[]>("a non-empty list of DNS labels", (path, value): Problem[] => {
    if (!Array.isArray(value) || !value.length)
        return [{ key: path, value, problem: "must list the namespaces of the pods (scope workloads)", fix: 'give e.g. ["shop"]' }];
    return value.flatMap((n, i) => dnsProblem(`${path}[${i}]`, n, "label"));
});

/** Pod labels, a default shown as the object it is. */
const selectorRule: Rule<Record<string, string>> = {
    ...LABELS_RULE,
    show: (labels) =>
        `{ ${Object.entries(labels)
            .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
            .join(", ")} }`,
};

/** MeshMutualTls's fields, in the interface's order. */
/** `kubeContext` with the scope, the profile and the options (mesh-mtls.ts `resolveMeshMutualTls`). */
export const MTLS_CONTEXT_CHECK = crossCheck("seed context", ["kubeContext"], "required for the seed profile at mesh scope when a provider is passed in opts");

export const MTLS_FIELDS = {
    scope: field<MutualTlsScope>({
        doc:
            "`MutualTlsScope.Workloads`: STRICT for the pods labelled `selector` in `namespaces` only. `MutualTlsScope.Mesh`: STRICT for the " +
            "whole mesh (every team's workloads).",
        type: t.enum(MutualTlsScope, "MutualTlsScope"),
        default: MutualTlsScope.Workloads,
        rule: choiceRule(MutualTlsScope, "MutualTlsScope"),
        goesTo: { object: "a PeerAuthentication per namespace of `namespaces`, or the mesh-wide policy" },
    }),
    namespaces: field<string[]>({
        doc: "Workloads scope: the namespaces holding the pods (one PeerAuthentication each). Required with that scope.",
        type: t.list(t.string()),
        rule: namespacesRule,
        goesTo: { object: "the namespaces of the PeerAuthentications `mesh-ratelimit-mtls`" },
    }),
    selector: field<Record<string, string>>({
        doc: "Workloads scope: labels of the pods.",
        type: t.map(t.string()),
        default: { "app.kubernetes.io/part-of": PART_OF },
        rule: selectorRule,
        goesTo: { object: "the PeerAuthentications' selector.matchLabels" },
    }),
    apiProfile: field<ApiProfileName>({
        doc: "Mesh scope: `current`: PeerAuthentication `default` STRICT; `seed`: `authPolicy: MUTUAL_TLS` in the mesh ConfigMap.",
        type: t.enum(ApiProfileName, "ApiProfileName"),
        default: DEFAULTS.apiProfile,
        rule: choiceRule(ApiProfileName, "ApiProfileName"),
        goesTo: { object: "PeerAuthentication `default` (current), or the mesh ConfigMap's `authPolicy` (seed)" },
    }),
    meshNamespace: field<string>({
        doc: "Istio's root namespace (PeerAuthentication, mesh ConfigMap `istio`).",
        type: t.string(),
        default: DEFAULTS.meshNamespace,
        rule: dnsRule("label"),
        goesTo: { object: "the namespace of PeerAuthentication `default` and of the mesh ConfigMap edited" },
    }),
    kubeContext: field<string>({
        doc: "kubectl context for the seed profile's ConfigMap edit (the provider's `kubernetes:context`).",
        type: t.string(),
        defaultNote: "the current context; required when a provider is passed in opts (kubectl cannot use its kubeconfig)",
        rule: checkedWith(MTLS_CONTEXT_CHECK, "a kubeconfig context's name"),
        goesTo: { object: "kubectl's --context for the mesh ConfigMap edit" },
    }),
    createPeerAuthentication: field<boolean>({
        doc:
            "Mesh scope, current profile: whether the stack creates PeerAuthentication `default` (false when the mesh already has a STRICT one " +
            "that the stack did not create; see program/preflight.ts).",
        type: t.boolean(),
        default: true,
        rule: takenAsGiven("a boolean (only `false` turns it off)"),
        goesTo: { object: "PeerAuthentication `default` in `meshNamespace`" },
    }),
    keepPeerAuthenticationOnDestroy: field<boolean>({
        doc:
            "Mesh scope, current profile, with `createPeerAuthentication`: `pulumi destroy` leaves PeerAuthentication `default` in place " +
            "(Pulumi's `retainOnDelete`), for a mesh whose other workloads now run under it. Decided at `pulumi up`.",
        type: t.boolean(),
        default: false,
        rule: takenAsGiven("a boolean (only `true` turns it on)"),
        goesTo: { object: "PeerAuthentication `default`'s retainOnDelete" },
    }),
};

/** The argument interface generated from this table (components/mesh-mtls/args.generated.ts). */
export const MTLS_ARG_INTERFACES: readonly ArgInterface[] = [{ name: "MeshMutualTlsArgs", doc: "", fields: MTLS_FIELDS }];

/** Where the generated interface's field types come from. */
export const MTLS_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../common/mesh-enums": ["ApiProfileName", "MutualTlsScope"],
};
