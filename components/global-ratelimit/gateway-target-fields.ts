/**
 * The fields of GlobalRateLimit's `gateway`, each declared once (lib/field-decl.ts);
 * components/global-ratelimit/gateway-target-args.generated.ts is generated from this table (`npm run gen`).
 * gateway-target.ts runs the rules and reads the defaults; the fields checked with their siblings
 * (the pods by selector or by Gateway name, the virtual hosts with `allVirtualHosts`) stay checked
 * there. Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { ArgInterface, booleanRule, customRule, field } from "../../lib/field-decl";
import { dnsNameProblem, isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { DEFAULTS } from "../common/defaults";
import { t } from "../../lib/field-types";

/** The gateway's fields judged together (gateway-target.ts). */
export const GATEWAY_TARGET_CHECKS = {
    pods: crossCheck("gateway pods", ["selector", "gatewayApiName"], "one of selector, gatewayApiName, the name's pods in namespace"),
    hosts: crossCheck("gateway hosts", ["virtualHosts", "listenerPorts"], "each a `<host>:<port>` or a port, given unless allVirtualHosts"),
};

/** The fields of `GatewayTargetArgs`. */
export const GATEWAY_TARGET_FIELDS = {
    selector: field<Record<string, string>>({
        doc:
            "Labels of the gateway's pods, e.g. `{ istio: \"ingressgateway\" }` (a gateway deployment such as Istio's default one or the " +
            "istio/gateway Helm chart's). Give this or `gatewayApiName`.",
        type: t.map(t.string()),
        rule: checkedWith(GATEWAY_TARGET_CHECKS.pods, "pod labels"),
        goesTo: { object: "the EnvoyFilters' workloadSelector and the NetworkPolicy's pod selector" },
    }),
    gatewayApiName: field<string>({
        doc:
            "Name of a Kubernetes Gateway API `Gateway` (class `istio`) in `namespace`: the filters then target it (`targetRefs`) and reach " +
            "exactly its pods, whatever other gateways' labels are. Give this or `selector`.",
        type: t.string(),
        defaultNote: "none",
        rule: checkedWith(GATEWAY_TARGET_CHECKS.pods, "a DNS subdomain"),
        goesTo: { object: "the EnvoyFilters' targetRefs" },
    }),
    namespace: field({
        doc:
            "Namespace of the gateway's pods, where the EnvoyFilters are created. In Istio's root namespace (`istio-system` by default) a " +
            "selector-based filter applies to pods with those labels in **every** namespace: give the gateway pods a label of their own, or use " +
            "`gatewayApiName`. Required with `gatewayApiName` (the Gateway's namespace).",
        type: t.string(),
        default: DEFAULTS.gatewayNamespace as string,
        rule: customRule<string>("a DNS label", (key, value) =>
            isDnsName(value, "label") ? [] : [{ key, value, problem: dnsNameProblem("label"), fix: `use "${suggestedDnsName(value, "label")}"` }],
        ),
        goesTo: { object: "the EnvoyFilters' namespace" },
    }),
    virtualHosts: field<string[]>({
        doc:
            "Istio's names of the gateway's virtual hosts the rules act on, `<host>:<port>` as Istio builds them from your Gateway and " +
            "VirtualService/HTTPRoute hosts: `shop.example.com:80`, or `*:8080` for host `*`; the port is the Gateway server's). Only these " +
            "hosts are limited: other teams' hosts on the same gateway are never limited and never see this service's failures. A route " +
            "rule's `virtualHost` must be one of them; a route rule without one applies on each. Required unless `allVirtualHosts` is true.",
        type: t.list(t.string()),
        rule: checkedWith(GATEWAY_TARGET_CHECKS.hosts, "a list of `<host>:<port>`"),
        goesTo: { envoy: "the route patches' virtual host names" },
    }),
    listenerPorts: field<number[]>({
        doc:
            "The ports the gateway pods' listeners bind, where the rate-limit filter goes (only there). Istio binds a Gateway server's port " +
            "as it is, except when the gateway's Service has that port: then it binds the Service's `targetPort` (the default " +
            "istio-ingressgateway Service maps 80 to 8080, so a Gateway server on port 80 gives virtual hosts `<host>:80` on listener 8080). " +
            "Give the pod ports in that case, or the filter lands nowhere and the limits silently do not apply.",
        type: t.list(t.number()),
        defaultNote:
            "the ports of `virtualHosts` (right when the Gateway's port is the pods' own port, as for Istio's bookinfo gateway on 8080 and " +
            "for Gateway API gateways)",
        rule: checkedWith(GATEWAY_TARGET_CHECKS.hosts, "a non-empty list of ports"),
        goesTo: { envoy: "the rate-limit filter's listener match (portNumber)" },
    }),
    allVirtualHosts: field({
        doc:
            'Act on **every** virtual host of the gateway (Istio\'s empty name `""`) and put the rate-limit filter on every listener: other ' +
            "teams' hosts on the same gateway are then limited too, and fail with HTTP 500 when the service is down (`failureModeDeny`). " +
            "Only for a gateway you have to yourself.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { envoy: 'the route patches\' virtual host name `""` and every listener' },
    }),
};

/** The interface generated from this table (components/global-ratelimit/gateway-target-args.generated.ts). */
export const GATEWAY_TARGET_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "GatewayTargetArgs",
        doc: "The gateway the limits apply to: its pods, its namespace, the virtual hosts the rules may act on.",
        fields: GATEWAY_TARGET_FIELDS,
    },
];
