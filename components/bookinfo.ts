/**
 * Istio's bookinfo sample (the workloads the limits protect), its Gateway and VirtualService.
 */
import { DEFAULTS } from "./defaults";
import { Problem } from "../lib/problems";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { INJECT_LABEL, SKIP_AWAIT, awaitAnnotations, stackLabels } from "../lib/common";
import { Gateway, GatewaySpec, VirtualService, VirtualServiceSpec } from "./crds";
import { LOCAL_STAT_PREFIX, gatewayVirtualHosts } from "../builders/envoy-filters";
import { PlannedOptions, planOrCompute, selectorProblems, argsError, unknownFieldProblems } from "./arg-checks";
import { dnsNameProblems, oneOfProblems, wholeNumberProblems } from "../lib/field-checks";
import { GatewayHostScope, HttpRouteArgs } from "./mesh-enums";
import { BOOKINFO_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../lib/pod-security";

import { HttpRoute, defaultRoutes } from "../builders/routes";
import { UNSENDABLE_PATH, isGatewayHost, pathAsSent } from "../lib/formats";

export const BOOKINFO_PORT = 9080;

/** The bookinfo services and the versions deployed of each. */
export const BOOKINFO_APPS: readonly { app: string; versions: string[] }[] = [
    { app: "details", versions: ["v1"] },
    { app: "ratings", versions: ["v1"] },
    { app: "reviews", versions: ["v1", "v2", "v3"] },
    { app: "productpage", versions: ["v1"] },
];

/** The sample's Gateway and VirtualService, as the stack's settings and Bookinfo's args resolve them. */
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

/** Gateway with one HTTP server on `port` for `hosts`, for the gateway pods `selector` selects. */
export function gatewaySpecFor(selector: Record<string, string>, port: number, hosts: string[]): GatewaySpec {
    return { selector, servers: [{ port: { number: port, name: "http", protocol: "HTTP" }, hosts: [...hosts] }] };
}

/**
 * The hosts of the Gateway's server: with `own-namespace`, Istio's `<namespace>/<host>` form for each
 * VirtualService host, so only VirtualServices of bookinfo's namespace bind (another namespace's
 * VirtualService with a host of its own would get a virtual host of its own on the stack's port,
 * without the patches that name the stack's); `any-namespace`: the hosts as given (spec 2.5).
 * The namespace part changes no virtual-host name: `default/*` with the VirtualService's `*` is `*:<port>`.
 */
export function gatewayServerHosts(b: Pick<BookinfoSettings, "namespace" | "hosts" | "gatewayHostScope">): string[] {
    return b.gatewayHostScope === GatewayHostScope.AnyNamespace ? [...b.hosts] : b.hosts.map((h) => `${b.namespace}/${h}`);
}

/** Spec 2.5: routes to productpage; in variant A the API prefix is a separate route named `api`. */
export function virtualServiceSpec(s: { bookinfo: BookinfoSettings }): VirtualServiceSpec {
    const destination = { host: "productpage", port: { number: BOOKINFO_PORT } };
    return {
        hosts: [...s.bookinfo.hosts],
        gateways: [s.bookinfo.gatewayName],
        http: s.bookinfo.routes.map((r) => ({
            ...(r.name ? { name: r.name } : {}),
            match: [...r.exact.map((p) => ({ uri: { exact: p } })), ...r.prefix.map((p) => ({ uri: { prefix: p } }))],
            route: [{ destination }],
        })),
    };
}

/**
 * What each bookinfo program writes, so the image itself can stay read-only: productpage and
 * reviews get an emptyDir at /tmp, reviews (Open Liberty) also at its output directory, with its
 * logs moved to /tmp/logs (as Istio's bookinfo.yaml does); details and ratings write nothing.
 */
export const BOOKINFO_WRITABLE_DIRS: Readonly<Record<string, { name: string; mountPath: string }[]>> = {
    productpage: [{ name: "tmp", mountPath: "/tmp" }],
    reviews: [
        { name: "tmp", mountPath: "/tmp" },
        { name: "wlp-output", mountPath: "/opt/ibm/wlp/output" },
    ],
};

/**
 * The sample's names, hosts and routes: Bookinfo's arguments, and MeshRateLimit's `bookinfo` (which
 * adds `mode`). Each field documented here once.
 */
export interface BookinfoOptions {
    /** Namespace of the sample (must exist; the pods ask for a sidecar themselves). In MeshRateLimit also the local bucket's EnvoyFilter's, and by default the managed API's; the rate-limit service and Redis go to `global.namespace`. Defaults to `default`. */
    namespace?: string;
    /** Tag of the `docker.io/istio/examples-bookinfo-*` images. Defaults to `1.20.2`. */
    version?: string;
    /** Name of the Gateway. Defaults to `bookinfo-gateway`. */
    gatewayName?: string;
    /** Port of the Gateway's HTTP server; Istio names its virtual hosts `<host>:<gatewayPort>`, and the rate-limit filter goes on this listener port only. It must be a port the gateway pods bind: when the gateway's Service has this port, Istio binds its `targetPort` instead (the default istio-ingressgateway Service maps 80 to 8080 and 443 to 8443), and the filter would land nowhere. 8080, as in the specification, is the pods' own port. Defaults to `8080`. */
    gatewayPort?: number;
    /** Hosts of the Gateway and the VirtualService (spec 2.5: `*`). The gateway patches name exactly their virtual hosts `<host>:<gatewayPort>` (Istio's names), so another team's host on the same gateway is never limited. The Gateway's server takes them as `<namespace>/<host>`, admitting only the VirtualServices of `namespace` (see `gatewayHostScope`). Defaults to `["*"]`. */
    hosts?: string[];
    /** Which VirtualServices the Gateway admits. `own-namespace`: only those of `namespace` (server hosts `<namespace>/<host>`, `default/*` by default; the virtual host is still `*:<gatewayPort>`), so no other namespace can bind a host of its own to the Gateway and reach the sample around the limits. `any-namespace`: spec 2.5 literally, server hosts as given: a VirtualService of **any namespace** can bind a host of its own, and Istio gives that host a virtual host of its own without the limits, a side door to productpage (MeshRateLimit's `pulumi preview` refuses when one exists). Only for a gateway the stack has to itself. Defaults to `own-namespace`. */
    gatewayHostScope?: GatewayHostScope;
    /** Name of the VirtualService (spec `<virtual_service_name>`). Defaults to `bookinfo`. */
    virtualServiceName?: string;
    /** The VirtualService's HTTP routes to productpage, each `{name?, exact?, prefix?}`. Defaults to the specification's split (page, login, logout, static; then `api` for the API prefix); MeshRateLimit's variant B: one route with every match. */
    routes?: HttpRouteArgs[];
}

/** Requests and limits per app: reviews is a JVM, the others small interpreters. */
export const BOOKINFO_RESOURCES: Readonly<Record<string, { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } }>> = {
    details: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    ratings: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    reviews: { requests: { cpu: "50m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
    productpage: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
};

export interface BookinfoArgs extends BookinfoOptions {
    /** Labels of the ingress gateway pods the Gateway selects. Defaults to `{ istio: "ingressgateway" }`. */
    gatewaySelector?: Record<string, string>;
    /** `app` label of the workload whose sidecar exports the local limiter's counters. Defaults to `productpage`. */
    localStatsApp?: string;
    /** Wait for the Deployments to become ready. Defaults to `true`. */
    awaitRollout?: boolean;
}

/** Bookinfo's names and port, each rule with one message and a fix in every style (MeshRateLimit reports them under `bookinfo.`). */
export function bookinfoNameProblems(b: Pick<BookinfoSettings, "namespace" | "gatewayName" | "virtualServiceName" | "gatewayPort">): Problem[] {
    return [
        ...dnsNameProblems("namespace", b.namespace, "label"),
        ...dnsNameProblems("gatewayName", b.gatewayName, "subdomain"),
        ...dnsNameProblems("virtualServiceName", b.virtualServiceName, "subdomain"),
        ...wholeNumberProblems("gatewayPort", b.gatewayPort, { min: 1, max: 65535, fallback: DEFAULTS.gatewayPort }),
    ];
}

export function planBookinfo(args: BookinfoArgs): {
    /** The arguments planned (the very object given). */
    args: BookinfoArgs;
    problems: Problem[];
    s: { bookinfo: BookinfoSettings; awaitRollout: boolean };
    selector: Record<string, string>;
    statsApp: string;
} {
    const a: BookinfoArgs = args ?? {};
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
    const [selKey, selValue] = d("gatewaySelector").split("=");
    const selector = a.gatewaySelector ?? { [selKey]: selValue };
    const s = {
        awaitRollout: a.awaitRollout ?? DEFAULTS.awaitRollout,
        bookinfo: {
            namespace: a.namespace ?? d("workloadNamespace"),
            version: a.version ?? d("bookinfoVersion"),
            gatewayName: a.gatewayName ?? d("gatewayName"),
            gatewayPort: a.gatewayPort ?? Number(d("gatewayPort")),
            hosts: a.hosts ?? d("gatewayHosts").split(","),
            gatewayHostScope: a.gatewayHostScope ?? DEFAULTS.gatewayHostScope,
            virtualServiceName: a.virtualServiceName ?? d("virtualServiceName"),
            routes,
        },
    };
    const b = s.bookinfo;
    const problems: Problem[] = [...unknownFieldProblems("Bookinfo", args), ...bookinfoNameProblems(b), ...selectorProblems("gatewaySelector", selector)];
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
    problems.push(...routeProblems(routes, a.routes));
    return { args, problems, s, selector, statsApp: a.localStatsApp ?? d("serviceLabel") };
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

/** What `planBookinfo` computes. */
export type BookinfoPlan = ReturnType<typeof planBookinfo>;

/** Istio's names of the virtual hosts the sample's Gateway and VirtualService give the gateway (`*:8080` by default). */
export function bookinfoVirtualHosts(plan: Pick<BookinfoPlan, "s" | "selector">): string[] {
    const b = plan.s.bookinfo;
    return gatewayVirtualHosts(gatewaySpecFor(plan.selector, b.gatewayPort, gatewayServerHosts(b)).servers, virtualServiceSpec(plan.s).hosts);
}

export class Bookinfo extends pulumi.ComponentResource {
    /** Namespace of the sample. */
    public readonly namespace: string;
    /** Name of its Gateway (what a VirtualService's `gateways` names). */
    public readonly gatewayName: string;
    /** Name of its VirtualService. */
    public readonly virtualServiceName: string;
    /** Istio's names (`<host>:<port>`) of the gateway virtual hosts its Gateway and VirtualService make. */
    public readonly virtualHosts: string[];

    /** `opts.plan`: the `planBookinfo` of these same `args`, when the caller has it already. */
    constructor(name: string, args: BookinfoArgs, opts?: PlannedOptions<BookinfoPlan>) {
        const { plan, opts: options } = planOrCompute(`Bookinfo ${name}`, args, opts, planBookinfo);
        if (plan.problems.length) throw argsError(`Bookinfo ${name}`, plan.problems);
        super("mesh-ratelimit:index:Bookinfo", name, {}, options);
        const s = plan.s;
        const ns = s.bookinfo.namespace;

        for (const { app, versions } of BOOKINFO_APPS) {
            const labels = stackLabels("bookinfo", { app });
            new k8s.core.v1.ServiceAccount(`bookinfo-${app}`, { metadata: { name: `bookinfo-${app}`, namespace: ns, labels } }, { parent: this });
            new k8s.core.v1.Service(
                app,
                {
                    metadata: { name: app, namespace: ns, labels: { ...labels, service: app }, annotations: SKIP_AWAIT },
                    spec: { selector: { app }, ports: [{ name: "http", port: BOOKINFO_PORT, targetPort: BOOKINFO_PORT, protocol: "TCP" }] },
                },
                { parent: this },
            );
            for (const version of versions) {
                new k8s.apps.v1.Deployment(
                    `${app}-${version}`,
                    {
                        metadata: { name: `${app}-${version}`, namespace: ns, labels: { ...labels, version }, annotations: awaitAnnotations(s) },
                        spec: bookinfoDeploymentSpec(app, version, labels, s.bookinfo.version, plan.statsApp),
                    },
                    { parent: this },
                );
            }
        }

        const labels = stackLabels("bookinfo");
        new Gateway(
            s.bookinfo.gatewayName,
            {
                metadata: { name: s.bookinfo.gatewayName, namespace: ns, labels },
                spec: gatewaySpecFor(plan.selector, s.bookinfo.gatewayPort, gatewayServerHosts(s.bookinfo)),
            },
            { parent: this },
        );
        new VirtualService(
            s.bookinfo.virtualServiceName,
            { metadata: { name: s.bookinfo.virtualServiceName, namespace: ns, labels }, spec: virtualServiceSpec(s) },
            { parent: this },
        );
        this.namespace = ns;
        this.gatewayName = s.bookinfo.gatewayName;
        this.virtualServiceName = s.bookinfo.virtualServiceName;
        this.virtualHosts = bookinfoVirtualHosts(plan);
        this.registerOutputs({
            namespace: this.namespace,
            gatewayName: this.gatewayName,
            virtualServiceName: this.virtualServiceName,
            virtualHosts: this.virtualHosts,
        });
    }
}

/** The Deployment's spec of one version of one bookinfo app: one pod, Pod Security `restricted`, writable folders as emptyDirs. */
function bookinfoDeploymentSpec(
    app: string,
    version: string,
    labels: Record<string, string>,
    imageTag: string,
    statsApp: string,
): k8s.types.input.apps.v1.DeploymentSpec {
    const writable = BOOKINFO_WRITABLE_DIRS[app] ?? [];
    const podLabels = { ...labels, version, ...INJECT_LABEL };
    // Export the local limiter's counters from the sidecar (they are filtered out by default).
    const podAnnotations =
        app === statsApp ? { "proxy.istio.io/config": JSON.stringify({ proxyStatsMatcher: { inclusionRegexps: [`.*${LOCAL_STAT_PREFIX}.*`] } }) } : undefined;
    return {
        replicas: 1,
        selector: { matchLabels: { app, version } },
        template: {
            metadata: { labels: podLabels, annotations: podAnnotations },
            spec: {
                serviceAccountName: `bookinfo-${app}`,
                // Pod Security `restricted`, as the images' own unprivileged user.
                securityContext: restrictedPodSecurityContext(BOOKINFO_UID),
                containers: [
                    {
                        name: app,
                        image: `docker.io/istio/examples-bookinfo-${app}-${version}:${imageTag}`,
                        ports: [{ containerPort: BOOKINFO_PORT }],
                        ...(app === "reviews" ? { env: [{ name: "LOG_DIR", value: "/tmp/logs" }] } : {}),
                        ...(writable.length ? { volumeMounts: writable } : {}),
                        resources: BOOKINFO_RESOURCES[app],
                        securityContext: restrictedContainerSecurityContext(true),
                    },
                ],
                ...(writable.length ? { volumes: writable.map((w) => ({ name: w.name, emptyDir: {} })) } : {}),
            },
        },
    };
}
