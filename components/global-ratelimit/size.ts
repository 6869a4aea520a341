/**
 * GlobalRateLimit's last check, on its built objects: each object the rule list grows (the service's
 * ConfigMaps, the EnvoyFilters, the dashboard, the alert rules) within the API server's bound
 * (components/common/object-size.ts). It reads what was built; it builds and fills in nothing.
 */
import { Problem } from "../../lib/problems";
import { ResolvedGlobalRateLimit } from "./resolve";
import { oversizeProblems } from "../common/object-size";
import { EnvoyFilterSpec } from "../../builders/envoy-types";
import { ConfigDescriptor } from "../../builders/ratelimit-config";
import { MonitoringPlan } from "../service/ratelimit-monitoring";

/** The limits of a config's descriptor tree (its one node type, builders/ratelimit-config.ts): its entries with a `rate_limit`. */
export function countLimits(descriptors: readonly ConfigDescriptor[]): number {
    return descriptors.reduce((n, d) => n + (d.rate_limit ? 1 : 0) + countLimits(d.descriptors ?? []), 0);
}

/** What the size check reads of the built plan: the config texts, the EnvoyFilters, the monitoring objects. */
export interface BuiltObjects {
    configYaml: string;
    perValue?: { configYaml: string };
    filters: { name: string; spec: EnvoyFilterSpec }[];
    monitoring: MonitoringPlan;
}

/** The built objects over the API server's bound, each with the fix that shrinks it. */
export function builtSizeProblems(r: ResolvedGlobalRateLimit, built: BuiltObjects): Problem[] {
    const by = `with ${countLimits(r.compiled.configDescriptors)} limits,`;
    const rules = `(${r.limits.rules.length} rules)`;
    const fewer = "give fewer rules, or split them over GlobalRateLimit instances of their own (each its own domain and gateway listener)";
    const { perValue, monitoring } = built;
    return oversizeProblems([
        { what: `ConfigMap ${r.service.ratelimit.configName}`, text: built.configYaml, key: "rules", value: rules, by, fix: fewer },
        ...(perValue ? [{ what: "the per-value ConfigMap", text: perValue.configYaml, key: "rules", value: rules, by, fix: fewer }] : []),
        ...built.filters.map((f) => ({ what: `EnvoyFilter ${f.name}`, text: JSON.stringify(f.spec), key: "rules", value: rules, by, fix: fewer })),
        ...(monitoring.dashboard
            ? [
                  {
                      what: `the dashboard ConfigMap ${monitoring.dashboard.name} (a panel row per limit)`,
                      text: monitoring.dashboard.json,
                      key: "monitoring.dashboard",
                      value: r.monitoringGiven.dashboard,
                      by,
                      fix: `set monitoring.dashboard to false (the service's metrics and the alert rules stay), or ${fewer}`,
                  },
              ]
            : []),
        ...(monitoring.rules
            ? [
                  {
                      what: "the PrometheusRule",
                      text: JSON.stringify(monitoring.rules.groups),
                      key: "monitoring.alerts",
                      value: r.monitoringGiven.alerts,
                      by,
                      fix: fewer,
                  },
              ]
            : []),
    ]);
}
