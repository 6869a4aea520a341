/**
 * GlobalRateLimit's gateway target: which gateway pods the filters reach (a label selector, or a
 * Gateway API Gateway by name), in which namespace, which virtual hosts the rules act on and which
 * listener ports the rate-limit filter goes on; checked, with every problem named.
 */
import { DEFAULTS } from "./defaults";
import { dnsProblem, portProblem, selectorProblems } from "./arg-checks";
import { booleanProblems } from "../lib/field-checks";
import { Problem } from "../lib/problems";
import { FilterTarget, GATEWAY_NAME_LABEL } from "../builders/envoy-filters";
import { RateLimitRuleArgs } from "../builders/rule-args";
import { RoutePatch } from "../builders/rate-limit-entries";
import { isGatewayHost } from "../lib/formats";

/** The gateway the limits apply to: its pods, its namespace, the virtual hosts the rules may act on. */
export interface GatewayTargetArgs {
    /**
     * Labels of the gateway's pods, e.g. `{ istio: "ingressgateway" }` (a gateway deployment such as
     * Istio's default one or the istio/gateway Helm chart's). Give this or `gatewayApiName`.
     */
    selector?: Record<string, string>;
    /**
     * Name of a Kubernetes Gateway API `Gateway` (class `istio`) in `namespace`: the filters then
     * target it (`targetRefs`) and reach exactly its pods, whatever other gateways' labels are. Give
     * this or `selector`. Defaults to none.
     */
    gatewayApiName?: string;
    /**
     * Namespace of the gateway's pods, where the EnvoyFilters are created. In Istio's root namespace
     * (`istio-system` by default) a selector-based filter applies to pods with those labels in
     * **every** namespace: give the gateway pods a label of their own, or use `gatewayApiName`.
     * Required with `gatewayApiName` (the Gateway's namespace). Defaults to `istio-system`.
     */
    namespace?: string;
    /**
     * Istio's names of the gateway's virtual hosts the rules act on, `<host>:<port>` as Istio builds
     * them from your Gateway and VirtualService/HTTPRoute hosts: `shop.example.com:80`, or `*:8080`
     * for host `*`; the port is the Gateway server's). Only these hosts are limited: other teams' hosts
     * on the same gateway are never limited and never see this service's failures. A route rule's
     * `virtualHost` must be one of them; a route rule without one applies on each. Required unless
     * `allVirtualHosts` is true.
     */
    virtualHosts?: string[];
    /**
     * The ports the gateway pods' listeners bind, where the rate-limit filter goes (only there).
     * Istio binds a Gateway server's port as it is, except when the gateway's Service has that port:
     * then it binds the Service's `targetPort` (the default istio-ingressgateway Service maps 80 to
     * 8080, so a Gateway server on port 80 gives virtual hosts `<host>:80` on listener 8080). Give the
     * pod ports in that case, or the filter lands nowhere and the limits silently do not apply.
     * Defaults to the ports of `virtualHosts` (right when the Gateway's port is the pods' own port, as
     * for Istio's bookinfo gateway on 8080 and for Gateway API gateways).
     */
    listenerPorts?: number[];
    /**
     * Act on **every** virtual host of the gateway (Istio's empty name `""`) and put the rate-limit
     * filter on every listener: other teams' hosts on the same gateway are then limited too, and fail
     * with HTTP 500 when the service is down (`failureModeDeny`). Only for a gateway you have to
     * yourself. Defaults to `false`.
     */
    allVirtualHosts?: boolean;
}

/** The gateway target, checked: which pods, where, which virtual hosts and listener ports. */
export interface ResolvedGateway {
    target: FilterTarget;
    /** Labels of the gateway's pods (the NetworkPolicy admits them). */
    podLabels: Record<string, string>;
    namespace: string;
    virtualHosts: string[];
    all: boolean;
    /** Listener ports of the rate-limit filter (empty: every listener). */
    ports: number[];
}

