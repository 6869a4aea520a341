/**
 * Renders the shop's setup of render-user.ts with GlobalRateLimit's `accessLog` on (the `authorization`
 * header marked secret), plus a second gateway in the same namespace (pods app=other-gateway, its
 * own Gateway on port 80) that the access log must not reach, for the istio tier's generator check
 * (tests/istio/xdscheck/access_log_test.go). Writes <out>/all.yaml.
 *
 *   npx tsx tests/istio/render-access-log.ts <out dir>
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";
import { USER_OBJECTS, USER_RULES } from "./render-user";

const OTHER_GATEWAY: K8sObject = {
    apiVersion: "networking.istio.io/v1beta1",
    kind: "Gateway",
    metadata: { name: "other-gw", namespace: "shop" },
    spec: { selector: { app: "other-gateway" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
};

async function renderAccessLogSetup(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: USER_RULES,
                accessLog: { secretHeaders: [{ name: "authorization" }] },
            });
        },
        "shop",
        "istio",
    );
    return [...USER_OBJECTS, OTHER_GATEWAY, ...objects];
}

const out = process.argv[2];
if (!out) {
    console.error("usage: tsx tests/istio/render-access-log.ts <out dir>");
    process.exit(2);
}
void renderAccessLogSetup().then((objs) => {
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "all.yaml"), objs.map((o) => stringify(o, { lineWidth: 0, version: "1.1" })).join("---\n"));
    console.log(`${objs.length} objects written to ${path.join(out, "all.yaml")}`);
});
