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
import { Problem } from "../lib/problems";
import { AccessLogFilterOptions } from "../builders/access-log";
import { HEADER_NAME } from "./rule-field-checks";
import { givenProblems } from "../lib/field-decl";
import { GatewayAccessLogArgs, SecretHeaderArgs } from "./gateway-access-log-args";
import { ACCESS_LOG_FIELDS, SECRET_HEADER_FIELDS, SecretHeaderForm } from "./gateway-access-log-fields";

export { GatewayAccessLogArgs, SecretHeaderArgs, SecretHeaderForm };

/** The access log resolved: the file and the headers logged (the gateway's pods and ports are the instance's). */
export type ResolvedAccessLog = Pick<AccessLogFilterOptions, "path" | "headers">;

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
    const hidden = new Set(secret.map((s) => s?.name));
    extra.forEach((n, i) => {
        if (hidden.has(n as string))
            problems.push({
                key: `accessLog.headers[${i}]`,
                value: n,
                problem: "is also in accessLog.secretHeaders: it cannot be both logged and kept out",
                fix: "remove it from one of the two lists",
            });
    });
    return [...new Set([...ruleHeaders, ...(extra.filter((n) => typeof n === "string") as string[])])].filter((n) => !hidden.has(n));
}

/** What the gateway logs of `accessLog`: its file and headers (none without it); its problems pushed. The builder is builders/access-log.ts. */
export function accessLogOf(log: GatewayAccessLogArgs | undefined, ruleHeaders: string[], problems: Problem[]): ResolvedAccessLog | undefined {
    if (log === undefined) return undefined;
    if (log === null || typeof log !== "object" || Array.isArray(log)) {
        problems.push({ key: "accessLog", value: log, problem: "is not an object", fix: "give {} for the defaults, or leave accessLog out" });
        return undefined;
    }
    const headers = checkedHeaders(log, ruleHeaders, problems);
    problems.push(...givenProblems(ACCESS_LOG_FIELDS.path, "accessLog.path", log.path));
    const path = log.path ?? ACCESS_LOG_FIELDS.path.default;
    return { path, headers };
}

/** The request headers the rules read (`header.name`, `cost.requestHeader`), in order, once each. */
export function ruleHeaderNames(rules: unknown): string[] {
    const list: any[] = Array.isArray(rules) ? rules : [];
    const names = list.flatMap((r) => [r?.header?.name, r?.cost?.requestHeader]);
    return [...new Set(names.filter((n): n is string => typeof n === "string" && !n.startsWith(":")))];
}
