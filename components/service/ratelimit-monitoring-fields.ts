/**
 * The fields of GlobalRateLimit's `monitoring` (MeshRateLimit's `global.monitoring` takes the
 * options), each declared once (lib/field-decl.ts): documentation, default, rule, where it goes,
 * the stack's key. A selector's rule suggests the selector derived from the service or gateway, so
 * its check stays with them (ratelimit-monitoring.ts) and is stated here in words.
 * components/service/ratelimit-monitoring-args.generated.ts is generated from these tables (`npm run gen`). Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { LOCAL_STAT_PREFIX } from "../../builders/envoy-types";
import { ArgInterface, booleanRule, customRule, dnsNameRule, field, nested } from "../../lib/field-decl";
import { fieldProblem } from "../../lib/field-checks";
import { LABEL_KEY, LABEL_VALUE } from "../../lib/dns-names";
import { Problem } from "../../lib/problems";
import { t } from "../../lib/field-types";

/** Whether `text` is PromQL label matchers without braces (`name="value",other=~"re.*"`). */
export function isMatchers(text: unknown): boolean {
    return typeof text === "string" && MATCHERS.test(text);
}
const MATCHERS = /^\s*([a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*(,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*)*)?$/;
const MATCHERS_TEXT = 'PromQL label matchers without braces, e.g. name="value",other=~"re.*"';

/** A selector judged with the pods it stands for: its fix is the matchers derived from the service's, gateway's or Redis's pods (ratelimit-monitoring.ts). */
export const MONITORING_MATCHERS_CHECK = crossCheck(
    "pod matchers",
    ["serviceSelector", "gatewaySelector", "redisSelector"],
    "PromQL matchers; the fix derived from the pods they select",
);

/** `name=value` split into its label's name and value (undefined when it is not one label). */
export function dashboardLabelOf(text: unknown): { key: string; value: string } | undefined {
    const [key, value, ...rest] = typeof text === "string" ? text.split("=") : [];
    if (rest.length || !key || value === undefined || !LABEL_KEY.test(key) || !LABEL_VALUE.test(value) || value.length > 63) return undefined;
    return { key, value };
}

/** `ruleLabels`: an object of valid label names and values. */
function ruleLabelsProblems(path: string, labels: unknown): Problem[] {
    if (typeof labels !== "object" || labels === null || Array.isArray(labels))
        return [{ key: path, value: labels, problem: "must be an object of label names and values", fix: 'give e.g. { release: "kube-prometheus-stack" }' }];
    return Object.entries(labels)
        .filter(([k, v]) => !LABEL_KEY.test(k) || typeof v !== "string" || !LABEL_VALUE.test(v) || v.length > 63)
        .map(([k, v]) => ({
            key: `${path}.${k}`,
            value: v,
            problem: "is not a valid label name and value",
            fix: "use Kubernetes label syntax (letters, digits, '-', '_', '.')",
        }));
}

/** The fields of `MonitoringOptionsArgs`, in the interface's order. */
export const MONITORING_OPTION_FIELDS = {
    dashboard: field({
        doc:
            "Create a Grafana dashboard of the limits: a ConfigMap with `dashboardLabel`, which Grafana's dashboard sidecar loads (decisions per " +
            "limit and outcome, service and Redis errors, answer time, config loads, the gateway's filter and pre-limit, the local bucket per " +
            "pod; docs/monitoring.md). The service's panels need its `prometheus`. A boolean.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: { object: "the dashboard ConfigMap" },
        stackKey: "monitoringDashboard",
        stackGroup: "operations",
    }),
    dashboardNamespace: field<string>({
        doc: "Namespace of the dashboard ConfigMap: one Grafana's dashboard sidecar watches (must exist).",
        type: t.string(),
        defaultNote: "the service's namespace",
        rule: dnsNameRule("label"),
        goesTo: { object: "the dashboard ConfigMap's namespace" },
        stackKey: "monitoringDashboardNamespace",
        stackGroup: "operations",
    }),
    dashboardLabel: field({
        doc: "The label, `name=value`, on the dashboard ConfigMap that Grafana's dashboard sidecar looks for (a setting of the Grafana chart).",
        type: t.string(),
        default: "grafana_dashboard=1",
        rule: customRule<string>("one label written name=value", (path, value, fallback) =>
            dashboardLabelOf(value) ? [] : [fieldProblem(path, value, "must be one label written name=value", (s) => s.set(path, fallback ?? ""))],
        ),
        goesTo: { object: "the dashboard ConfigMap's label" },
        stackKey: "monitoringDashboardLabel",
        stackGroup: "operations",
    }),
    alerts: field({
        doc:
            "Create a `PrometheusRule` (monitoring.coreos.com/v1) with the alert rules, in the service's namespace: the gateway failing closed " +
            "or about to, the config not loaded, a limit refusing most of its traffic (docs/monitoring.md, runbook). It reaches the cluster's " +
            "alerting (another system), so it is off unless asked for; the cluster must serve the kind (the Prometheus operator's CRDs), else " +
            "preview stops. A boolean.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "the PrometheusRule" },
        stackKey: "monitoringAlerts",
        stackGroup: "operations",
    }),
    ruleLabels: field<Record<string, string>>({
        doc: 'Labels on the `PrometheusRule`, e.g. `{ release: "kube-prometheus-stack" }` for an operator that selects rules by label.',
        type: t.map(t.string()),
        defaultNote: "none",
        rule: customRule("an object of Kubernetes label names and values", ruleLabelsProblems),
        goesTo: { object: "the PrometheusRule's labels" },
        stackKey: "monitoringRuleLabels",
        stackGroup: "operations",
    }),
};

/** The fields `MonitoringArgs` adds, in the interface's order. */
export const MONITORING_FIELDS = {
    serviceSelector: field<string>({
        doc: "PromQL label matchers of the service's metrics.",
        type: t.string(),
        defaultNote: '`namespace="<namespace>",app="<service.name>"` (Prometheus\'s `kubernetes-pods` job with pod labels mapped)',
        rule: checkedWith(MONITORING_MATCHERS_CHECK, MATCHERS_TEXT),
        goesTo: { object: "the dashboard's and alert rules' service queries" },
    }),
    gatewaySelector: field<string>({
        doc: "PromQL label matchers of the gateway pods' metrics.",
        type: t.string(),
        defaultNote: '`namespace="<gateway.namespace>"` and the gateway\'s pod labels (names with `_` for characters Prometheus does not allow)',
        rule: checkedWith(MONITORING_MATCHERS_CHECK, MATCHERS_TEXT),
        goesTo: { object: "the dashboard's and alert rules' gateway queries" },
    }),
    gatewayClusters: field({
        doc: "RE2 over the gateway's route target clusters (`cluster_name`) the stack limits; its filter's counters are kept per route target cluster.",
        type: t.string(),
        default: ".*",
        defaultNote: " (every route on those gateway pods)",
        rule: customRule<string>("a non-empty RE2 expression", (path, value, fallback) =>
            typeof value === "string" && value
                ? []
                : [{ key: path, value, problem: "must be a non-empty RE2 expression", fix: `use ${JSON.stringify(fallback ?? ".*")}` }],
        ),
        goesTo: { object: "the dashboard's gateway cluster_name matcher" },
    }),
    localBuckets: nested({ doc: "Workloads with a local token bucket. Defaults to none.", type: t.list(t.ref("LocalBucketMetricsArgs")) }),
    redisSelector: field<string>({
        doc: "PromQL label matchers of a Redis exporter's metrics (oliver006/redis_exporter).",
        type: t.string(),
        defaultNote: "none: no Redis memory panel or alert",
        rule: checkedWith(MONITORING_MATCHERS_CHECK, MATCHERS_TEXT),
        goesTo: { object: "the dashboard's Redis memory panel and alert" },
    }),
};

/** The fields of one `localBuckets` entry. */
export const LOCAL_BUCKET_FIELDS = {
    title: field<string>({
        doc: "Panel title, e.g. the workload's name.",
        type: t.string(),
        required: true,
        rule: customRule<string>("a non-empty text", (path, value) =>
            typeof value === "string" && value.trim() ? [] : [{ key: path, value, problem: "must be a non-empty text", fix: 'use e.g. "productpage"' }],
        ),
        goesTo: { object: "the dashboard's panel title" },
    }),
    selector: field<string>({
        doc: 'PromQL label matchers of the workload\'s pods\' metrics, e.g. `namespace="default",app="productpage"`.',
        type: t.string(),
        required: true,
        rule: customRule<string>(MATCHERS_TEXT, (path, value) =>
            isMatchers(value)
                ? []
                : [{ key: path, value, problem: `must be ${MATCHERS_TEXT}`, fix: `use ${JSON.stringify('namespace="default",app="productpage"')}` }],
        ),
        goesTo: { object: "the dashboard's local bucket queries" },
    }),
    statPrefix: field({
        doc: "The local rate-limit filter's `stat_prefix`.",
        type: t.string(),
        default: LOCAL_STAT_PREFIX,
        defaultNote: " (LocalRateLimit's)",
        rule: customRule<string>("an Envoy stat prefix (letters, digits, '_', '.')", (path, value, fallback) =>
            typeof value === "string" && /^[A-Za-z0-9_.]+$/.test(value)
                ? []
                : [{ key: path, value, problem: "must be an Envoy stat prefix (letters, digits, '_', '.')", fix: `use "${fallback}"` }],
        ),
        goesTo: { object: "the dashboard's local bucket queries" },
    }),
};

/** The interfaces generated from these tables (components/service/ratelimit-monitoring-args.generated.ts), in the file's order. */
export const MONITORING_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "LocalBucketMetricsArgs",
        doc: "A workload with a local token bucket (LocalRateLimit), for the dashboard's refusals per pod.",
        fields: LOCAL_BUCKET_FIELDS,
    },
    {
        name: "MonitoringOptionsArgs",
        doc: "The dashboard and alert rules: GlobalRateLimit's `monitoring` and MeshRateLimit's `global.monitoring`. Each field documented here once.",
        fields: MONITORING_OPTION_FIELDS,
    },
    { name: "MonitoringArgs", doc: "The dashboard and alerts of a GlobalRateLimit.", extends: "MonitoringOptionsArgs", fields: MONITORING_FIELDS },
];
