/**
 * The checks of a rule's `identity` (builders/identity-args.ts): the token's issuer, its keys' URL,
 * the claim, the audiences, what a request without a verified identity meets, the rule fields it
 * does not combine with, and one issuer said the same way by every rule. Pure; collects problems.
 */
import { fieldProblem, oneOfProblems } from "../lib/field-checks";
import { Problem } from "../lib/problems";
import { DEFAULT_IDENTITY_CLAIM, IdentityArgs, MissingIdentity, NO_IDENTITY_VALUE, ResolvedIdentity } from "../builders/identity-args";

/** The longest issuer, claim name or audience accepted (the issuer is a descriptor value in every counter's key). */
export const MAX_IDENTITY_TEXT = 256;
/** A claim name Envoy's metadata path reads as one key: letters, digits, `_`, `-`, `.`, `:`, `/`. */
export const CLAIM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/;
/** Registered claims that never key a counter per identity: numbers (never a string), or one value for every token. */
const NOT_PER_IDENTITY: Readonly<Record<string, string>> = {
    exp: "is a number (the expiry time), and Envoy's metadata action reads only a string: every request would count as without identity",
    iat: "is a number (the issue time), and Envoy's metadata action reads only a string: every request would count as without identity",
    nbf: "is a number (the not-before time), and Envoy's metadata action reads only a string: every request would count as without identity",
    iss: "is the same for every token of the issuer: one counter for everyone",
};
const EXAMPLE_ISSUER = "https://auth.example.com";
const EXAMPLE_JWKS = "https://auth.example.com/.well-known/jwks.json";

/** Text without whitespace or control characters, 1 to 256 characters. */
function plainText(v: unknown): v is string {
    return typeof v === "string" && v.length > 0 && v.length <= MAX_IDENTITY_TEXT && !/[\s\p{Cc}]/u.test(v);
}

function checkIssuer(at: string, v: unknown, problems: Problem[]): void {
    if (!plainText(v)) {
        problems.push(
            fieldProblem(
                at,
                v,
                `must be the tokens' issuer (their iss claim) as the issuer writes it: 1 to ${MAX_IDENTITY_TEXT} characters, no spaces or control characters`,
                (s) => s.set(at, EXAMPLE_ISSUER),
            ),
        );
    } else if (v === NO_IDENTITY_VALUE) {
        problems.push(fieldProblem(at, v, `is the value the rule sends for a request without a verified token`, (s) => s.set(at, EXAMPLE_ISSUER)));
    }
}

