/**
 * Checks of the rate-limit filter's own fields that more than one filter shares (GlobalRateLimit's,
 * its per-value store's), each running the field's declaration in global-ratelimit-fields.ts.
 */
import { Problem } from "../../lib/problems";
import { fieldProblem } from "../../lib/field-checks";
import { givenProblems } from "../../lib/field-decl";
import { fieldRef } from "../../lib/fix-style";
import { GLOBAL_FIELDS } from "./fields";

/** `rateLimitHeaders` (of any filter): one of RateLimitHeaders' values; a switch word (`on`, `true`, `off`, `false`) fixed to the value it means. */
export function rateLimitHeadersProblems(value: unknown): Problem[] {
    return givenProblems(GLOBAL_FIELDS.rateLimitHeaders, "rateLimitHeaders", value);
}

/**
 * `statusOnError` (of a filter that calls a rate-limit service, its fields under `prefix`): one of
 * ErrorStatus' values, and only when the filter fails closed (`failsClosed`: its `failureModeDeny`,
 * defaulted), since failing open lets the request pass and the status is never sent. The one
 * statement of the rule: GlobalRateLimit, its per-value store and the stack's keys all report it here.
 */
export function statusOnErrorProblems(prefix: string, statusOnError: unknown, failsClosed: boolean): Problem[] {
    if (statusOnError === undefined) return [];
    const status = `${prefix}statusOnError`;
    const deny = `${prefix}failureModeDeny`;
    const unknown = givenProblems(GLOBAL_FIELDS.statusOnError, status, statusOnError);
    if (unknown.length || failsClosed) return unknown;
    return [
        fieldProblem(
            status,
            statusOnError,
            `has no effect unless ${fieldRef(deny)} is true (the request passes when the service cannot answer)`,
            (s) => `${s.rm(status)}, or ${s.set(deny, "true")}`,
        ),
    ];
}
