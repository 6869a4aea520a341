/**
 * The checks of each field of a rule's `identity.jwt` (the rules of components/rules/identity-fields.ts):
 * the token's issuer, its keys' URL, the claim, the audiences. Pure; collects problems.
 */
import { fieldProblem } from "../../lib/field-checks";
import { Problem } from "../../lib/problems";
import { NO_IDENTITY_VALUE } from "../../builders/identity-args";

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
export const EXAMPLE_ISSUER = "https://auth.example.com";
export const EXAMPLE_JWKS = "https://auth.example.com/.well-known/jwks.json";

/** Text without whitespace or control characters, 1 to 256 characters. */
function plainText(v: unknown): v is string {
    return typeof v === "string" && v.length > 0 && v.length <= MAX_IDENTITY_TEXT && !/[\s\p{Cc}]/u.test(v);
}

/** The issuer's problems at `at`. */
export function checkIssuer(at: string, v: unknown, problems: Problem[]): void {
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

/** The key-set URL's problems at `at`. */
export function checkJwksUri(at: string, v: unknown, problems: Problem[]): void {
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

/** The claim's problems at `at`; the fix suggests `fallback` (the declared default). */
export function checkClaim(at: string, v: unknown, problems: Problem[], fallback: string): void {
    if (typeof v !== "string" || v.length > MAX_IDENTITY_TEXT || !CLAIM_NAME.test(v)) {
        problems.push(fieldProblem(at, v, "must name one top-level claim of the token: letters, digits, '_', '-', '.', ':', '/'", (s) => s.set(at, fallback)));
    } else if (Object.hasOwn(NOT_PER_IDENTITY, v)) {
        problems.push(fieldProblem(at, v, NOT_PER_IDENTITY[v]!, (s) => `${s.set(at, fallback)} (or another claim that names the caller)`));
    }
}

/** The audiences' problems at `at`. */
export function checkAudiences(at: string, v: unknown, problems: Problem[]): void {
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
