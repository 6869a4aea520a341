/**
 * GlobalRateLimit's gateway target: which gateway pods the filters reach (a label selector, or a
 * Gateway API Gateway by name), in which namespace, which virtual hosts the rules act on and which
 * listener ports the rate-limit filter goes on; checked, with every problem named.
 */
import { RULE_CHECKS } from "../rules/rule-fields";
import { bindCrossCheck } from "../../lib/cross-checks";
import { GatewayTargetArgs } from "./gateway-target-args.generated";
import { GATEWAY_TARGET_CHECKS, GATEWAY_TARGET_FIELDS } from "./gateway-target-fields";
import { dnsProblem, portProblem, selectorProblems } from "../common/arg-checks";
import { Resolved, givenProblems, withDefaults } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";
import { FilterTarget, GATEWAY_NAME_LABEL } from "../../builders/envoy-filters";
import { RateLimitRuleArgs } from "../../builders/rule-args";
import { RoutePatch } from "../../builders/rate-limit-entries";
import { isGatewayHost } from "../../lib/formats";

export { GatewayTargetArgs };

/**
 * The gateway target, checked: which pods, where (`namespace`, as declared), which virtual hosts and
 * listener ports; the pods, hosts and ports derived from the fields judged together.
 */
export type ResolvedGateway = Resolved<Pick<typeof GATEWAY_TARGET_FIELDS, "namespace">> & {
    readonly target: FilterTarget;
    /** Labels of the gateway's pods (the NetworkPolicy admits them). */
    readonly podLabels: Record<string, string>;
    /** The given virtual hosts that are well-formed. */
    readonly virtualHosts: string[];
    /** `allVirtualHosts`, its default filled in. */
    readonly all: boolean;
    /** Listener ports of the rate-limit filter (empty: every listener). */
    readonly ports: number[];
};

/** `<host>:<port>` with host `*`, `*.<domain>` or a DNS name, port 1..65535 (GlobalRateLimit checks its virtual hosts with it). */
export function isVirtualHostName(v: unknown): v is string {
    if (typeof v !== "string") return false;
    const m = /^(.+):(\d{1,5})$/.exec(v);
    return !!m && isGatewayHost(m[1]!) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

const F = GATEWAY_TARGET_FIELDS;

/** The gateway target checked (its problems pushed), its defaults filled in from the declarations. */
export function gatewayTargetOf(g: GatewayTargetArgs | undefined, problems: Problem[]): ResolvedGateway {
    const none: ResolvedGateway = { target: { selector: {} }, podLabels: {}, namespace: F.namespace.default, virtualHosts: [], all: false, ports: [] };
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
    problems.push(...givenProblems(F.namespace, "gateway.namespace", g.namespace));
    problems.push(...givenProblems(F.allVirtualHosts, "gateway.allVirtualHosts", g.allVirtualHosts));
    const d = withDefaults(F, g);
    // Only `true` turns it on (a value that is no switch is refused above, and taken as off).
    const all = d.allVirtualHosts === true;
    const valid = gatewayVirtualHosts(g, all, problems).filter(isVirtualHostName);
    const ports = gatewayListenerPorts(g, all, valid, problems);
    return { target, podLabels, namespace: d.namespace, virtualHosts: valid, all, ports };
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

/** A rule route's `virtualHost` against the gateway's (rule-fields.ts RULE_CHECKS), and the gateway's own (gateway-target-fields.ts). */
bindCrossCheck(RULE_CHECKS.virtualHost, "gateway-target.ts routePatchesFor", routePatchesFor);
bindCrossCheck(GATEWAY_TARGET_CHECKS.pods, "gateway-target.ts gatewayPods", gatewayPods);
bindCrossCheck(GATEWAY_TARGET_CHECKS.hosts, "gateway-target.ts gatewayVirtualHosts, gatewayListenerPorts", gatewayVirtualHosts);
bindCrossCheck(GATEWAY_TARGET_CHECKS.hosts, "gateway-target.ts gatewayVirtualHosts, gatewayListenerPorts", gatewayListenerPorts);
