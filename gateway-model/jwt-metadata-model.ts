/**
 * A model of what Envoy's rate-limit `metadata` action reads from the dynamic metadata that Envoy's
 * JWT filter writes. Istio configures that filter with `payload_in_metadata: payload`, so a
 * verified token's payload is at `envoy.filters.http.jwt_authn` → `payload`; a request without a
 * token has none (a token that does not verify is refused before the rate-limit filter). The action
 * (router_ratelimit.cc `MetaDataAction`) sends the value at the path when it is a non-empty string,
 * else its `default_value` when one is set, else nothing (`skip_if_absent`) or no descriptor at all.
 */
import { JWT_FILTER_NAME, JWT_PAYLOAD_KEY } from "../builders/identity-args";
import { field } from "../builders/rendered-config";

/** The dynamic metadata of a request: namespace → its structure. */
export type DynamicMetadata = Record<string, Record<string, unknown>>;

/** The dynamic metadata the JWT filter writes for a verified token's payload; empty without one. */
export function jwtDynamicMetadata(payload: Record<string, unknown> | undefined): DynamicMetadata {
    return payload ? { [JWT_FILTER_NAME]: { [JWT_PAYLOAD_KEY]: payload } } : {};
}

/** What a `metadata` action sends: its entry's value, `"skip"` (no entry, the descriptor goes on) or undefined (no descriptor). */
export function metadataActionValue(action: any, metadata: DynamicMetadata): string | "skip" | undefined {
    const source = field(action, "source") ?? "DYNAMIC";
    if (source !== "DYNAMIC" && source !== 0) throw new Error(`metadata action source ${JSON.stringify(source)} is not modelled`);
    const key = field(action, "metadata_key") ?? {};
    let at: unknown = metadata[key.key];
    for (const step of key.path ?? []) at = at !== null && typeof at === "object" ? (at as Record<string, unknown>)[step.key] : undefined;
    if (typeof at === "string" && at !== "") return at;
    const fallback = field(action, "default_value");
    if (typeof fallback === "string" && fallback !== "") return fallback;
    return field(action, "skip_if_absent") ? "skip" : undefined;
}
