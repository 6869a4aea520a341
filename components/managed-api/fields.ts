/**
 * ManagedApi's fields, each declared once (lib/field-decl.ts): documentation, default, rule, where
 * the value goes and the stack's key. The resolve (managed-api-resolve.ts) and MeshRateLimit's
 * checks run these rules and read these defaults, and components/managed-api/args.generated.ts is generated
 * from these tables (`npm run gen`). Each rule has one message and a fix in every style;
 * MeshRateLimit reports them under `managedApi.`. Pure.
 */
import { isDnsName } from "../../lib/dns-names";
import { ArgInterface, customRule, dnsNameRule, field, oneOfRule, takenAsGiven } from "../../lib/field-decl";
import { fieldProblem } from "../../lib/field-checks";
import { Fix, FixStyle } from "../../lib/fix-style";
import { isCidr } from "../../lib/formats";
import { Problem } from "../../lib/problems";
import { DEFAULTS } from "../common/defaults";
import { ApiProfileName, EspPortModeName } from "../common/mesh-enums";
import { t } from "../../lib/field-types";

const EXAMPLE_SERVICE = "echo-api.endpoints.MY_PROJECT.cloud.goog";
const EXAMPLE_RANGES = "10.4.0.0/14,10.7.240.0/20";

/** What else fixes a required field, joined to its fix (nothing when there is no alternative). */
function orAlternative(alternative: Fix | undefined): (s: FixStyle) => string {
    return (s) => (alternative === undefined ? "" : `, or ${typeof alternative === "string" ? alternative : alternative(s)}`);
}

/** `serviceName`: required, the Cloud Endpoints service ESP serves (a DNS name). `alternative`: what else fixes it when missing. */
export function espServiceNameProblems(serviceName: unknown, alternative?: Fix): Problem[] {
    const or = orAlternative(alternative);
    if (serviceName === undefined || serviceName === "")
        return [
            fieldProblem(
                "serviceName",
                undefined,
                "is required: ESP needs the Cloud Endpoints service it serves (--service)",
                (s) => `${s.set("serviceName", EXAMPLE_SERVICE)}${or(s)}`,
            ),
        ];
    return isDnsName(serviceName, "subdomain")
        ? []
        : [fieldProblem("serviceName", serviceName, `must be a DNS name such as ${EXAMPLE_SERVICE}`, (s) => s.set("serviceName", EXAMPLE_SERVICE))];
}

/** `includeIpRanges`: required (the cluster's pod and service CIDRs cannot be guessed), each a CIDR. `alternative`: what else fixes it when missing. */
export function ipRangesProblems(ranges: unknown, alternative?: Fix): Problem[] {
    const or = orAlternative(alternative);
    if (ranges === undefined || (Array.isArray(ranges) && ranges.length === 0) || ranges === "")
        return [
            fieldProblem(
                "includeIpRanges",
                undefined,
                "is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)",
                (s) => `${s.set("includeIpRanges", EXAMPLE_RANGES)}   (your cluster's pod and service CIDRs)${or(s)}`,
            ),
        ];
    const list = Array.isArray(ranges) ? ranges : [ranges];
    const bad = list.filter((c) => typeof c !== "string" || !isCidr(c));
    const shown = bad
        .map(String)
        .filter((c) => c.replace(/[\s,]/g, ""))
        .join(", ");
    return bad.length
        ? [
              fieldProblem(
                  "includeIpRanges",
                  ranges,
                  `has invalid CIDR(s): ${shown || "(empty)"}`,
                  (s) => `${s.set("includeIpRanges", EXAMPLE_RANGES)}   (your cluster's pod and service CIDRs)`,
              ),
          ]
        : [];
}

/** A URL path: starting with '/', without spaces. */
function urlPathProblems(path: string, value: unknown): Problem[] {
    const v = String(value);
    return typeof value === "string" && value.startsWith("/") && !/\s/.test(value)
        ? []
        : [
              fieldProblem(path, value, "must be a URL path starting with '/' and without spaces", (s) =>
                  s.set(path, `/${v.replace(/^\/*/, "").replace(/\s+/g, "")}`),
              ),
          ];
}

