/**
 * Istio's bookinfo sample (the workloads the limits protect), its Gateway and VirtualService.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { INJECT_LABEL, SKIP_AWAIT, awaitAnnotations, stackLabels } from "./common";
import { Gateway, GatewaySpec, VirtualService, VirtualServiceSpec } from "./crds";
import { LOCAL_STAT_PREFIX } from "./envoy-filters";
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
                                    containers: [
                                        {
                                            name: app,
                                            image: `docker.io/istio/examples-bookinfo-${app}-${version}:${s.bookinfo.version}`,
                                            ports: [{ containerPort: BOOKINFO_PORT }],
                                            ...(app === "productpage" ? { volumeMounts: [{ name: "tmp", mountPath: "/tmp" }] } : {}),
                                        },
                                    ],
                                    ...(app === "productpage" ? { volumes: [{ name: "tmp", emptyDir: {} }] } : {}),
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
