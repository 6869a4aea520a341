/**
 * Bookinfo's fields, each declared once (lib/field-decl.ts): the plain ones with their
 * documentation, default, rule, where they go and the stack's key; `routes` with its documentation
 * and type (its default is the specification's split, built from the stack's paths). The resolve
 * (bookinfo-resolve.ts) reads these rules and defaults, MeshRateLimit's `bookinfo` takes the same
 * defaults, and components/bookinfo/args.generated.ts is generated from these tables (`npm run gen`). Pure.
 */
import { ArgInterface, customRule, dnsNameRule, field, nested, oneOfRule, wholeNumberRule, takenAsGiven } from "../../lib/field-decl";
import { isGatewayHost } from "../../lib/formats";
import { selectorProblems } from "../common/arg-checks";
import { DEFAULTS } from "../common/defaults";
import { GatewayHostScope, MeshMode } from "../common/mesh-enums";
import { t } from "../../lib/field-types";

/** The sample's names, hosts and routes (Bookinfo's, and MeshRateLimit's `bookinfo`). */
export const BOOKINFO_OPTIONS_FIELDS = {
    namespace: field({
        doc:
            "Namespace of bookinfo (must exist; the pods ask for a sidecar themselves). In MeshRateLimit also the local bucket's EnvoyFilter's, and by " +
            "default the managed API's; the rate-limit service and Redis go to `global.namespace`.",
        type: t.string(),
        default: "default",
        rule: dnsNameRule("label"),
        goesTo: { object: "the sample's objects' namespace" },
        stackKey: "workloadNamespace",
        stackGroup: "names",
    }),
    version: field({
        doc: "Tag of the `docker.io/istio/examples-bookinfo-*` images.",
        type: t.string(),
        default: "1.20.2",
        rule: customRule<string>("an image tag", (p, v, fb) =>
            typeof v === "string" && /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(v)
                ? []
                : [{ key: p, value: v, problem: "must be an image tag", fix: `use "${fb}"` }],
        ),
        goesTo: { object: "the tag of the sample's images" },
        stackKey: "bookinfoVersion",
        stackGroup: "operations",
    }),
    gatewayName: field({
        doc: "Name of bookinfo's Gateway.",
        type: t.string(),
        default: "bookinfo-gateway",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "the Gateway's name (what the VirtualService's `gateways` names)" },
        stackKey: "gatewayName",
        stackGroup: "names",
    }),
    gatewayPort: field({
        doc:
            "Port of the Gateway's HTTP server; Istio names its virtual hosts `<host>:<gatewayPort>`, and the rate-limit filter goes on this listener port " +
            "only. It must be a port the gateway pods bind: when the gateway's Service has this port, Istio binds its `targetPort` instead (the default " +
            "istio-ingressgateway Service maps 80 to 8080 and 443 to 8443), and the filter would land nowhere. 8080, as in the specification, is the pods' own port.",
        type: t.number(),
        default: 8080,
        rule: wholeNumberRule({ min: 1, max: 65535 }),
        goesTo: { object: "the Gateway's server port (and the virtual hosts' names)" },
        stackKey: "gatewayPort",
        stackGroup: "names",
    }),
    hosts: field({
        doc:
            "Hosts of bookinfo's Gateway and VirtualService (spec 2.5: `*`). The gateway patches name exactly their virtual hosts `<host>:<gatewayPort>` " +
            "(Istio's names), so another team's host on the same gateway is never limited. The Gateway's server takes them as `<namespace>/<host>`, " +
            "admitting only the VirtualServices of `namespace` (see `gatewayHostScope`).",
        type: t.list(t.string()),
        default: ["*"] as string[],
        rule: {
            ...customRule<string[]>("a non-empty list of hosts", (p, v) =>
                Array.isArray(v) && v.length && v.every((h) => typeof h === "string" && isGatewayHost(h))
                    ? []
                    : [
                          {
                              key: p,
                              value: v,
                              problem: "must be a non-empty list of hosts ('*', '*.<domain>' or DNS names, no port)",
                              fix: 'use e.g. ["bookinfo.example.com"], or omit it for ["*"]',
                          },
                      ],
            ),
            show: (v) => JSON.stringify(v),
        },
        goesTo: { object: "the hosts of the Gateway's server and of the VirtualService" },
        stackKey: "gatewayHosts",
        stackGroup: "names",
    }),
    gatewayHostScope: field({
        doc:
            "Which VirtualServices bookinfo's Gateway admits. `own-namespace`: only those of `namespace` (server hosts `<namespace>/<host>`, `default/*` by " +
            "default; the virtual host is still `*:<gatewayPort>`), so no other namespace can bind a host of its own to the Gateway and reach the sample " +
            "around the limits. `any-namespace`: spec 2.5 literally, server hosts as given: a VirtualService of **any namespace** can bind a host of its " +
            "own, and Istio gives that host a virtual host of its own without the limits, a side door to productpage (MeshRateLimit's `pulumi preview` " +
            "refuses when one exists). Only for a gateway the stack has to itself.",
        type: t.enum(GatewayHostScope, "GatewayHostScope"),
        default: GatewayHostScope.OwnNamespace,
        rule: oneOfRule(GatewayHostScope, "GatewayHostScope"),
        goesTo: { object: "the namespace part of the Gateway's server hosts" },
        stackKey: "gatewayHostScope",
        stackGroup: "sharing",
    }),
    virtualServiceName: field({
        doc: "Name of bookinfo's VirtualService (spec `<virtual_service_name>`).",
        type: t.string(),
        default: "bookinfo",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "the VirtualService's name" },
        stackKey: "virtualServiceName",
        stackGroup: "names",
    }),
    routes: nested({
        doc:
            "The VirtualService's HTTP routes to productpage, each `{name?, exact?, prefix?}`. Defaults to the specification's split (page, login, " +
            "logout, static; then `api` for the API prefix); MeshRateLimit's variant B: one route with every match.",
        type: t.list(t.ref("HttpRouteArgs")),
    }),
};

