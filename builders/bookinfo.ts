/**
 * Istio's bookinfo sample as Kubernetes and Istio objects: its Deployments and Services, its Gateway
 * and VirtualService, built from Bookinfo's resolved arguments (components/bookinfo/resolve.ts).
 * Pure: nothing here checks an argument or fills a default.
 */
import type * as k8s from "@pulumi/kubernetes";
import { meshEnrolment } from "../lib/common";
import { BOOKINFO_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../lib/pod-security";
import { LOCAL_STAT_PREFIX } from "./envoy-types";
import { gatewayVirtualHosts } from "./gateway-hosts";
import { INGRESS_USE_WAYPOINT_LABEL, USE_WAYPOINT_LABEL } from "./local-bucket-filter";
import { GatewaySpec, VirtualServiceSpec } from "./istio-types";

export const BOOKINFO_PORT = 9080;

/** The bookinfo services and the versions deployed of each. */
export const BOOKINFO_APPS: readonly { app: string; versions: string[] }[] = [
    { app: "details", versions: ["v1"] },
    { app: "ratings", versions: ["v1"] },
    { app: "reviews", versions: ["v1", "v2", "v3"] },
    { app: "productpage", versions: ["v1"] },
];

/**
 * What each bookinfo program writes, so the image itself can stay read-only: productpage and
 * reviews get an emptyDir at /tmp, reviews (Open Liberty) also at its output directory, with its
 * logs moved to /tmp/logs (as Istio's bookinfo.yaml does); details and ratings write nothing.
 */
export const BOOKINFO_WRITABLE_DIRS: Readonly<Record<string, { name: string; mountPath: string }[]>> = {
    details: [],
    ratings: [],
    productpage: [{ name: "tmp", mountPath: "/tmp" }],
    reviews: [
        { name: "tmp", mountPath: "/tmp" },
        { name: "wlp-output", mountPath: "/opt/ibm/wlp/output" },
    ],
};

/** Requests and limits per app: reviews is a JVM, the others small interpreters. */
export const BOOKINFO_RESOURCES: Readonly<Record<string, { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } }>> = {
    details: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    ratings: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    reviews: { requests: { cpu: "50m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
    productpage: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
};

/** One HTTP route of the VirtualService to productpage, resolved: its exact and prefix paths. */
export interface ResolvedHttpRoute {
    readonly name?: string;
    readonly exact: readonly string[];
    readonly prefix: readonly string[];
}

/** Bookinfo's arguments resolved once (components/bookinfo/resolve.ts): read-only, every default filled in. */
export interface ResolvedBookinfo {
    readonly namespace: string;
    /** Hosts of the VirtualService, and of the Gateway's server (see `gatewayServerHosts`). */
    readonly hosts: readonly string[];
    /** Which namespaces' VirtualServices the Gateway admits (components/common/mesh-enums.ts `GatewayHostScope`). */
    readonly gatewayHostScope: "own-namespace" | "any-namespace";
    /** Tag of the images. */
    readonly version: string;
    readonly gatewayName: string;
    readonly gatewayPort: number;
    readonly virtualServiceName: string;
    readonly routes: readonly ResolvedHttpRoute[];
    /** Labels of the ingress gateway pods the Gateway selects. */
    readonly gatewaySelector: Readonly<Record<string, string>>;
    /** `app` label of the workload whose sidecar exports the local limiter's counters. */
    readonly localStatsApp: string;
    readonly awaitRollout: boolean;
    /** `ambient`: no sidecars, and the ingress is a Gateway API Gateway (`gatewayName` in `gatewayApiNamespace`). */
    readonly meshMode: "sidecar" | "ambient";
    readonly gatewayApiNamespace: string;
    /** Ambient: the waypoint that serves `localStatsApp`'s Service (the local bucket's), if any. */
    readonly localWaypoint?: string;
}

/** The label Istio puts on the pods it deploys for a Gateway API Gateway, with the Gateway's name. */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

/**
 * On an ambient mesh, the Gateway API Gateway of class `istio` Istio deploys the ingress pods for: one
 * HTTP listener on the Gateway's port (Istio's Gateway API pods bind the port as it is). Its routes
 * are the VirtualService's, through the Gateway that selects these pods, so the routes keep their names.
 */
export function ambientIngressSpec(b: Pick<ResolvedBookinfo, "gatewayPort">) {
    return {
        gatewayClassName: "istio",
        listeners: [{ name: "http", port: b.gatewayPort, protocol: "HTTP" as const, allowedRoutes: { namespaces: { from: "Same" as const } } }],
    };
}

/** Gateway with one HTTP server on `port` for `hosts`, for the gateway pods `selector` selects. */
export function gatewaySpecFor(selector: Readonly<Record<string, string>>, port: number, hosts: readonly string[]): GatewaySpec {
    return { selector: { ...selector }, servers: [{ port: { number: port, name: "http", protocol: "HTTP" }, hosts: [...hosts] }] };
}

/**
 * The hosts of the Gateway's server: with `own-namespace`, Istio's `<namespace>/<host>` form for each
 * VirtualService host, so only VirtualServices of bookinfo's namespace bind (another namespace's
 * VirtualService with a host of its own would get a virtual host of its own on the stack's port,
 * without the patches that name the stack's); `any-namespace`: the hosts as given (spec 2.5).
 * The namespace part changes no virtual-host name: `default/*` with the VirtualService's `*` is `*:<port>`.
 */
export function gatewayServerHosts(b: Pick<ResolvedBookinfo, "namespace" | "hosts" | "gatewayHostScope">): string[] {
    return b.gatewayHostScope === "any-namespace" ? [...b.hosts] : b.hosts.map((h) => `${b.namespace}/${h}`);
}

/** The sample's Gateway: one HTTP server on the Gateway's port, for its server hosts. */
export function bookinfoGatewaySpec(
    b: Pick<ResolvedBookinfo, "gatewaySelector" | "gatewayPort" | "namespace" | "hosts" | "gatewayHostScope" | "meshMode" | "gatewayName">,
): GatewaySpec {
    const selector = b.meshMode === "ambient" ? { [GATEWAY_NAME_LABEL]: b.gatewayName } : b.gatewaySelector;
    return gatewaySpecFor(selector, b.gatewayPort, gatewayServerHosts(b));
}

/** Spec 2.5: routes to productpage; in variant A the API prefix is a separate route named `api`. */
export function virtualServiceSpec(b: Pick<ResolvedBookinfo, "hosts" | "gatewayName" | "routes">): VirtualServiceSpec {
    const destination = { host: "productpage", port: { number: BOOKINFO_PORT } };
    return {
        hosts: [...b.hosts],
        gateways: [b.gatewayName],
        http: b.routes.map((r) => ({
            ...(r.name ? { name: r.name } : {}),
            match: [...r.exact.map((p) => ({ uri: { exact: p } })), ...r.prefix.map((p) => ({ uri: { prefix: p } }))],
            route: [{ destination }],
        })),
    };
}

/** Istio's names of the virtual hosts the sample's Gateway and VirtualService give the gateway (`*:8080` by default). */
export function bookinfoVirtualHosts(b: Pick<ResolvedBookinfo, "namespace" | "hosts" | "gatewayHostScope" | "gatewayPort">): string[] {
    return gatewayVirtualHosts([{ port: { number: b.gatewayPort }, hosts: gatewayServerHosts(b) }], [...b.hosts]);
}

/**
 * The mesh labels of one app's Service: on ambient, the local bucket's app (`localStatsApp`) is
 * served by its waypoint, for in-mesh requests and the ingress's (Istio's ingress gateways skip a
 * Service's waypoint unless `istio.io/ingress-use-waypoint` says otherwise).
 */
export function bookinfoServiceMeshLabels(b: Pick<ResolvedBookinfo, "meshMode" | "localStatsApp" | "localWaypoint">, app: string): Record<string, string> {
    if (b.meshMode !== "ambient" || !b.localWaypoint || app !== b.localStatsApp) return {};
    return { [USE_WAYPOINT_LABEL]: b.localWaypoint, [INGRESS_USE_WAYPOINT_LABEL]: "true" };
}

/** The Service of one bookinfo app: its port, by the `app` label. */
export function bookinfoServiceSpec(app: string): k8s.types.input.core.v1.ServiceSpec {
    return { selector: { app }, ports: [{ name: "http", port: BOOKINFO_PORT, targetPort: BOOKINFO_PORT, protocol: "TCP" }] };
}

/** The Deployment's spec of one version of one bookinfo app: one pod, Pod Security `restricted`, writable folders as emptyDirs. */
export function bookinfoDeploymentSpec(
    b: Pick<ResolvedBookinfo, "version" | "localStatsApp" | "meshMode">,
    app: string,
    version: string,
    labels: Readonly<Record<string, string>>,
): k8s.types.input.apps.v1.DeploymentSpec {
    const writable = BOOKINFO_WRITABLE_DIRS[app];
    const ambient = b.meshMode === "ambient";
    const podLabels = { ...labels, version, ...meshEnrolment(ambient).labels };
    // Export the local limiter's counters from the sidecar (they are filtered out by default); ambient: no sidecar.
    const podAnnotations =
        app === b.localStatsApp && !ambient
            ? { "proxy.istio.io/config": JSON.stringify({ proxyStatsMatcher: { inclusionRegexps: [`.*${LOCAL_STAT_PREFIX}.*`] } }) }
            : undefined;
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
                        image: `docker.io/istio/examples-bookinfo-${app}-${version}:${b.version}`,
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