/** Where ESP runs and how it is reached (ManagedApi's, and MeshRateLimit's `managedApi`). */
export const MANAGED_API_OPTIONS_FIELDS = {
    namespace: field({
        doc:
            "Namespace of ESP, the echo backend and the Ingress (must exist). ESP's image runs as root, so it meets Pod Security `baseline` only: a " +
            "namespace of its own lets the others enforce `restricted` (docs/security.md, Pod Security).",
        type: t.string(),
        default: "default",
        defaultNote: "; MeshRateLimit's to `bookinfo.namespace`",
        rule: dnsNameRule("label"),
        goesTo: { object: "the managed API's objects' namespace" },
        stackKey: "managedApiNamespace",
        stackGroup: "managed-api",
    }),
    serviceAccountSecret: field<string>({
        doc: "Name of an existing Secret with key `service-account-creds.json`, mounted for ESP off GKE.",
        type: t.string(),
        defaultNote: "none",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "a volume of ESP's Deployment" },
        stackKey: "espServiceAccountSecret",
        stackGroup: "managed-api",
    }),
    portMode: field({
        doc: "`http`: Service port 80 → 8081 named `http` (mesh mutual TLS, spec 2.9). `tcp`: named `tcp`, the sidecar passes bytes through (spec 5.4, not recommended).",
        type: t.enum(EspPortModeName, "EspPortModeName"),
        default: EspPortModeName.Http,
        rule: oneOfRule(EspPortModeName, "EspPortModeName"),
        goesTo: { object: "the name of ESP's Service port" },
        stackKey: "espPortMode",
        stackGroup: "managed-api",
    }),
    ingressName: field({
        doc: "Name of the managed API's Ingress (spec `<ingress_name>`).",
        type: t.string(),
        default: "simple-ingress",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "the Ingress's name" },
        stackKey: "ingressName",
        stackGroup: "managed-api",
    }),
    ingressClassName: field({
        doc:
            "Ingress class Istio serves. `seed` profile: the `kubernetes.io/ingress.class` annotation (Istio serves it when it equals the mesh config's " +
            "`ingressClass`, `istio` by default). `current`: the Ingress's class; an IngressClass of this name with controller " +
            "`istio.io/ingress-controller` is created only when the cluster has none (`createIngressClass`), and an existing one is left alone.",
        type: t.string(),
        default: "istio",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "the Ingress's class (and the IngressClass's name)" },
        stackKey: "ingressClassName",
        stackGroup: "managed-api",
    }),
    ingressPath: field({
        doc: "Path prefix the Ingress routes to ESP.",
        type: t.string(),
        default: "/echo",
        rule: customRule<string>("a URL path", (p, v) => urlPathProblems(p, v)),
        goesTo: { object: "the Ingress rule's path" },
        stackKey: "ingressPath",
        stackGroup: "managed-api",
    }),
    espImage: field({
        doc: "ESP image: a pinned release of ESP v1 (the floating `:1` tag would change under a running stack).",
        type: t.string(),
        default: "gcr.io/endpoints-release/endpoints-runtime:1.57.0",
        rule: takenAsGiven<string>("an image reference"),
        goesTo: { object: "ESP's container image" },
        stackKey: "espImage",
        stackGroup: "managed-api",
    }),
    echoImage: field({
        doc: "Echo backend image (listens on 8080).",
        type: t.string(),
        default: "gcr.io/google-samples/echo-python:1.0",
        rule: takenAsGiven<string>("an image reference"),
        goesTo: { object: "the echo backend's container image" },
        stackKey: "echoImage",
        stackGroup: "managed-api",
    }),
};

/** ManagedApi's own fields, beyond its options. */
export const MANAGED_API_ARGS_FIELDS = {
    serviceName: field<string>({
        doc: "Cloud Endpoints service name ESP serves (`--service`), e.g. `echo-api.endpoints.PROJECT.cloud.goog`.",
        type: t.string(),
        required: true,
        rule: customRule<string>("a DNS name", (_p, v) => espServiceNameProblems(v)),
        goesTo: { object: "ESP's `--service` argument" },
    }),
    includeIpRanges: field<string[]>({
        doc: "The cluster's pod and service CIDRs: only these go through the sidecar, so ESP reaches Google Service Control directly.",
        type: t.list(t.string()),
        required: true,
        rule: customRule<string[]>("a list of CIDRs", (_p, v) => ipRangesProblems(v)),
        goesTo: { object: "the pod's `traffic.sidecar.istio.io/includeOutboundIPRanges` annotation" },
    }),
    apiProfile: field({
        doc: "`current`: networking.k8s.io/v1 Ingress and an IngressClass; `seed`: extensions/v1beta1 with the class annotation.",
        type: t.enum(ApiProfileName, "ApiProfileName"),
        default: DEFAULTS.apiProfile as ApiProfileName,
        rule: oneOfRule(ApiProfileName, "ApiProfileName"),
        goesTo: { object: "the Ingress's API version" },
    }),
    createIngressClass: field({
        doc:
            "`current` profile: whether the stack creates IngressClass `<ingressClassName>` (false when the cluster already has one for Istio that the " +
            "stack did not create; see program/preflight.ts).",
        type: t.boolean(),
        default: true,
        rule: takenAsGiven<boolean>("true or false (anything but `false` is true)"),
        goesTo: { object: "an IngressClass" },
    }),
    keepIngressClassOnDestroy: field({
        doc:
            "`current` profile, with `createIngressClass`: `pulumi destroy` leaves the IngressClass in place (Pulumi's `retainOnDelete`), for a class " +
            "that other Ingresses use. Decided at `pulumi up`.",
        type: t.boolean(),
        default: false,
        rule: takenAsGiven<boolean>("true or false (anything but `true` is false)"),
        goesTo: { object: "the IngressClass's `retainOnDelete`" },
    }),
    awaitRollout: field({
        doc: "Wait for the Deployment to become ready.",
        type: t.boolean(),
        default: DEFAULTS.awaitRollout as boolean,
        rule: takenAsGiven<boolean>("true or false"),
        goesTo: { object: "the Deployment's pulumi.com/skipAwait annotation" },
    }),
};

/** The argument interfaces generated from these tables (components/managed-api/args.generated.ts), in the file's order. */
export const MANAGED_API_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "ManagedApiOptions",
        doc: "Where ESP runs and how it is reached: ManagedApi's arguments and MeshRateLimit's `managedApi`. Each field documented here once.",
        fields: MANAGED_API_OPTIONS_FIELDS,
    },
    { name: "ManagedApiArgs", doc: "", extends: "ManagedApiOptions", fields: MANAGED_API_ARGS_FIELDS },
];

/** Where the generated interfaces' field types come from. */
export const MANAGED_API_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../common/mesh-enums": ["ApiProfileName", "EspPortModeName"],
};
