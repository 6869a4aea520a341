/**
 * The package's GlobalRateLimit on its own, as a user's program creates it for a gateway that is not
 * the stack's: applied server-side to the real API server in a namespace that enforces Pod Security
 * `restricted`. Every object it creates is admitted, and its pods are actually created (a pod whose
 * ServiceAccount does not exist is refused by the API server's ServiceAccount admission, so the
 * Deployment would stay at 0 pods), scheduled on kwok's fake nodes and Running; then deleted.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit } from "../../builders/rule-args";
import { registerComponents } from "../../render/render";
import { deleteNamespace, ensureNamespace, kubeconfig, kubectlJson, kubectlRaw, podSecurityLabels, waitFor, waitForDeploymentPods, warnings } from "./kube";

const NS = "mesh-rl-shop";
const FIELD_MANAGER = "mesh-rl-cluster-test";

describe("cluster: the package's GlobalRateLimit on its own (a user's gateway): admitted, its pods created and Running", function () {
    this.timeout(240_000);

    before(async function () {
        kubeconfig();
        ensureNamespace(NS, podSecurityLabels("restricted"));
        await waitFor(`${NS}: default ServiceAccount`, () => kubectlRaw(["get", "serviceaccount/default", "-n", NS]).status === 0);
    });

    after(async function () {
        await deleteNamespace(NS);
    });

    it("rules on the shop's gateway, with accessPolicy: every object admitted without a warning, ratelimit and Redis pods Running, deleted cleanly", async () => {
        const { objects } = await registerComponents(
            () => {
                new GlobalRateLimit("shop-limits", {
                    domain: "shop",
                    gateway: { selector: { app: "shop-gateway" }, namespace: NS, virtualHosts: ["*:80"] },
                    namespace: NS,
                    rules: [{ name: "login", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute }],
                    accessPolicy: { gatewayPrincipal: `cluster.local/ns/${NS}/sa/shop-gateway` },
                });
            },
            "shop",
            "cluster",
        );
        // The password Secret's value is redacted in a render; give it a real one for the apply.
        for (const o of objects as any[]) {
            if (o.kind !== "Secret") continue;
            o.stringData = Object.fromEntries(Object.keys(o.stringData ?? o.data ?? {}).map((k) => [k, "cluster-test-password"]));
            delete o.data;
        }
        expect(objects.map((o) => o.kind)).to.include.members([
            "ServiceAccount",
            "Deployment",
            "Service",
            "ConfigMap",
            "EnvoyFilter",
            "AuthorizationPolicy",
            "NetworkPolicy",
        ]);

        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-standalone-"));
        const file = path.join(dir, "list.json");
        try {
            fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
            const applied = kubectlRaw(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", file]);
            expect(applied.status, applied.stderr).to.equal(0);
            expect(warnings(applied.stderr), "API server warnings").to.deep.equal([]);

            for (const d of objects.filter((o) => o.kind === "Deployment") as any[]) {
                const pods = await waitForDeploymentPods(d);
                for (const p of pods) expect(p.spec.serviceAccountName, `${p.metadata.name}`).to.equal(d.spec.template.spec.serviceAccountName);
            }

            const del = kubectlRaw(["delete", "-f", file, "--cascade=foreground", "--wait=true", "--timeout=120s"]);
            expect(del.status, del.stderr).to.equal(0);
            await waitFor("no pod of the component left", () => kubectlJson<{ items: any[] }>(["get", "pods", "-n", NS]).items.length === 0, 90_000);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
