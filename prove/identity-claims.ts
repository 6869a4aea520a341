/**
 * A request's verified identity as the model takes it: the claims the gateway's JWT filter
 * verified (explain's `--claim`, a log's recorded claim), its `iss` defaulting to the one issuer the
 * program's gateways verify; and, when the request's token is not known (a log that records no
 * claim, a token explain cannot verify), each identity rule the request meets marked as unknown on
 * the decision (prove/approximations.ts), never a silent count on the rule's fallback. Pure.
 */
import { IDENTITY_CLAIM_KEY, IDENTITY_FALLBACK_KEY, IDENTITY_ISSUER_KEY } from "../builders/identity-args";
import { K8sObject } from "../lib/k8s-object";
import { Approximation } from "./approximations";
import { ruleOf } from "./request-chain";
import type { ProveRequest } from "./prove-request";

/** The issuers the program's RequestAuthentications verify, once each. */
export function verifiedIssuers(objects: K8sObject[]): string[] {
    const out = new Set<string>();
    for (const o of objects)
        if (o.kind === "RequestAuthentication") for (const r of o.spec?.jwtRules ?? []) if (typeof r?.issuer === "string") out.add(r.issuer);
    return [...out];
}

/** The payload the JWT filter writes for the request's claims; undefined without claims (no verified token). */
export function jwtPayloadOf(r: ProveRequest, issuers: readonly string[]): Record<string, unknown> | undefined {
    if (!r.claims) return undefined;
    const iss = r.claims.iss ?? (issuers.length === 1 ? issuers[0] : undefined);
    return { ...r.claims, ...(iss !== undefined ? { iss } : {}) };
}

/** Whether a descriptor's entries are an identity rule's (its verified claim, or its fallbacks). */
const isIdentity = (entries: { key: string }[]) =>
    entries.some((e) => e.key === IDENTITY_ISSUER_KEY || e.key === IDENTITY_FALLBACK_KEY || e.key === IDENTITY_CLAIM_KEY);

/** The identity rules a request meets whose count is unknown (the request's token is not known), one approximation each. */
export function identityApproximations(
    r: ProveRequest,
    filters: readonly { descriptors: readonly { entries: { key: string; value: string }[]; limit?: any }[] }[],
): Approximation[] {
    if (r.claimsUnknown === undefined) return [];
    const rules = new Set<string>();
    for (const f of filters) for (const d of f.descriptors) if (isIdentity(d.entries)) rules.add(ruleOf(d.entries as never, d.limit));
    return [...rules].map((rule) => ({ rule, what: `counts a verified token's claim, unknown here: ${r.claimsUnknown}` }));
}

/** Why explain cannot know a request's token: it carries one, and no verified claims were given. */
export const UNVERIFIED_TOKEN =
    'the request carries an Authorization header that is not a bearer token the model can check against the program\'s RequestAuthentication: it is counted as a request without a verified token. Send the token as --header authorization="Bearer <jwt>" (with --jwks FILE), or give the claims the gateway would verify with --claim (e.g. --claim sub=alice)';

/** Why replay cannot know a request's token: the log does not record the verified claim. */
export const CLAIM_NOT_LOGGED =
    "the log does not record the verified claim (GlobalRateLimit accessLog records it for identity rules; a custom format: %DYNAMIC_METADATA(envoy.filters.http.jwt_authn:payload:<claim>)%), so this rule's count is unknown";
