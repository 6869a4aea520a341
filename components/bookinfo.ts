/**
 * Istio's bookinfo sample (the workloads the limits protect), its Gateway and VirtualService.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { INJECT_LABEL, SKIP_AWAIT, awaitAnnotations, stackLabels } from "./common";
import { Gateway, GatewaySpec, VirtualService, VirtualServiceSpec } from "./crds";
import { LOCAL_STAT_PREFIX } from "./envoy-filters";
import { BOOKINFO_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from "./pod-security";
import { StackSettings } from "./settings";

export const BOOKINFO_PORT = 9080;

/** The bookinfo services and the versions deployed of each. */
export const BOOKINFO_APPS: readonly { app: string; versions: string[] }[] = [
    { app: "details", versions: ["v1"] },
    { app: "ratings", versions: ["v1"] },
    { app: "reviews", versions: ["v1", "v2", "v3"] },
    { app: "productpage", versions: ["v1"] },
];

/** Gateway with one HTTP server on the configured port (the route patch matches `*:<port>`). */
export function gatewaySpec(s: StackSettings): GatewaySpec {
    return {
        selector: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value },
        servers: [{ port: { number: s.bookinfo.gatewayPort, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    };
}

/** Spec 2.5: routes to productpage; in variant A the API prefix is a separate route named `api`. */
export function virtualServiceSpec(s: StackSettings): VirtualServiceSpec {
    const destination = { host: "productpage", port: { number: BOOKINFO_PORT } };
    return {
        hosts: ["*"],
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

/** Requests and limits per app: reviews is a JVM, the others small interpreters. */
export const BOOKINFO_RESOURCES: Readonly<Record<string, { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } }>> = {
    details: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    ratings: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
    reviews: { requests: { cpu: "50m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
    productpage: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
};

export interface BookinfoArgs {
    settings: StackSettings;
}

export class Bookinfo extends pulumi.ComponentResource {
    public readonly gateway: Gateway;
    public readonly virtualService: VirtualService;

    constructor(name: string, args: BookinfoArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:Bookinfo", name, {}, opts);
        const s = args.settings;
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
            const writable = BOOKINFO_WRITABLE_DIRS[app] ?? [];
            for (const version of versions) {
                const podLabels = { ...labels, version, ...INJECT_LABEL };
                // Export the local limiter's counters from the sidecar (they are filtered out by default).
                const podAnnotations =
                    app === s.local.serviceLabel
                        ? { "proxy.istio.io/config": JSON.stringify({ proxyStatsMatcher: { inclusionRegexps: [`.*${LOCAL_STAT_PREFIX}.*`] } }) }
                        : undefined;
                new k8s.apps.v1.Deployment(
                    `${app}-${version}`,
                    {
                        metadata: { name: `${app}-${version}`, namespace: ns, labels: { ...labels, version }, annotations: awaitAnnotations(s) },
                        spec: {
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
                                            image: `docker.io/istio/examples-bookinfo-${app}-${version}:${s.bookinfo.version}`,
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
                        },
                    },
                    { parent: this },
                );
            }
        }

        const labels = stackLabels("bookinfo");
        this.gateway = new Gateway(
            s.bookinfo.gatewayName,
            { metadata: { name: s.bookinfo.gatewayName, namespace: ns, labels }, spec: gatewaySpec(s) },
            { parent: this },
        );
        this.virtualService = new VirtualService(
            s.bookinfo.virtualServiceName,
            { metadata: { name: s.bookinfo.virtualServiceName, namespace: ns, labels }, spec: virtualServiceSpec(s) },
            { parent: this },
        );
        this.registerOutputs({});
    }
}
