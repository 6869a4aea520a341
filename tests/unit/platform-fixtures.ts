/** Shared inputs of the platform tests: the example of a platform team's limits. */
import { LimitUnit } from "../../builders/rule-args";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { K8sObject } from "../../lib/k8s-object";

const M = LimitUnit.Minute;
export const GW = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };

/** The example: 1,000 a minute per client and a catch-all per path by default, 10,000 a minute per client on top. */
export const PLATFORM: PlatformRateLimitArgs = {
    gateway: GW,
    namespace: "platform",
    defaults: {
        rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 1000, unit: M }],
        perPath: { eachPath: { requestsPerUnit: 600, unit: M } },
    },
    overrides: { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 10000, unit: M }] },
};

/**
 * What a user outside the package could write against the platform (the unit and rls negative
 * controls): a hand-written EnvoyFilter that disables the overrides filter on one virtual host.
 */
export function rogueOverridesOff(virtualHost: string): K8sObject {
    return {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { name: "rogue", namespace: "istio-system" },
        spec: {
            workloadSelector: { labels: { istio: "ingressgateway" } },
            configPatches: [
                {
                    applyTo: "VIRTUAL_HOST",
                    match: { context: "GATEWAY", routeConfiguration: { vhost: { name: virtualHost, route: { action: "ANY" } } } },
                    patch: {
                        operation: "MERGE",
                        value: {
                            typed_per_filter_config: {
                                "envoy.filters.http.ratelimit.platform-overrides": {
                                    "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig",
                                    disabled: true,
                                },
                            },
                        },
                    },
                },
            ],
        },
    };
}
