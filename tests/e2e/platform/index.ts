/**
 * A platform team's program for the e2e tier (tests/e2e/run.sh, section 3g): a PlatformRateLimit on
 * the cluster's ingress gateway with its admission policy (installed by default), an override and a
 * default per client, one host assigned to team `e2e-team-a`. Its namespace and Redis password
 * Secret are its own (the password from the environment, kept secret in the state), so `pulumi
 * destroy` leaves the cluster as it found it. The package is the repository's entry; the tier runs
 * a copy of this file that imports it by its absolute path.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { LimitUnit, PlatformRateLimit } from "../../../index";

const password = process.env.E2E_PLATFORM_REDIS_PASSWORD;
if (!password) throw new Error("E2E_PLATFORM_REDIS_PASSWORD is not set (tests/e2e/run.sh sets it)");
const ns = new k8s.core.v1.Namespace("e2e-platform", { metadata: { name: "e2e-platform" } });
const secret = new k8s.core.v1.Secret(
    "e2e-platform-redis-auth",
    { metadata: { name: "e2e-platform-redis-auth", namespace: "e2e-platform" }, stringData: { password: pulumi.secret(password) } },
    { dependsOn: [ns] },
);
const platform = new PlatformRateLimit(
    "e2e-platform",
    {
        gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system" },
        namespace: "e2e-platform",
        teamHosts: { "e2e-team-a": ["a.example.com"] },
        redis: { passwordSecret: { name: "e2e-platform-redis-auth" } },
        defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 20, unit: LimitUnit.Minute }] },
        overrides: { rules: [{ name: "ceiling", perClientAddress: true, requestsPerUnit: 600, unit: LimitUnit.Minute }] },
    },
    { dependsOn: [ns, secret] },
);
export const filterNames = platform.filterNames;
