/**
 * A rule keyed by a verified identity (`identity`, builders/identity-args.ts) → its Envoy
 * `rate_limits` actions, its `config.yaml` node, and the token check (an Istio
 * `RequestAuthentication` on the gateway's pods).
 *
 * Istio configures Envoy's JWT filter with every `RequestAuthentication` of the gateway's pods: a
 * token that does not verify is refused (401), a request without one goes on, and a verified
 * token's payload is written to the dynamic metadata `envoy.filters.http.jwt_authn`, key `payload`
 * (`payload_in_metadata`). Only a filter writes dynamic metadata: no header, query or body a client
 * sends can put a value there. The JWT filter runs before the rate-limit filter, so the rule's
 * `metadata` actions read the verified `iss` and claim:
 *
 * - entry 1, every request the rule covers: [rule, `identity_issuer` = `iss`, `identity` = claim],
 *   both `(none)` when absent; the claim is counted only under the rule's own issuer.
 * - entry 2: [rule, `identity_fallback=unverified`, issuer (, client)]: a request without a verified
 *   token of that issuer (none, or another issuer's the same gateway verifies) is refused (a limit of
 *   0) with `missing: refuse`, or counted per client; the rule's own issuer meets no limit there.
 * - entry 3, `missing: perClient` only: [rule, `identity_fallback=no_claim`, issuer, claim, client]:
 *   a token of the issuer without the claim (or with a number in it), counted per client (refused by
 *   entry 1 with `missing: refuse`).
 * The service keys a counter by every value of its descriptor, so only the issuer's verified claim
 * ever varies a counter; the fallbacks vary only by the issuers the gateway verifies and the client.
 *
 * Pure: no checks (components/rules/identity-checks.ts), no Pulumi runtime.
 */
import { DeepReadonly } from "../lib/frozen";
import { stackLabels } from "../lib/common";
import { IstioSecurityObject } from "../lib/k8s-object";
import { RateLimitAction } from "./envoy-types";
import { PlannedDescriptor, PlannedLimit } from "./ratelimit-config";
import { CLIENT_KEY, RateLimitRuleArgs } from "./rule-args";
import {
    IDENTITY_CLAIM_KEY,
    IDENTITY_FALLBACK_KEY,
    NO_CLAIM_VALUE,
    UNVERIFIED_VALUE,
    IDENTITY_ISSUER_KEY,
    JWT_FILTER_NAME,
    JWT_PAYLOAD_KEY,
    JwtIdentityArgs,
    MissingIdentity,
    NO_IDENTITY_VALUE,
    ResolvedIdentity,
} from "./identity-args";

/** Envoy's `metadata` action reading a verified token's payload field into `key` (`(none)` without one). */
export function payloadAction(field: string, key: string): RateLimitAction {
    return {
        metadata: {
            descriptor_key: key,
            metadata_key: { key: JWT_FILTER_NAME, path: [{ key: JWT_PAYLOAD_KEY }, { key: field }] },
            default_value: NO_IDENTITY_VALUE,
            source: "DYNAMIC",
        },
    };
}

/**
 * The actions of an identity rule's entries after its name's action: the verified identity; the
 * requests without a verified token of the issuer (per client with `perClient`); and (`perClient`)
 * a token of the issuer without the claim, per client. No fallback entry carries a value a client
 * chooses unless the rule's own issuer verified it: the service keys a counter by every value of
 * its descriptor, so a claim of another issuer's token there would mint a counter per claim.
 */
export function identityActions(id: ResolvedIdentity, client: RateLimitAction): RateLimitAction[][] {
    const iss = payloadAction("iss", IDENTITY_ISSUER_KEY);
    const claim = payloadAction(id.jwt.claim, IDENTITY_CLAIM_KEY);
    const fallback = (value: string): RateLimitAction => ({ generic_key: { descriptor_key: IDENTITY_FALLBACK_KEY, descriptor_value: value } });
    if (id.missing === MissingIdentity.Refuse)
        return [
            [iss, claim],
            [fallback(UNVERIFIED_VALUE), iss],
        ];
    return [
        [iss, claim],
        [fallback(UNVERIFIED_VALUE), iss, client],
        [fallback(NO_CLAIM_VALUE), iss, claim, client],
    ];
}

