/**
 * What GlobalRateLimit's dashboard and alerts watch: its service (and the per-value one), its
 * descriptors, the gateway that calls it and how the filter calls it.
 */
import { RateLimitFilterCall, RateLimitHeaders } from "../../builders/envoy-filters";
import { ruleSummaries } from "../../builders/monitoring";
import { PRE_LIMIT_STAT_PREFIX, PreLimitPlan } from "../../builders/pre-limit";
import { PlannedDescriptor } from "../../builders/rules";
import { RateLimitRuleArgs } from "../../builders/rule-args";
import { PerValueSide } from "./per-value-store";
import { MonitoringContext } from "../service/ratelimit-monitoring";
import { ServiceSettings } from "../service/settings";

/** The planned pieces of a GlobalRateLimit its monitoring reads. */
export interface GlobalWatched {
    name: string;
    ns: string;
    call: RateLimitFilterCall;
    /** Every descriptor of the instance as planned, both sides of a split store. */
    descriptors: PlannedDescriptor[];
    gw: { namespace: string; podLabels: Record<string, string> };
    pre: PreLimitPlan | undefined;
    service: ServiceSettings;
    perValue: PerValueSide | undefined;
    /** The rules that passed their checks, as given (their summaries label the dashboard's rows). */
    rules: readonly RateLimitRuleArgs[];
}

/** The monitoring context of one GlobalRateLimit (instance and service named as the component). */
export function globalMonitoringContext(w: GlobalWatched): MonitoringContext {
    return {
        instance: w.name,
        domain: w.call.domain,
        namespace: w.ns,
        serviceName: w.name,
        descriptors: w.descriptors,
        ...(w.perValue ? { perValueServiceName: w.perValue.service.ratelimit.serviceName } : {}),
        gatewayNamespace: w.gw.namespace,
        gatewayPodLabels: w.gw.podLabels,
        preLimitStatPrefix: w.pre?.buckets.length ? PRE_LIMIT_STAT_PREFIX : undefined,
        failureModeDeny: w.call.failureModeDeny,
        serviceMetrics: w.service.ratelimit.prometheus,
        ruleSummaries: ruleSummaries(w.rules),
        clientHeaders: w.call.rateLimitHeaders === RateLimitHeaders.Draft03,
    };
}
