// Plain JavaScript (no type checker) making, one per run, a mistake such a program can make. The
// mistake is named by MISTAKE; each must be refused when the component is constructed.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { GlobalRateLimit, LocalRateLimit, MeshRateLimit } = require("mesh-ratelimit");

const gateway = { selector: { istio: "shop-gateway" }, namespace: "shop", virtualHosts: ["shop.example:8080"] };
const limits = (extra, rule) =>
    new GlobalRateLimit("shop-limits", {
        domain: "shop",
        namespace: "shop",
        gateway,
        awaitRollout: false,
        ...extra,
        rules: [{ name: "login", requestsPerUnit: 5, unit: "minute", ...rule }],
    });
const mesh = (args) => new MeshRateLimit("stack", { managedApi: { enabled: false }, ...args });

const MISTAKES = {
    // `paths` for `path`: without the check the rule would count every request, not /login's.
    "rule-field-misspelt": () => limits({}, { paths: { exact: "/login" } }),
    "argument-misspelt": () => limits({ failureModeDenny: false }, { path: { exact: "/login" } }),
    "local-argument-misspelt": () => new LocalRateLimit("bucket", { selector: { app: "orders" }, port: 8080, bucket: 20, bucketSize: 20, namespace: "shop" }),
    "limit-over-uint32": () => limits({}, { requestsPerUnit: 5e9 }),
    "limit-not-a-number": () => limits({}, { requestsPerUnit: Number("five") }),
    "path-not-as-sent": () => limits({}, { path: { exact: "/café" } }),
    "dashboard-over-1mib": () =>
        new GlobalRateLimit("shop-limits", {
            domain: "shop",
            namespace: "shop",
            gateway,
            rules: Array.from({ length: 1000 }, (_, i) => ({ name: `item-${i}`, path: { exact: `/items/${i}` }, requestsPerUnit: 5, unit: "minute" })),
        }),
    "login-route-dropped": () => mesh({ paths: { login: "/productpage" } }),
    "mesh-limit-over-uint32": () => mesh({ limits: { catchAll: 1e12 } }),
    // GlobalRateLimit's own check, through MeshRateLimit: reported under the field that holds it.
    "mesh-service-option": () => mesh({ global: { service: { replicas: 0 } } }),
    // A 0.2.0 (flat) argument: not silently ignored.
    "mesh-flat-argument": () => mesh({ catchAllLimit: 5 }),
    "mesh-two-problems": () => mesh({ limits: { catchAll: 0 }, global: { service: { replicas: 0 } } }),
    // Negative control of the error's type: the same refusal's text re-thrown as a RunError (what
    // the package threw before), which carries no property path.
    "as-run-error": () => {
        try {
            mesh({ global: { service: { replicas: 0 } } });
        } catch (e) {
            throw new pulumi.RunError(e.message);
        }
    },
};
const mistake = MISTAKES[process.env.MISTAKE];
if (!mistake) throw new Error(`MISTAKE must be one of ${Object.keys(MISTAKES).join(", ")}`);
mistake();
