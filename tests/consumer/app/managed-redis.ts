/**
 * A user's program whose Redis and its password are resources of the same program: a Kubernetes
 * Service stands in for a managed Redis (its address is known only once it exists), a Secret named by
 * Pulumi holds the password, and the service's image comes from elsewhere (an output, as another
 * stack's would be). They are passed to GlobalRateLimit as outputs; the component is built at the top
 * level, not inside an apply, so preview lists all its resources. Switches for the tier:
 * BAD_ADDRESS=1 makes the managed Redis's address one the component must refuse once it is known;
 * OUTPUT_NAMESPACE=1 passes the namespace, which must be plain, as an output; INSIDE_APPLY=1 builds
 * the component inside an apply of the address (what a user had to do before outputs were accepted).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { GlobalRateLimit, LimitUnit, RedisModeName } from "mesh-ratelimit";

const provider = new k8s.Provider("shop-cluster", { kubeconfig: "{}", context: "shop" });
const managed = new k8s.core.v1.Service("orders-cache", { metadata: { namespace: "shop" }, spec: { ports: [{ port: 6379 }] } }, { provider });
const password = new k8s.core.v1.Secret(
    "orders-cache-auth",
    { metadata: { namespace: "shop" }, stringData: { password: "from-a-secret-manager" } },
    { provider },
);
const address = process.env.BAD_ADDRESS ? pulumi.interpolate`${managed.spec.clusterIP}` : pulumi.interpolate`${managed.spec.clusterIP}:6379`;

const args = (redisAddress: pulumi.Input<string>) => ({
    domain: "shop",
    namespace: process.env.OUTPUT_NAMESPACE ? (pulumi.output("shop") as unknown as string) : "shop",
    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example:8080"] },
    rules: [{ name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute }],
    redis: { mode: RedisModeName.External, addresses: [redisAddress], passwordSecret: { name: password.metadata.name } },
    service: { image: pulumi.output("registry.example/ratelimit:from-another-stack") },
    awaitRollout: false,
});

export const redisUrl = process.env.INSIDE_APPLY
    ? address.apply((known) => new GlobalRateLimit("shop-limits", args(known), { provider }).redisUrl)
    : new GlobalRateLimit("shop-limits", args(address), { provider }).redisUrl;
