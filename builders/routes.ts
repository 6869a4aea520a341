/**
 * The bookinfo VirtualService's HTTP routes: their shape and the specification's defaults (spec 2.5).
 * Pure; the stack's config reader and the Bookinfo component both build on it.
 */

/** One HTTP route: exact paths and path prefixes; a named route can carry route-level limits. */
export interface HttpRoute {
    name?: string;
    exact: string[];
    prefix: string[];
}

/** The specification's paths (spec 2.5): the page, login, logout, static prefix and API prefix. */
export interface SpecPaths {
    limited: string;
    page: string;
    login: string;
    logout: string;
    staticPrefix: string;
    apiPrefix: string;
}

/** Full-match RE2 for `<prefix>/<n>` with n from 1 to 99 (no leading zero). */
export function defaultApiRegex(apiPrefix: string): string {
    return `${apiPrefix}/[1-9][0-9]?`;
}

/** Default VirtualService routes: spec 2.5 for variant A; one catch-all-matches route for B. */
export function defaultRoutes(p: SpecPaths, split: boolean, apiRoute: string): HttpRoute[] {
    const exact = [...new Set([p.page, p.login, p.logout])];
    if (split) {
        return [
            { exact, prefix: [p.staticPrefix] },
            { name: apiRoute, exact: [], prefix: [p.apiPrefix] },
        ];
    }
    return [{ exact, prefix: [p.staticPrefix, p.apiPrefix] }];
}
