/**
 * A request's bearer token checked as Envoy's JWT filter checks it for the program's rendered
 * Istio `RequestAuthentication`s: the token from `Authorization: Bearer <token>` (Envoy's default
 * location, the one Istio configures without `fromHeaders`), its issuer one a RequestAuthentication
 * names, its signature (RS256/384/512, ES256/384, PS256/384/512) by a key of that issuer's JWKS
 * (`--jwks`, or the rule's inline `jwks`), `exp` and `nbf` against the request's time (Envoy's
 * default 60 s of clock skew), `aud` against the rule's `audiences`. The outcome:
 *
 * - `claims`: verified; its string claims are what the gateway writes to the JWT filter's metadata.
 * - `rejected`: the JWT filter answers 401 before any rate limit: a token not of the form
 *   header.payload.signature, of an issuer no RequestAuthentication names ("Jwt issuer is not
 *   configured"), with a bad signature, expired, not yet valid or of another audience.
 * - `unknown`: it cannot be checked here (no JWKS for its issuer, an algorithm not modelled).
 *
 * The token itself is never returned nor put in a message.
 */
import * as crypto from "crypto";
import { K8sObject } from "../lib/k8s-object";

/** One issuer a RequestAuthentication verifies, and the keys to check its tokens with (absent: none known). */
export interface JwtCheck {
    issuer: string;
    audiences?: string[];
    keys?: JsonWebKey[];
    /** `<namespace>/<name>` of the RequestAuthentication. */
    requestAuthentication: string;
}

export type TokenOutcome = { claims: Record<string, string> } | { rejected: string; requestAuthentication?: string } | { unknown: string };

/** Envoy's JWT filter's default `clock_skew_seconds`. */
const CLOCK_SKEW_SECONDS = 60;

/** Node's verify parameters per JWS `alg`. */
const ALGS: Record<string, { hash: string; ec?: boolean; pss?: boolean }> = {
    RS256: { hash: "sha256" },
    RS384: { hash: "sha384" },
    RS512: { hash: "sha512" },
    PS256: { hash: "sha256", pss: true },
    PS384: { hash: "sha384", pss: true },
    PS512: { hash: "sha512", pss: true },
    ES256: { hash: "sha256", ec: true },
    ES384: { hash: "sha384", ec: true },
};

/** The keys of a JWKS document's text; `where` names it in the error. */
export function jwksKeys(text: string, where: string): JsonWebKey[] {
    let doc: any;
    try {
        doc = JSON.parse(text);
    } catch (e) {
        throw new Error(`${where} is not JSON (${(e as Error).message}): give a JWKS document, {"keys": [...]}`, { cause: e });
    }
    if (!doc || !Array.isArray(doc.keys)) throw new Error(`${where} has no "keys" list: give a JWKS document, {"keys": [...]}`);
    return doc.keys as JsonWebKey[];
}

/** The issuers the program's RequestAuthentications verify, with the keys of each (`jwks`: a JWKS given by the user, for every issuer without inline keys). */
export function jwtChecksOf(objects: readonly K8sObject[], jwks?: JsonWebKey[]): JwtCheck[] {
    const out: JwtCheck[] = [];
    for (const o of objects) {
        if (o.kind !== "RequestAuthentication") continue;
        const name = `${o.metadata?.namespace ?? "default"}/${o.metadata?.name}`;
        for (const r of o.spec?.jwtRules ?? []) {
            if (typeof r?.issuer !== "string") continue;
            const keys = typeof r.jwks === "string" ? jwksKeys(r.jwks, `the jwks of RequestAuthentication ${name}`) : jwks;
            out.push({ issuer: r.issuer, ...(r.audiences?.length ? { audiences: r.audiences } : {}), ...(keys ? { keys } : {}), requestAuthentication: name });
        }
    }
    return out;
}

