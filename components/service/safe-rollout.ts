/**
 * Safe rollout of limits: shadow mode (limits counted and reported, nothing refused) and the
 * Prometheus scrape target of the rate-limit service. Pure builders, used by ratelimit-service.ts.
 *
 * Shadow mode is the service's global `SHADOW_MODE`
 * (https://github.com/envoyproxy/ratelimit#global-shadow-mode): every descriptor is still counted
 * in Redis and its status still says OVER_LIMIT, but the overall answer is OK, so the gateway lets
 * the request through; the service counts each such answer in `ratelimit_server.global_shadow_mode`
 * (`ratelimit_service_global_shadow_mode` in Prometheus) and the per-key `over_limit` counters.
 */
import { ServiceSettings } from "./settings";

/** Port the service serves Prometheus metrics on (`PROMETHEUS_ADDR`). */
export const METRICS_PORT = 9090;
/** Path of the metrics (`PROMETHEUS_PATH`, the service's default). */
export const METRICS_PATH = "/metrics";

export interface PlainEnvVar {
    name: string;
    value: string;
}

/** Environment for shadow mode: only set when on (the service's default is off). */
export function shadowModeEnv(s: Pick<ServiceSettings, "ratelimit">): PlainEnvVar[] {
    return s.ratelimit.shadowMode ? [{ name: "SHADOW_MODE", value: "true" }] : [];
}

/**
 * Pod-template annotations that make the pods a Prometheus scrape target, in the convention of
 * Prometheus' `kubernetes-pods` example job and of Istio's metrics merging
 * (https://istio.io/latest/docs/ops/integrations/prometheus/#option-1-metrics-merging): with a
 * sidecar, Istio rewrites them to its merged endpoint on port 15020 and serves the service's own
 * metrics there too, so scraping works under STRICT mutual TLS. Empty when Prometheus is off.
 */
export function prometheusScrapeAnnotations(s: Pick<ServiceSettings, "ratelimit">): Record<string, string> {
    if (!s.ratelimit.prometheus) return {};
    return { "prometheus.io/scrape": "true", "prometheus.io/port": String(METRICS_PORT), "prometheus.io/path": METRICS_PATH };
}
