/**
 * Bookinfo's arguments resolved once: every problem under its property path, or a read-only value
 * with every default filled in (`ResolvedBookinfo`, what builders/bookinfo.ts builds from). Pure.
 */
import { bindCrossCheck } from "../../lib/cross-checks";
import { MESH_ROUTE_CHECKS } from "../rules/mesh-route-fields";
import { DEFAULTS } from "../common/defaults";
import { Problem } from "../../lib/problems";
import { componentFieldProblems } from "../common/arg-checks";
import { BOOKINFO_ARG_TYPES } from "./arg-types";
import { defaultsOf, givenProblems } from "../../lib/field-decl";
import { GatewayHostScope, MeshMode } from "../common/mesh-enums";
import { BookinfoArgs } from "./args.generated";
import { BOOKINFO_ARGS_FIELDS, BOOKINFO_OPTIONS_FIELDS } from "./fields";
import { ResolvedBookinfo, ResolvedHttpRoute } from "../../builders/bookinfo";
import { HttpRoute, defaultRoutes } from "../../builders/routes";
import { UNSENDABLE_PATH, pathAsSent } from "../../lib/formats";

/** The sample's Gateway and VirtualService as the stack's settings hold them (MeshRateLimit's `bookinfo`, defaults filled in). */
export interface BookinfoSettings {
    namespace: string;
    /** Hosts of the VirtualService, and of the Gateway's server (each as `<namespace>/<host>` with `gatewayHostScope` `own-namespace`). */
    hosts: string[];
    /** Which namespaces' VirtualServices the Gateway admits. */
    gatewayHostScope: GatewayHostScope;
    version: string;
    gatewayName: string;
    gatewayPort: number;
    virtualServiceName: string;
    routes: HttpRoute[];
}

const { namespace, gatewayName, virtualServiceName, gatewayPort, routes: _routes, ...otherOptions } = BOOKINFO_OPTIONS_FIELDS;
/** Bookinfo's plain fields, in the order their problems are reported: the names and port first. */
const PLAIN_FIELDS = { namespace, gatewayName, virtualServiceName, gatewayPort, ...BOOKINFO_ARGS_FIELDS, ...otherOptions };
/** Their declared defaults, in the interfaces' order. */
const BOOKINFO_DEFAULTS = defaultsOf({ ...BOOKINFO_OPTIONS_FIELDS, ...BOOKINFO_ARGS_FIELDS });

/** The plain fields given (null as not given), by name. */
function givenFields(a: BookinfoArgs): Partial<Record<keyof typeof PLAIN_FIELDS, unknown>> {
    return Object.fromEntries(Object.keys(PLAIN_FIELDS).flatMap((k) => (a[k as keyof BookinfoArgs] != null ? [[k, a[k as keyof BookinfoArgs]]] : [])));
}

/** The arguments with every default filled in, not yet checked. */
function withDefaults(a: BookinfoArgs): BookinfoSettings & {
    gatewaySelector: Record<string, string>;
    localStatsApp: string;
    awaitRollout: boolean;
    meshMode: MeshMode;
    gatewayApiNamespace: string;
    localWaypoint?: string;
} {
    const d = (k: keyof typeof DEFAULTS) => String(DEFAULTS[k]);
    const paths = {
        limited: d("limitedPath"),
        page: d("pagePath"),
        login: d("loginPath"),
        logout: d("logoutPath"),
        staticPrefix: d("staticPrefix"),
        apiPrefix: d("apiPrefix"),
    };
    const routes: HttpRoute[] = (a.routes ?? defaultRoutes(paths, true, d("apiRoute"))).map((r) => ({
        ...(r.name !== undefined ? { name: r.name } : {}),
        exact: r.exact ?? [],
        prefix: r.prefix ?? [],
    }));
    return { ...BOOKINFO_DEFAULTS, ...givenFields(a), routes } as ReturnType<typeof withDefaults>;
}

