/**
 * The EnvoyFilters: global limit on the ingress gateway (spec 2.3, 2.4, 2.6) and the local token
 * bucket on the workload sidecar (spec 2.7).
 */
import * as pulumi from "@pulumi/pulumi";
import { stackLabels } from "./common";
import { EnvoyFilter } from "./crds";
import { FILTER_NAMES, globalRateLimitFilter, localRateLimitFilter, routeAction, virtualHostActions } from "./envoy-filters";
import { StackSettings } from "./settings";

export interface FiltersArgs {
    settings: StackSettings;
}

/** Global rate limiting at the ingress gateway. */
export class GlobalRateLimitFilters extends pulumi.ComponentResource {
    public readonly filters: EnvoyFilter[];

    constructor(name: string, args: FiltersArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:GlobalRateLimitFilters", name, {}, opts);
        const s = args.settings;
        const labels = stackLabels("global-ratelimit");
        const make = (objName: string, spec: ReturnType<typeof globalRateLimitFilter>) =>
            new EnvoyFilter(objName, { metadata: { name: objName, namespace: s.mesh.namespace, labels }, spec }, { parent: this });

        this.filters = [make(FILTER_NAMES.global, globalRateLimitFilter(s)), make(FILTER_NAMES.vhostActions, virtualHostActions(s))];
        const route = routeAction(s);
        if (route) this.filters.push(make(FILTER_NAMES.routeAction, route));
        this.registerOutputs({});
    }
}

/** Local token bucket on the selected workload's sidecar. */
export class LocalRateLimitFilter extends pulumi.ComponentResource {
    public readonly filter: EnvoyFilter;

    constructor(name: string, args: FiltersArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:LocalRateLimitFilter", name, {}, opts);
        const s = args.settings;
        this.filter = new EnvoyFilter(
            FILTER_NAMES.local,
            { metadata: { name: FILTER_NAMES.local, namespace: s.mesh.namespace, labels: stackLabels("local-ratelimit") }, spec: localRateLimitFilter(s) },
            { parent: this },
        );
        this.registerOutputs({});
    }
}
