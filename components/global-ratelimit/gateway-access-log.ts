/**
 * GlobalRateLimit's `accessLog`: the arguments of the gateway access log that `mesh-ratelimit replay`
 * reads (builders/access-log.ts), their checks, and the headers it logs: every request header a
 * rule reads, plus those asked for, minus those that carry a secret.
 *
 * A keyed hash of a secret header is not offered: stock Envoy has no access-log operator that hashes
 * a value, its CEL formatter's functions include no hash, and its Lua filter's API offers base64,
 * signature verification and public-key import but no digest or HMAC. A secret header is therefore
 * logged not at all (`SecretHeaderForm.Omit`); replay then counts its requests as without the header.
 */
import { ACCESS_LOG_HEADERS_CHECK } from "./gateway-access-log-fields";
import { bindCrossCheck } from "../../lib/cross-checks";
import { Problem } from "../../lib/problems";
import { AccessLogFilterOptions } from "../../builders/access-log";
import { HEADER_NAME } from "../rules/rule-field-checks";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { GatewayAccessLogArgs, SecretHeaderArgs } from "./gateway-access-log-args.generated";
import { ACCESS_LOG_FIELDS, SECRET_HEADER_FIELDS, SecretHeaderForm } from "./gateway-access-log-fields";

export { GatewayAccessLogArgs, SecretHeaderArgs, SecretHeaderForm };

/** The access log resolved: the file, the headers and the verified claims logged (the gateway's pods and ports are the instance's). */
export type ResolvedAccessLog = Pick<AccessLogFilterOptions, "path" | "headers" | "claims">;

/** Problems of each header name of a list, under `at[i]`. */
function nameProblems(at: string, names: unknown[]): Problem[] {
    return names.flatMap((n, i) => {
        if (typeof n === "string" && HEADER_NAME.test(n) && !n.startsWith(":")) return [];
        const lower = typeof n === "string" ? n.toLowerCase() : "";
        return [
            {
                key: `${at}[${i}]`,
                value: n,
                problem: "is not a request header name in lower case (pseudo-headers such as :path are logged already)",
                fix: HEADER_NAME.test(lower) && !lower.startsWith(":") ? `use "${lower}"` : `use a header name such as "x-api-key"`,
            },
        ];
    });
}

/** Request headers that carry credentials: logging them writes replayable tokens to the log. */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "cookie", "proxy-authorization"];

/** The problems of logging a header that carries a secret (a credential, or one in secretHeaders) without accepting it by name. */
function secretLogged(at: string, name: string, why: string): Problem {
    return {
        key: at,
        value: name,
        problem: `${why}: logging it writes a secret to the gateway's access log, where anyone who reads the log can reuse it`,
        fix: `leave "${name}" out of accessLog.headers (replay counts its requests without it), or accept logging it with accessLog.acceptLoggedSecrets: ["${name}"]`,
    };
}

/** The checks of `accessLog`; its problems pushed, its headers returned (rules' headers first). */
function checkedHeaders(log: GatewayAccessLogArgs, ruleHeaders: string[], problems: Problem[]): string[] {
    const extra: unknown[] = Array.isArray(log.headers) ? log.headers : [];
    const secret: SecretHeaderArgs[] = Array.isArray(log.secretHeaders) ? log.secretHeaders : [];
    if (log.headers !== undefined && !Array.isArray(log.headers))
        problems.push({ key: "accessLog.headers", value: log.headers, problem: "is not a list", fix: `give a list of header names, e.g. ["x-tenant"]` });
    if (log.secretHeaders !== undefined && !Array.isArray(log.secretHeaders))
        problems.push({ key: "accessLog.secretHeaders", value: log.secretHeaders, problem: "is not a list", fix: `give a list, e.g. [{ name: "x-api-key" }]` });
    problems.push(...nameProblems("accessLog.headers", extra));
    problems.push(
        ...nameProblems(
            "accessLog.secretHeaders",
            secret.map((s) => s?.name),
        ).map((p) => ({ ...p, key: `${p.key}.name` })),
    );
    secret.forEach((s, i) => problems.push(...givenProblems(SECRET_HEADER_FIELDS.as, `accessLog.secretHeaders[${i}].as`, s?.as)));
    const accepted = acceptedSecrets(log, problems);
    const hidden = new Set(secret.map((s) => s?.name).filter((n) => !accepted.has(n)));
    extra.forEach((n, i) => {
        if (typeof n !== "string" || accepted.has(n)) return;
        if (hidden.has(n)) problems.push(secretLogged(`accessLog.headers[${i}]`, n, "is in accessLog.secretHeaders"));
        else if (CREDENTIAL_HEADERS.includes(n)) problems.push(secretLogged(`accessLog.headers[${i}]`, n, "carries a client's credentials"));
    });
    // A rule reading a credential header logs it too (the log records what the rules read): refused unless kept out or accepted.
    for (const n of ruleHeaders)
        if (CREDENTIAL_HEADERS.includes(n) && !accepted.has(n) && !hidden.has(n))
            problems.push({
                ...secretLogged("accessLog", n, `a rule reads "${n}", which carries a client's credentials, so the access log would record it`),
                fix: `keep it out with accessLog.secretHeaders: [{ name: "${n}" }] (replay then counts that rule's requests without it), or accept logging it with accessLog.acceptLoggedSecrets: ["${n}"]`,
            });
    return [...new Set([...ruleHeaders, ...(extra.filter((n) => typeof n === "string") as string[])])].filter((n) => !hidden.has(n));
}

