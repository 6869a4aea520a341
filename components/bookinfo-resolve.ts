/**
 * Bookinfo's arguments resolved once: every problem under its property path, or a read-only value
 * with every default filled in (`ResolvedBookinfo`, what builders/bookinfo.ts builds from). Pure.
 */
import { DEFAULTS } from "./defaults";
import { Problem } from "../lib/problems";
import { selectorProblems, unknownFieldProblems } from "./arg-checks";
import { dnsNameProblems, oneOfProblems, wholeNumberProblems } from "../lib/field-checks";
import { GatewayHostScope } from "./mesh-enums";
import { BookinfoArgs, BookinfoSettings } from "./bookinfo-args";
import { ResolvedBookinfo, ResolvedHttpRoute } from "../builders/bookinfo";
import { HttpRoute, defaultRoutes } from "../builders/routes";
import { UNSENDABLE_PATH, isGatewayHost, pathAsSent } from "../lib/formats";

/** Bookinfo's names and port, each rule with one message and a fix in every style (MeshRateLimit reports them under `bookinfo.`). */
export function bookinfoNameProblems(b: Pick<BookinfoSettings, "namespace" | "gatewayName" | "virtualServiceName" | "gatewayPort">): Problem[] {
    return [
        ...dnsNameProblems("namespace", b.namespace, "label"),
        ...dnsNameProblems("gatewayName", b.gatewayName, "subdomain"),
        ...dnsNameProblems("virtualServiceName", b.virtualServiceName, "subdomain"),
        ...wholeNumberProblems("gatewayPort", b.gatewayPort, { min: 1, max: 65535, fallback: DEFAULTS.gatewayPort }),
    ];
}

const d = (k: keyof typeof DEFAULTS) => String(DEFAULTS[k]);

/** The arguments with every default filled in, not yet checked. */
function withDefaults(a: BookinfoArgs): BookinfoSettings & { gatewaySelector: Record<string, string>; localStatsApp: string; awaitRollout: boolean } {
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
    const [selKey, selValue] = d("gatewaySelector").split("=");
    return {
        namespace: a.namespace ?? d("workloadNamespace"),
        version: a.version ?? d("bookinfoVersion"),
        gatewayName: a.gatewayName ?? d("gatewayName"),
        gatewayPort: a.gatewayPort ?? Number(d("gatewayPort")),
        hosts: a.hosts ?? d("gatewayHosts").split(","),
        gatewayHostScope: a.gatewayHostScope ?? DEFAULTS.gatewayHostScope,
        virtualServiceName: a.virtualServiceName ?? d("virtualServiceName"),
        routes,
        gatewaySelector: a.gatewaySelector ?? { [selKey]: selValue },
        localStatsApp: a.localStatsApp ?? d("serviceLabel"),
        awaitRollout: a.awaitRollout ?? DEFAULTS.awaitRollout,
    };
}

/** Every problem of Bookinfo's arguments, each under its property path, or the resolved value (pure). */
export function resolveBookinfo(args: BookinfoArgs): { problems: Problem[]; value?: ResolvedBookinfo } {
    const a: BookinfoArgs = args ?? {};
    const b = withDefaults(a);
    const problems: Problem[] = [
        ...unknownFieldProblems("Bookinfo", args),
        ...bookinfoNameProblems(b),
        ...selectorProblems("gatewaySelector", b.gatewaySelector),
    ];
    if (typeof b.version !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(b.version))
        problems.push({ key: "version", value: b.version, problem: "must be an image tag", fix: `use "${d("bookinfoVersion")}"` });
    if (!Array.isArray(b.hosts) || !b.hosts.length || b.hosts.some((h) => typeof h !== "string" || !isGatewayHost(h))) {
        problems.push({
            key: "hosts",
            value: a.hosts,
            problem: "must be a non-empty list of hosts ('*', '*.<domain>' or DNS names, no port)",
            fix: 'use e.g. ["bookinfo.example.com"], or omit it for ["*"]',
        });
    }
    problems.push(...oneOfProblems("gatewayHostScope", b.gatewayHostScope, Object.values(GatewayHostScope), DEFAULTS.gatewayHostScope));
    problems.push(...routeProblems(b.routes, a.routes));
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
