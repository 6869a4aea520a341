/**
 * The gateway's access log for replay (`accessLog`): one JSON line per request with exactly the
 * fields `mesh-ratelimit replay` reads (prove/log-format.ts) and the request headers the rules
 * count by, appended by an EnvoyFilter `MERGE` to the `access_log` list of the HTTP connection
 * manager of the gateway's own listeners (a repeated field: Istio's merge appends, so the mesh's
 * own access log, if any, stays). Only the selected gateway pods get it; nothing mesh-wide.
 * JSON, not text: Envoy escapes a value's quotes and spaces there, so any header value reads back whole.
 */
import { EnvoyFilterPatch, EnvoyFilterSpec, FILE_ACCESS_LOG_TYPE, FILE_ACCESS_LOGGER, HCM_FILTER, HCM_TYPE } from "./envoy-types";
import { FILTER_PRIORITY, FilterTarget, targetOf } from "./filter-target";
import { JWT_FILTER_NAME, JWT_PAYLOAD_KEY } from "./identity-args";

/** The fields every line holds: the request's time, method, path as the client sent it, host, client and upstream. */
export const REPLAY_LOG_FIELDS: Readonly<Record<string, string>> = {
    start_time: "%START_TIME%",
    method: "%REQ(:METHOD)%",
    path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
    authority: "%REQ(:AUTHORITY)%",
    client: "%DOWNSTREAM_REMOTE_ADDRESS%",
    x_forwarded_for: "%REQ(X-FORWARDED-FOR)%",
    upstream_cluster: "%UPSTREAM_CLUSTER%",
    response_code: "%RESPONSE_CODE%",
};

/** The key of a logged request header in a line (`header.x-api-key`). */
export const headerKey = (name: string) => `header.${name}`;

/** The key of a logged verified claim in a line (`claim.sub`). */
export const claimKey = (name: string) => `claim.${name}`;

/**
 * The JSON format: the replay fields, then one key per header (names in lower case, as given), then
 * one per verified claim: the JWT filter's payload in the dynamic metadata (Istio's
 * `payload_in_metadata`), so the token itself is never logged, and a line without a verified token
 * logs `-` there.
 */
export function replayLogFormat(headers: readonly string[], claims: readonly string[] = []): Record<string, string> {
    return {
        ...REPLAY_LOG_FIELDS,
        ...Object.fromEntries(headers.map((h) => [headerKey(h), `%REQ(${h.toUpperCase()})%`])),
        ...Object.fromEntries(claims.map((c) => [claimKey(c), `%DYNAMIC_METADATA(${JWT_FILTER_NAME}:${JWT_PAYLOAD_KEY}:${c})%`])),
    };
}

export interface AccessLogFilterOptions {
    target: FilterTarget;
    /** The gateway ports whose listeners log (empty: every listener of the pods). */
    ports: readonly number[];
    /** The file the gateway writes (`/dev/stdout`: its container log). */
    path: string;
    /** Request headers logged (lower case). */
    headers: readonly string[];
    /** Verified claims logged (the identity rules' claims and `iss`); none without identity rules. */
    claims?: readonly string[];
}

/** The EnvoyFilter adding the replay access log to the gateway's connection managers, one patch per port. */
export function accessLogFilter(o: AccessLogFilterOptions): EnvoyFilterSpec {
    const listeners = o.ports.length ? o.ports.map((portNumber) => ({ portNumber })) : [{}];
    return {
        ...targetOf(o.target),
        priority: FILTER_PRIORITY,
        configPatches: listeners.map((port): EnvoyFilterPatch => ({
            applyTo: "NETWORK_FILTER",
            match: { context: "GATEWAY", listener: { ...port, filterChain: { filter: { name: HCM_FILTER } } } },
            patch: {
                operation: "MERGE",
                value: {
                    name: HCM_FILTER,
                    typed_config: {
                        "@type": HCM_TYPE,
                        access_log: [
                            {
                                name: FILE_ACCESS_LOGGER,
                                typed_config: {
                                    "@type": FILE_ACCESS_LOG_TYPE,
                                    path: o.path,
                                    log_format: { json_format: replayLogFormat(o.headers, o.claims ?? []) },
                                },
                            },
                        ],
                    },
                },
            },
        })),
    };
}