/** The names of `acceptLoggedSecrets`, checked. */
function acceptedSecrets(log: GatewayAccessLogArgs, problems: Problem[]): Set<string> {
    const given = log.acceptLoggedSecrets;
    if (given === undefined) return new Set();
    if (!Array.isArray(given)) {
        problems.push({
            key: "accessLog.acceptLoggedSecrets",
            value: given,
            problem: "is not a list",
            fix: `give a list of header names, e.g. ["authorization"]`,
        });
        return new Set();
    }
    problems.push(...nameProblems("accessLog.acceptLoggedSecrets", given));
    return new Set(given.filter((n): n is string => typeof n === "string"));
}

/** What the gateway logs of `accessLog`: its file and headers (none without it); its problems pushed. The builder is builders/access-log.ts. */
export function accessLogOf(
    log: GatewayAccessLogArgs | undefined,
    ruleHeaders: string[],
    problems: Problem[],
    ruleClaims: string[] = [],
): ResolvedAccessLog | undefined {
    if (log === undefined) return undefined;
    if (log === null || typeof log !== "object" || Array.isArray(log)) {
        problems.push({ key: "accessLog", value: log, problem: "is not an object", fix: "give {} for the defaults, or leave accessLog out" });
        return undefined;
    }
    const headers = checkedHeaders(log, ruleHeaders, problems);
    problems.push(...givenProblems(ACCESS_LOG_FIELDS.path, "accessLog.path", log.path));
    const path = withDefaults(ACCESS_LOG_FIELDS, log).path;
    return { path, headers, ...(ruleClaims.length ? { claims: ruleClaims } : {}) };
}

/**
 * The verified claims the identity rules count (`identity.jwt.claim`, `sub` by default), with `iss`
 * first: the access log records them (never the token), so replay counts those rules as the gateway
 * does; none without identity rules.
 */
export function ruleClaimNames(rules: unknown): string[] {
    const list: any[] = Array.isArray(rules) ? rules : [];
    const claims = list.filter((r) => r?.identity?.jwt).map((r) => r.identity.jwt.claim ?? "sub");
    const names = claims.filter((c): c is string => typeof c === "string" && /^[A-Za-z0-9_.-]+$/.test(c));
    return names.length ? [...new Set(["iss", ...names])] : [];
}

/** The request headers the rules read (`header.name`, `cost.requestHeader`), in order, once each. */
export function ruleHeaderNames(rules: unknown): string[] {
    const list: any[] = Array.isArray(rules) ? rules : [];
    const names = list.flatMap((r) => [r?.header?.name, r?.cost?.requestHeader]);
    return [...new Set(names.filter((n): n is string => typeof n === "string" && !n.startsWith(":")))];
}

/** The logged headers' cross-field check (gateway-access-log-fields.ts). */
bindCrossCheck(ACCESS_LOG_HEADERS_CHECK, "gateway-access-log.ts checkedHeaders, acceptedSecrets", checkedHeaders);
bindCrossCheck(ACCESS_LOG_HEADERS_CHECK, "gateway-access-log.ts checkedHeaders, acceptedSecrets", acceptedSecrets);
