/**
 * The access-log formats a program's rendered objects give its gateways: every file access log an
 * EnvoyFilter adds to an HTTP connection manager (GlobalRateLimit's `accessLog` among them), as
 * the format string Envoy writes with (a JSON format as its JSON text). What `mesh-ratelimit replay`
 * reads a log with when no `--log-format` is given. Pure.
 */
import { FILE_ACCESS_LOG_TYPE, HCM_FILTER } from "../builders/envoy-types";
import { K8sObject } from "../lib/k8s-object";
import { namespacedName, field, patchesOf } from "../builders/rendered-config";

/** One access log format of the program and the EnvoyFilter that sets it. */
export interface AccessLogSetting {
    /** `<namespace>/<name>` of the EnvoyFilter. */
    filter: string;
    /** The format: text, or a JSON format as its JSON text. */
    format: string;
}

/** The format of one access log entry (`config.accesslog.v3.AccessLog`) written to a file; undefined for another kind or none. */
function formatOf(log: any): string | undefined {
    const c = field(log, "typed_config");
    if (c?.["@type"] !== FILE_ACCESS_LOG_TYPE) return undefined;
    const f = field(c, "log_format");
    const json = field(f, "json_format");
    if (json && typeof json === "object") return JSON.stringify(json);
    const text = field(field(f, "text_format_source"), "inline_string") ?? c.format;
    return typeof text === "string" ? text : undefined;
}

/** Every access log format the program's EnvoyFilters add to a gateway's connection managers, once per filter and format. */
export function accessLogSettings(objects: K8sObject[]): AccessLogSetting[] {
    const out: AccessLogSetting[] = [];
    for (const o of objects) {
        if (o.kind !== "EnvoyFilter") continue;
        const filter = namespacedName(o);
        for (const p of patchesOf(o)) {
            if (p.applyTo !== "NETWORK_FILTER" || p.context !== "GATEWAY" || p.name !== HCM_FILTER) continue;
            for (const log of field(p.typedConfig, "access_log") ?? []) {
                const format = formatOf(log);
                if (format !== undefined && !out.some((s) => s.filter === filter && s.format === format)) out.push({ filter, format });
            }
        }
    }
    return out;
}
