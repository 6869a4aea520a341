/**
 * A user's own TypeScript program, not this repository's stack: two gateways (a shop's and a
 * partner API's), each limited by its own GlobalRateLimit, a local bucket on one workload, and an
 * explicit Kubernetes provider for all of it. The consumer tier type-checks it against the
 * installed tarball's .d.ts files and runs it under Pulumi's mocks.
 */
import * as k8s from "@pulumi/kubernetes";
import { GlobalRateLimit, LimitUnit, LocalRateLimit, MissingHeader } from "mesh-ratelimit";

const provider = new k8s.Provider("shop-cluster", { kubeconfig: "{}", context: "shop" });

const shop = new GlobalRateLimit(
    "shop-limits",
    {
        domain: "shop",
        namespace: "shop",
        gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example:8080"] },
        rules: [
            { name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute },
            { name: "checkout", path: { prefix: "/checkout" }, requestsPerUnit: 50, unit: LimitUnit.Second },
        ],
        awaitRollout: false,
    },
    { provider },
);

const partners = new GlobalRateLimit(
    "partner-limits",
    {
        domain: "partners",
        namespace: "partners",
        gateway: { selector: { istio: "partner-gateway" }, namespace: "partners", virtualHosts: ["api.partner.example:8443"] },
        rules: [
            {
                name: "per-key",
                header: { name: "x-api-key", perValue: true, whenMissing: MissingHeader.Refuse },
                requestsPerUnit: 100,
                unit: LimitUnit.Minute,
            },
        ],
        awaitRollout: false,
    },
    { provider },
);

const bucket = new LocalRateLimit(
    "orders-bucket",
    { selector: { app: "orders" }, port: 8080, bucket: 20, fillInterval: "1s", namespace: "shop" },
    { provider },
);

export const shopService = shop.grpcAddress;
export const partnerService = partners.grpcAddress;
export const localFilter = bucket.filterName;
