// The same kind of program in plain JavaScript: the package required by name, no types.
"use strict";
const k8s = require("@pulumi/kubernetes");
const { GlobalRateLimit, LocalRateLimit, LimitUnit } = require("mesh-ratelimit");

const provider = new k8s.Provider("js-cluster", { kubeconfig: "{}" });
for (const team of ["blue", "green"]) {
    new GlobalRateLimit(
        `${team}-limits`,
        {
            domain: team,
            namespace: team,
            gateway: { selector: { istio: `${team}-gateway` }, namespace: team, virtualHosts: [`${team}.example:8080`] },
            rules: [{ name: "all", path: { prefix: "/" }, requestsPerUnit: 10, unit: LimitUnit.Second }],
            awaitRollout: false,
        },
        { provider },
    );
    new LocalRateLimit(`${team}-bucket`, { selector: { app: team }, port: 9080, bucket: 5, fillInterval: "1s", namespace: team }, { provider });
}