/** The token of an `Authorization` header value, when it is a bearer token (Envoy's default location). */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
    const v = Array.isArray(authorization) ? authorization[0] : authorization;
    return v !== undefined && v.startsWith("Bearer ") ? v.slice(7).trim() : undefined;
}

const part = (s: string): any => JSON.parse(Buffer.from(s, "base64url").toString("utf8"));

/** Whether `signature` over `signed` verifies with one of `keys` (the `kid`'s when the header names one). */
function signedBy(keys: readonly JsonWebKey[], header: any, signed: string, signature: Buffer): boolean {
    const alg = ALGS[header.alg]!;
    const candidates = keys.filter((k: any) => (header.kid === undefined || k.kid === header.kid) && k.kty === (alg.ec ? "EC" : "RSA"));
    for (const jwk of candidates) {
        let key: crypto.KeyObject;
        try {
            key = crypto.createPublicKey({ key: jwk as crypto.JsonWebKey, format: "jwk" });
        } catch {
            continue;
        }
        const opts = alg.ec
            ? { key, dsaEncoding: "ieee-p1363" as const }
            : alg.pss
              ? { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: crypto.constants.RSA_PSS_SALTLEN_DIGEST }
              : key;
        if (crypto.verify(alg.hash, Buffer.from(signed), opts, signature)) return true;
    }
    return false;
}

/** Whether the token's `aud` (a string or a list) names one of the rule's audiences. */
const audienceOk = (aud: unknown, audiences: readonly string[]) =>
    (Array.isArray(aud) ? aud : [aud]).some((a) => typeof a === "string" && audiences.includes(a));

/** The token checked against the program's issuers at `nowMs` (see the file's comment). */
export function checkToken(token: string, checks: readonly JwtCheck[], nowMs: number): TokenOutcome {
    const parts = token.split(".");
    let header: any, payload: any;
    try {
        if (parts.length !== 3) throw new Error();
        header = part(parts[0]!);
        payload = part(parts[1]!);
        if (!header || typeof header !== "object" || !payload || typeof payload !== "object") throw new Error();
    } catch {
        return { rejected: "Jwt is not in the form of Header.Payload.Signature" };
    }
    const check = checks.find((c) => c.issuer === payload.iss);
    if (!check) return { rejected: "Jwt issuer is not configured" };
    const ra = { requestAuthentication: check.requestAuthentication };
    if (!ALGS[header.alg]) return { unknown: `the token's algorithm ${JSON.stringify(header.alg)} is not modelled (RS, PS, ES256/384 are)` };
    if (!check.keys)
        return { unknown: `no JWKS of issuer ${check.issuer} is known here (give the issuer's keys with --jwks FILE), so the token is not verified` };
    if (!signedBy(check.keys, header, `${parts[0]}.${parts[1]}`, Buffer.from(parts[2]!, "base64url"))) return { rejected: "Jwt verification fails", ...ra };
    const now = Math.floor(nowMs / 1000);
    if (typeof payload.exp === "number" && now > payload.exp + CLOCK_SKEW_SECONDS) return { rejected: "Jwt is expired", ...ra };
    if (typeof payload.nbf === "number" && now < payload.nbf - CLOCK_SKEW_SECONDS) return { rejected: "Jwt not yet valid", ...ra };
    if (check.audiences && !audienceOk(payload.aud, check.audiences)) return { rejected: "Audiences in Jwt are not allowed", ...ra };
    const claims: Record<string, string> = {};
    for (const [k, v] of Object.entries(payload)) if (typeof v === "string") claims[k] = v;
    return { claims };
}

/** The request's headers as the output shows them: a bearer token's value never printed. */
export function redactedHeaders<H extends Record<string, string | string[]>>(headers: H): H {
    if (headers.authorization === undefined) return headers;
    const redact = (v: string) => (v.startsWith("Bearer ") ? "Bearer <redacted>" : "<redacted>");
    const a = headers.authorization;
    return { ...headers, authorization: Array.isArray(a) ? a.map(redact) : redact(a) };
}