/** Every problem of Bookinfo's arguments, each under its property path, or the resolved value (pure). */
export function resolveBookinfo(args: BookinfoArgs): { problems: Problem[]; value?: ResolvedBookinfo } {
    const a: BookinfoArgs = args ?? {};
    const b = withDefaults(a);
    // Each plain field's declared rule on the value given (a default is valid), then the routes.
    const given = givenFields(a);
    const problems: Problem[] = [
        ...componentFieldProblems(BOOKINFO_ARG_TYPES, "Bookinfo", args),
        ...Object.entries(PLAIN_FIELDS).flatMap(([k, decl]) => givenProblems(decl, k, given[k as keyof typeof PLAIN_FIELDS])),
        ...routeProblems(b.routes, a.routes),
    ];
    if (problems.length) return { problems };
    const routes = b.routes.map((r): ResolvedHttpRoute => Object.freeze({ ...r, exact: Object.freeze([...r.exact]), prefix: Object.freeze([...r.prefix]) }));
    return {
        problems,
        value: Object.freeze({
            ...b,
            hosts: Object.freeze([...b.hosts]),
            routes: Object.freeze(routes),
            gatewaySelector: Object.freeze({ ...b.gatewaySelector }),
        }),
    };
}

/** The routes: each with paths a client can send, no exact path dead behind an earlier route, names distinct. */
function routeProblems(routes: HttpRoute[], given: unknown): Problem[] {
    const out: Problem[] = [];
    if (!routes.length) out.push({ key: "routes", value: given, problem: "must hold at least one route", fix: "omit routes for the specification's" });
    routes.forEach((r, i) => {
        const bad = [...r.exact, ...r.prefix].filter((p) => typeof p !== "string" || !p.startsWith("/"));
        if (bad.length || r.exact.length + r.prefix.length === 0)
            out.push({
                key: `routes[${i}]`,
                value: r,
                problem: "needs exact and/or prefix paths starting with '/'",
                fix: 'give e.g. { exact: ["/productpage"] }',
            });
        for (const kind of ["exact", "prefix"] as const)
            r[kind].forEach((p, j) => {
                if (typeof p === "string" && p.startsWith("/") && pathAsSent(p) !== p)
                    out.push({ key: `routes[${i}].${kind}[${j}]`, value: p, problem: UNSENDABLE_PATH, fix: `use "${pathAsSent(p)}"` });
            });
    });
    // Istio serves a request by the first route that matches it: an exact path a route before holds already is dead.
    const firstRouteOf = new Map<unknown, number>();
    routes.forEach((r, i) =>
        r.exact.forEach((p, j) => {
            const first = firstRouteOf.get(p);
            if (first === undefined) firstRouteOf.set(p, i);
            else
                out.push({
                    key: `routes[${i}].exact[${j}]`,
                    value: p,
                    problem: `is matched by routes[${first}] ${first === i ? "already" : "first"}: Istio serves a request by the first route that matches it, so this match is dropped`,
                    fix: "keep the path in one route only",
                });
        }),
    );
    const names = routes.map((r) => r.name).filter(Boolean);
    if (new Set(names).size !== names.length) out.push({ key: "routes", value: names, problem: "route names must be distinct", fix: "rename one of them" });
    return out;
}

/** Bookinfo's plan: its arguments (the very object given) and what `resolveBookinfo` makes of them, for `opts.plan`. */
export interface BookinfoPlan {
    readonly args: BookinfoArgs;
    readonly problems: Problem[];
    readonly value?: ResolvedBookinfo;
}

/** `resolveBookinfo` of `args`, with the arguments it was made of (what `planOrCompute` compares). */
export function planBookinfo(args: BookinfoArgs): BookinfoPlan {
    return { args, ...resolveBookinfo(args) };
}

/** The routes' cross-field check (mesh-route-fields.ts). */
bindCrossCheck(MESH_ROUTE_CHECKS.routes, "bookinfo-resolve.ts routeProblems", routeProblems);