/** The planned nodes under an identity rule's name: the claim's counters, and what a request without a verified identity meets. */
export function identityConfig(id: ResolvedIdentity, limit: () => { limit: PlannedLimit }): PlannedDescriptor[] {
    const none = () => ({ limit: { ...limit().limit, requests: 0 } });
    const issuer = id.jwt.issuer;
    const refusing = id.missing === MissingIdentity.Refuse;
    const perClient = (): PlannedDescriptor[] => [{ key: CLIENT_KEY, ...limit() }];
    // A token of the issuer without the claim: refused here, or counted per client by the no-claim entry.
    const noClaim: PlannedDescriptor = refusing
        ? { key: IDENTITY_CLAIM_KEY, value: NO_IDENTITY_VALUE, ...none() }
        : { key: IDENTITY_CLAIM_KEY, value: NO_IDENTITY_VALUE };
    const nodes: PlannedDescriptor[] = [
        { key: IDENTITY_ISSUER_KEY, value: issuer, descriptors: [noClaim, { key: IDENTITY_CLAIM_KEY, ...limit() }] },
        {
            key: IDENTITY_FALLBACK_KEY,
            value: UNVERIFIED_VALUE,
            // The issuer's own tokens meet no limit here; every other request (no token: `(none)`) is refused or counted per client.
            descriptors: [
                { key: IDENTITY_ISSUER_KEY, value: issuer },
                refusing ? { key: IDENTITY_ISSUER_KEY, ...none() } : { key: IDENTITY_ISSUER_KEY, descriptors: perClient() },
            ],
        },
    ];
    if (refusing) return nodes;
    const claimless = { key: IDENTITY_CLAIM_KEY, value: NO_IDENTITY_VALUE, descriptors: perClient() };
    return [
        ...nodes,
        { key: IDENTITY_FALLBACK_KEY, value: NO_CLAIM_VALUE, descriptors: [{ key: IDENTITY_ISSUER_KEY, value: issuer, descriptors: [claimless] }] },
    ];
}

/** Istio's `RequestAuthentication` `jwtRules` entry, as this package writes it. */
export interface JwtRule {
    issuer: string;
    jwksUri: string;
    audiences?: string[];
}

/** Istio's `jwtRules` entry of one issuer. */
export function jwtRuleOf(jwt: DeepReadonly<JwtIdentityArgs>): JwtRule {
    return { issuer: jwt.issuer, jwksUri: jwt.jwksUri, ...(jwt.audiences?.length ? { audiences: [...jwt.audiences] } : {}) };
}

/** The issuers the rules verify, once each (the checks refused two rules that say different things of one issuer). */
export function jwtRulesOf(rules: readonly DeepReadonly<RateLimitRuleArgs>[]): JwtRule[] {
    const seen = new Map<string, DeepReadonly<JwtIdentityArgs>>();
    for (const r of rules) if (r.identity && !seen.has(r.identity.jwt.issuer)) seen.set(r.identity.jwt.issuer, r.identity.jwt);
    return [...seen.values()].map(jwtRuleOf);
}

/** Where the token check goes: the gateway's pods by label, or a Gateway API `Gateway` by name (builders/envoy-filters.ts `FilterTarget`). */
export type IdentityTarget = { selector: Record<string, string> } | { gatewayApiName: string };

/**
 * The token check of the rules with `identity`: one Istio `RequestAuthentication` `<instance>-identity` on the gateway's
 * pods (in the gateway's namespace), one `jwtRules` entry per issuer; none without such rules.
 */
export function tokenChecks(
    instance: string,
    gateway: { namespace: string; target: IdentityTarget },
    rules: readonly DeepReadonly<RateLimitRuleArgs>[],
): IstioSecurityObject[] {
    const jwtRules = jwtRulesOf(rules);
    if (!jwtRules.length) return [];
    const target = gateway.target;
    const where =
        "gatewayApiName" in target
            ? { targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: target.gatewayApiName }] }
            : { selector: { matchLabels: { ...target.selector } } };
    const metadata = { name: `${instance}-identity`, namespace: gateway.namespace, labels: stackLabels("global-ratelimit") };
    return [{ apiVersion: "security.istio.io/v1", kind: "RequestAuthentication", metadata, spec: { ...where, jwtRules } }];
}