function checkJwksUri(at: string, v: unknown, problems: Problem[]): void {
    let url: URL | undefined;
    try {
        url = typeof v === "string" && !/\s/.test(v) ? new URL(v) : undefined;
    } catch {
        url = undefined;
    }
    const ok = url !== undefined && (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "" && url.hash === "" && url.username === "";
    if (!ok) {
        problems.push(
            fieldProblem(
                at,
                v,
                "must be the http(s) URL where the issuer publishes its signing keys (a JSON Web Key Set), with a host, without credentials, fragment or spaces",
                (s) => s.set(at, EXAMPLE_JWKS),
            ),
        );
    }
}

function checkClaim(at: string, v: unknown, problems: Problem[]): void {
    if (typeof v !== "string" || v.length > MAX_IDENTITY_TEXT || !CLAIM_NAME.test(v)) {
        problems.push(
            fieldProblem(at, v, "must name one top-level claim of the token: letters, digits, '_', '-', '.', ':', '/'", (s) =>
                s.set(at, DEFAULT_IDENTITY_CLAIM),
            ),
        );
    } else if (Object.hasOwn(NOT_PER_IDENTITY, v)) {
        problems.push(fieldProblem(at, v, NOT_PER_IDENTITY[v]!, (s) => `${s.set(at, DEFAULT_IDENTITY_CLAIM)} (or another claim that names the caller)`));
    }
}

function checkAudiences(at: string, v: unknown, problems: Problem[]): void {
    if (!Array.isArray(v) || v.length === 0) {
        problems.push(fieldProblem(at, v, "must be a non-empty list of audiences", (s) => `${s.set(at, '["my-api"]')}, or ${s.rm(at)} (any audience)`));
        return;
    }
    v.forEach((a, i) => {
        if (!plainText(a))
            problems.push(
                fieldProblem(`${at}[${i}]`, a, "must be an audience: 1 to 256 characters, no spaces or control characters", (s) => s.rm(`${at}[${i}]`)),
            );
    });
}

/** The rule fields that already key the counter: `identity` replaces them. */
const KEYED_BY: readonly (readonly [string, (r: any) => boolean, string])[] = [
    ["header.perValue", (r) => r.header?.perValue === true, "one counter per header value"],
    ["query.perValue", (r) => r.query?.perValue === true, "one counter per query value"],
    ["perClientAddress", (r) => r.perClientAddress === true, "one counter per client"],
    ["clientCidr", (r) => r.clientCidr !== undefined, "one counter per CIDR"],
];

/** Rule `at`'s `identity`: every field, and no other field keying the counter. */
export function checkIdentity(at: string, r: any, problems: Problem[]): void {
    const id = r.identity;
    const key = `${at}.identity`;
    if (typeof id !== "object" || id === null || typeof id.jwt !== "object" || id.jwt === null) {
        problems.push(
            fieldProblem(key, id, "must be { jwt: { issuer, jwksUri, claim?, audiences? }, missing? }", (s) =>
                s.set(`${key}.jwt`, `{ issuer: "${EXAMPLE_ISSUER}", jwksUri: "${EXAMPLE_JWKS}" }`),
            ),
        );
        return;
    }
    checkIssuer(`${key}.jwt.issuer`, id.jwt.issuer, problems);
    checkJwksUri(`${key}.jwt.jwksUri`, id.jwt.jwksUri, problems);
    if (id.jwt.claim !== undefined) checkClaim(`${key}.jwt.claim`, id.jwt.claim, problems);
    if (id.jwt.audiences !== undefined) checkAudiences(`${key}.jwt.audiences`, id.jwt.audiences, problems);
    if (id.missing !== undefined) problems.push(...oneOfProblems(`${key}.missing`, id.missing, Object.values(MissingIdentity), MissingIdentity.PerClient));
    for (const [field, has, what] of KEYED_BY) {
        if (has(r)) {
            problems.push(
                fieldProblem(
                    `${at}.${field}`,
                    field === "clientCidr" ? r.clientCidr : true,
                    `cannot be combined with identity (${what}, where identity keys the counter by the verified claim)`,
                    (s) => `${s.rm(`${at}.${field}`)}, or make it a rule of its own`,
                ),
            );
        }
    }
}

/** Every rule naming one issuer says the same of it (one RequestAuthentication rule per issuer). */
export function checkIssuersAgree(rules: readonly any[], problems: Problem[]): void {
    const first = new Map<string, { i: number; text: string }>();
    rules.forEach((r, i) => {
        const jwt = r?.identity?.jwt;
        if (typeof jwt?.issuer !== "string") return;
        const text = JSON.stringify({ jwksUri: jwt.jwksUri, audiences: [...(Array.isArray(jwt.audiences) ? jwt.audiences : [])].sort() });
        const seen = first.get(jwt.issuer);
        if (!seen) first.set(jwt.issuer, { i, text });
        else if (seen.text !== text) {
            const at = `rules[${i}].identity.jwt`;
            problems.push(
                fieldProblem(
                    at,
                    jwt,
                    `names issuer ${JSON.stringify(jwt.issuer)} as rules[${seen.i}] does, with another jwksUri or audiences: the gateway verifies each issuer's tokens one way`,
                    (s) =>
                        `give it the jwksUri and audiences of rules[${seen.i}].identity.jwt (${s.set(`${at}.jwksUri`, String(rules[seen.i].identity.jwt.jwksUri))})`,
                ),
            );
        }
    });
}

/** A checked `identity` with its defaults filled in: the claim (`sub`) and `missing` (`MissingIdentity.PerClient`). */
export function resolveIdentity(id: IdentityArgs): ResolvedIdentity {
    return { jwt: { ...id.jwt, claim: id.jwt.claim ?? DEFAULT_IDENTITY_CLAIM }, missing: id.missing ?? MissingIdentity.PerClient };
}