/** `<host>:<port>` with host `*`, `*.<domain>` or a DNS name, port 1..65535 (GlobalRateLimit checks its virtual hosts with it). */
export function isVirtualHostName(v: unknown): v is string {
    if (typeof v !== "string") return false;
    const m = /^(.+):(\d{1,5})$/.exec(v);
    return !!m && isGatewayHost(m[1]!) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

export function gatewayTargetOf(g: GatewayTargetArgs | undefined, problems: Problem[]): ResolvedGateway {
    const none: ResolvedGateway = { target: { selector: {} }, podLabels: {}, namespace: DEFAULTS.gatewayNamespace, virtualHosts: [], all: false, ports: [] };
    if (typeof g !== "object" || g === null) {
        problems.push({
            key: "gateway",
            value: g,
            problem: "is required",
            fix: 'give { selector: { istio: "ingressgateway" }, virtualHosts: ["shop.example.com:80"] }',
        });
        return none;
    }
    const { target, podLabels } = gatewayPods(g, problems);
    if (g.namespace !== undefined) problems.push(...dnsProblem("gateway.namespace", g.namespace, "label"));
    if (g.allVirtualHosts !== undefined) problems.push(...booleanProblems("gateway.allVirtualHosts", g.allVirtualHosts, false));
    const all = g.allVirtualHosts === true;
    const valid = gatewayVirtualHosts(g, all, problems).filter(isVirtualHostName);
    const ports = gatewayListenerPorts(g, all, valid, problems);
    return { target, podLabels, namespace: g.namespace ?? DEFAULTS.gatewayNamespace, virtualHosts: valid, all, ports };
}

/** Which pods the filters reach: a Gateway API Gateway by name, or a label selector. */
function gatewayPods(g: GatewayTargetArgs, problems: Problem[]): Pick<ResolvedGateway, "target" | "podLabels"> {
    if (g.gatewayApiName !== undefined && g.selector !== undefined) {
        problems.push({
            key: "gateway.gatewayApiName",
            value: g.gatewayApiName,
            problem: "and gateway.selector are both given; the filters target one or the other",
            fix: "remove gateway.selector (a Gateway API Gateway is targeted by name) or gateway.gatewayApiName",
        });
        return { target: { selector: {} }, podLabels: {} };
    }
    if (g.gatewayApiName !== undefined) {
        problems.push(...dnsProblem("gateway.gatewayApiName", g.gatewayApiName, "subdomain"));
        if (g.namespace === undefined)
            problems.push({
                key: "gateway.namespace",
                value: undefined,
                problem: "is required with gateway.gatewayApiName: the filters must live in the Gateway's namespace",
                fix: 'give the Gateway\'s namespace, e.g. "shop"',
            });
        // Istio labels the pods of a Gateway API Gateway with its name.
        return { target: { gatewayApiName: String(g.gatewayApiName) }, podLabels: { [GATEWAY_NAME_LABEL]: String(g.gatewayApiName) } };
    }
    problems.push(...selectorProblems("gateway.selector", g.selector));
    const selector = (g.selector ?? {}) as Record<string, string>;
    return { target: { selector }, podLabels: selector };
}

/** The virtual hosts as given (a list, each Istio's `<host>:<port>` once), or none when they are not a list. */
function gatewayVirtualHosts(g: GatewayTargetArgs, all: boolean, problems: Problem[]): string[] {
    if (g.virtualHosts != null && !Array.isArray(g.virtualHosts)) {
        problems.push({
            key: "gateway.virtualHosts",
            value: g.virtualHosts,
            problem: "must be a list of Istio's virtual host names <host>:<port>",
            fix: 'give e.g. ["shop.example.com:80"]',
        });
        return [];
    }
    const virtualHosts = g.virtualHosts ?? [];
    virtualHosts.forEach((v, i) => {
        if (!isVirtualHostName(v)) {
            problems.push({
                key: `gateway.virtualHosts[${i}]`,
                value: v,
                problem: "must be Istio's virtual host name <host>:<port> (host '*', '*.<domain>' or a DNS name; the port of the Gateway server)",
                fix: `use e.g. "${typeof v === "string" && isGatewayHost(v) ? `${v}:80` : "shop.example.com:80"}" (Istio silently ignores a patch that names no virtual host)`,
            });
        } else if (virtualHosts.indexOf(v) !== i) {
            problems.push({ key: `gateway.virtualHosts[${i}]`, value: v, problem: "appears twice", fix: "remove one of the two entries" });
        }
    });
    if (!virtualHosts.length && !all) {
        problems.push({
            key: "gateway.virtualHosts",
            value: g.virtualHosts,
            problem: "must name the gateway's virtual hosts to limit: without them the limits would reach every host on the gateway, other teams' included",
            fix: 'give e.g. ["shop.example.com:80"] (Istio\'s <host>:<port> for each host of your Gateway server), or set gateway.allVirtualHosts: true for a gateway you have to yourself',
        });
    }
    return virtualHosts;
}

/** The listener ports of the rate-limit filter: those given, else the valid virtual hosts' ports (none with allVirtualHosts: every listener). */
function gatewayListenerPorts(g: GatewayTargetArgs, all: boolean, valid: string[], problems: Problem[]): number[] {
    const ports = all ? [] : [...new Set(valid.map((v) => Number(v.slice(v.lastIndexOf(":") + 1))))];
    if (g.listenerPorts === undefined) return ports;
    if (!Array.isArray(g.listenerPorts) || !g.listenerPorts.length) {
        problems.push({
            key: "gateway.listenerPorts",
            value: g.listenerPorts,
            problem: "must be a non-empty list of ports",
            fix: "give e.g. [8080], or omit it for the virtual hosts' ports",
        });
        return ports;
    }
    g.listenerPorts.forEach((p, i) => problems.push(...portProblem(`gateway.listenerPorts[${i}]`, p)));
    if (!all) return [...new Set(g.listenerPorts)];
    problems.push({
        key: "gateway.listenerPorts",
        value: g.listenerPorts,
        problem: "has no effect with allVirtualHosts (the filter goes on every listener)",
        fix: "remove gateway.listenerPorts, or allVirtualHosts",
    });
    return ports;
}

/**
 * Route patches on named virtual hosts: a route rule's `virtualHost` must be one the gateway args
 * list; a route rule without one goes on each of them (on `""`, every virtual host, only when
 * `allVirtualHosts` is set and no list is given).
 */
export function routePatchesFor(patches: RoutePatch[], rules: RateLimitRuleArgs[], gw: ResolvedGateway, problems: Problem[]): RoutePatch[] {
    (Array.isArray(rules) ? rules : []).forEach((r, i) => {
        const vh = r?.route?.virtualHost;
        if (vh === undefined || !gw.virtualHosts.length) return;
        if (!gw.virtualHosts.includes(vh)) {
            problems.push({
                key: `rules[${i}].route.virtualHost`,
                value: vh,
                problem: `is not one of gateway.virtualHosts (${gw.virtualHosts.join(", ")}): Istio would silently ignore the patch, or it would act on a host these arguments do not vouch for`,
                fix: `use one of ${gw.virtualHosts.map((v) => JSON.stringify(v)).join(", ")}, or add it to gateway.virtualHosts`,
            });
        }
    });
    const out: RoutePatch[] = [];
    for (const p of patches) {
        if (p.virtualHost !== "") out.push(p);
        else if (gw.virtualHosts.length) for (const v of gw.virtualHosts) out.push({ ...p, virtualHost: v });
        else out.push(p);
    }
    return out;
}
