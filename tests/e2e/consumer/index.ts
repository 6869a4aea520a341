/**
 * A user's program (not this repository's stack): its own namespace, Gateway and VirtualService
 * for a shop, limited by the package's components imported by name from the packed tarball, as any
 * TypeScript program would. Run by tests/e2e/run.sh (section 3c), which installs the tarball; the
 * consumer tier type-checks it and runs it under mocks against the same tarball.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { GlobalRateLimit, LimitUnit, LocalRateLimit } from "mesh-ratelimit";

const ns = new k8s.core.v1.Namespace("shop", { metadata: { name: "shop", labels: { "istio-injection": "enabled" } } });
// The shop manages its Redis password itself (a secret of its stack config, `pulumi config set
// --secret redisPassword ...`); the component's Redis and rate-limit service only read the Secret.
const redisAuth = new k8s.core.v1.Secret(
    "shop-redis-auth",
    { metadata: { name: "shop-redis-auth", namespace: "shop" }, stringData: { password: new pulumi.Config().requireSecret("redisPassword") } },
    { dependsOn: [ns] },
);
const labels = { app: "orders" };
const orders = new k8s.apps.v1.Deployment(
    "orders",
    {
        metadata: { name: "orders", namespace: "shop", annotations: { "pulumi.com/skipAwait": "true" } },
        spec: {
            selector: { matchLabels: labels },
            template: {
                metadata: { labels },
                spec: { containers: [{ name: "orders", image: "docker.io/library/nginx:1.27-alpine", ports: [{ name: "http", containerPort: 8080 }] }] },
            },
        },
    },
    { dependsOn: [ns] },
);
new k8s.core.v1.Service(
    "orders",
    { metadata: { name: "orders", namespace: "shop" }, spec: { selector: labels, ports: [{ name: "http", port: 8080 }] } },
    { dependsOn: [ns] },
);
new k8s.apiextensions.CustomResource(
    "shop-gw",
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "Gateway",
        metadata: { name: "shop-gw", namespace: "shop" },
        spec: { selector: { istio: "ingressgateway" }, servers: [{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["shop.example"] }] },
    },
    { dependsOn: [ns] },
);
new k8s.apiextensions.CustomResource(
    "shop-vs",
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "shop", namespace: "shop" },
        spec: {
            hosts: ["shop.example"],
            gateways: ["shop-gw"],
            http: [{ name: "orders", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "orders", port: { number: 8080 } } }] }],
        },
    },
    { dependsOn: [ns] },
);

const limits = new GlobalRateLimit(
    "shop-limits",
    {
        domain: "shop",
        gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example:8080"] },
        namespace: "shop",
        filterNamePrefix: "shop-ratelimit",
        rules: [
            { name: "login-per-client", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute },
            { name: "per-api-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: LimitUnit.Minute },
        ],
        redis: { passwordSecret: { name: "shop-redis-auth" } },
        awaitRollout: false,
    },
    { dependsOn: [ns, redisAuth] },
);
const bucket = new LocalRateLimit(
    "orders-bucket",
    { selector: labels, port: 8080, bucket: 20, fillInterval: "1s", namespace: "shop" },
    { dependsOn: [orders] },
);

export const grpcAddress = limits.grpcAddress;
export const filterNames = limits.filterNames;
export const localFilter = bucket.filterName;