/** Labels as docs show them (`{ istio: "ingressgateway" }`). */
function shownLabels(labels: Readonly<Record<string, string>>): string {
    return `{ ${Object.entries(labels)
        .map(([k, v]) => `${k}: "${v}"`)
        .join(", ")} }`;
}

/** Bookinfo's own fields, beyond its options. */
export const BOOKINFO_ARGS_FIELDS = {
    gatewaySelector: field({
        doc: "Labels of the ingress gateway pods the Gateway selects.",
        type: t.map(t.string()),
        default: { istio: "ingressgateway" } as Record<string, string>,
        rule: { ...customRule<Record<string, string>>("pod labels", (p, v) => selectorProblems(p, v)), show: shownLabels },
        goesTo: { object: "the Gateway's `selector`" },
    }),
    localStatsApp: field({
        doc: "`app` label of the workload whose sidecar exports the local limiter's counters.",
        type: t.string(),
        default: "productpage",
        rule: takenAsGiven<string>("a label value"),
        goesTo: { object: "the productpage Deployment's sidecar stats annotation" },
    }),
    awaitRollout: field({
        doc: "Wait for the Deployments to become ready.",
        type: t.boolean(),
        default: DEFAULTS.awaitRollout as boolean,
        rule: takenAsGiven<boolean>("true or false"),
        goesTo: { object: "the Deployments' pulumi.com/skipAwait annotation" },
    }),
    meshMode: field<MeshMode>({
        doc:
            "`MeshMode.Sidecar`: every pod gets a sidecar and the Gateway selects `gatewaySelector`'s pods. `MeshMode.Ambient`: every pod is " +
            "enrolled in ambient mode (`istio.io/dataplane-mode: ambient`, no sidecar), and the ingress is a Gateway API `Gateway` named " +
            "`gatewayName` (class `istio`) in `gatewayApiNamespace`, whose pods the Gateway selects by the label Istio gives them.",
        type: t.enum(MeshMode, "MeshMode"),
        default: MeshMode.Sidecar,
        rule: oneOfRule(MeshMode, "MeshMode"),
        goesTo: { object: "the pods' mesh labels, the Gateway's `selector`, and on ambient the Gateway API Gateway" },
    }),
    localWaypoint: field<string>({
        doc:
            "`MeshMode.Ambient`: the waypoint that serves `localStatsApp`'s Service (where the local bucket sits): the Service gets " +
            '`istio.io/use-waypoint: <name>` and `istio.io/ingress-use-waypoint: "true"`, so in-mesh and ingress requests both pass it.',
        type: t.string(),
        defaultNote: "none: no Service is served by a waypoint",
        rule: dnsNameRule("label"),
        goesTo: { object: "the Service's istio.io/use-waypoint and istio.io/ingress-use-waypoint labels" },
    }),
    gatewayApiNamespace: field({
        doc: "`MeshMode.Ambient`: namespace of the Gateway API Gateway (and so of its pods).",
        type: t.string(),
        default: DEFAULTS.gatewayNamespace as string,
        rule: dnsNameRule("label"),
        goesTo: { object: "the Gateway API Gateway's namespace" },
    }),
};

/** The argument interfaces generated from these tables (components/bookinfo/args.generated.ts), in the file's order. */
export const BOOKINFO_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "BookinfoOptions",
        doc: "The sample's names, hosts and routes: Bookinfo's arguments, and MeshRateLimit's `bookinfo` (which adds `mode`). Each field documented here once.",
        fields: BOOKINFO_OPTIONS_FIELDS,
    },
    { name: "BookinfoArgs", doc: "", extends: "BookinfoOptions", fields: BOOKINFO_ARGS_FIELDS },
];

/** Where the generated interfaces' field types come from. */
export const BOOKINFO_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../common/mesh-enums": ["GatewayHostScope", "HttpRouteArgs", "MeshMode"],
};
