/**
 * Bookinfo's and ManagedApi's arguments resolved once (components/bookinfo/resolve.ts,
 * components/managed-api/resolve.ts): every problem under its property path and no value, or a
 * frozen value with every default filled in, which the builders (builders/bookinfo.ts,
 * builders/managed-api.ts) read as it is. Expected values are written here, not read from the code.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { resolveBookinfo } from "../../components/bookinfo/resolve";
import { resolveManagedApi } from "../../components/managed-api/resolve";
import { bookinfoGatewaySpec, bookinfoVirtualHosts, virtualServiceSpec } from "../../builders/bookinfo";
import { currentIngressManifest, espDeploymentSpec, espServicePort } from "../../builders/managed-api";
import { ManagedApiArgs } from "../../components/managed-api/args.generated";
import { BookinfoArgs } from "../../components/bookinfo/args.generated";

/** Whether `v` and everything it holds is frozen. */
function deepFrozen(v: unknown): boolean {
    if (typeof v !== "object" || v === null) return true;
    return Object.isFrozen(v) && Object.values(v).every(deepFrozen);
}

const ESP: ManagedApiArgs = { serviceName: "echo-api.endpoints.p.cloud.goog", includeIpRanges: ["10.4.0.0/14", "10.7.240.0/20"] };

describe("Bookinfo resolved once", () => {
    it("no arguments: every default filled in, the whole value frozen", () => {
        const { problems, value } = resolveBookinfo({});
        expect(problems).to.deep.equal([]);
        expect(deepFrozen(value)).to.equal(true);
        expect(value).to.deep.include({
            namespace: "default",
            hosts: ["*"],
            gatewayHostScope: "own-namespace",
            version: "1.20.2",
            gatewayName: "bookinfo-gateway",
            gatewayPort: 8080,
            virtualServiceName: "bookinfo",
            gatewaySelector: { istio: "ingressgateway" },
            localStatsApp: "productpage",
            awaitRollout: true,
        });
        expect(value!.routes.map((r) => r.name ?? "")).to.deep.equal(["", "api"]);
        expect(bookinfoVirtualHosts(value!)).to.deep.equal(["*:8080"]);
        expect(bookinfoGatewaySpec(value!).servers[0].hosts).to.deep.equal(["default/*"]);
    });

    it("the value is a copy: changing the arguments afterwards changes nothing resolved or built", () => {
        const args: BookinfoArgs = { hosts: ["shop.example"], gatewaySelector: { istio: "shop" }, routes: [{ exact: ["/a"] }] };
        const { value } = resolveBookinfo(args);
        args.hosts!.push("other.example");
        args.gatewaySelector!.istio = "changed";
        args.routes![0].exact!.push("/b");
        expect(value!.hosts).to.deep.equal(["shop.example"]);
        expect(bookinfoGatewaySpec(value!).selector).to.deep.equal({ istio: "shop" });
        expect(virtualServiceSpec(value!).http[0].match).to.deep.equal([{ uri: { exact: "/a" } }]);
    });

    it("problems under their property paths, and no value", () => {
        const { problems, value } = resolveBookinfo({
            namespace: "Bad_NS",
            gatewayPort: 70000,
            version: "x y",
            routes: [{ exact: ["/a"] }, { exact: ["/a"] }],
        });
        expect(value).to.equal(undefined);
        expect(problems.map((p) => p.key)).to.deep.equal(["namespace", "gatewayPort", "version", "routes[1].exact[0]"]);
    });
});

describe("ManagedApi resolved once", () => {
    it("the required fields missing: both problems, and no value", () => {
        const { problems, value } = resolveManagedApi({} as ManagedApiArgs);
        expect(value).to.equal(undefined);
        expect(problems.map((p) => p.key)).to.deep.equal(["includeIpRanges", "serviceName"]);
    });

    it("every default filled in, the whole value frozen; the IngressClass switches decided once", () => {
        const { problems, value } = resolveManagedApi(ESP);
        expect(problems).to.deep.equal([]);
        expect(deepFrozen(value)).to.equal(true);
        expectGolden("managed-api/resolved-defaults", value);
        expect(value).to.deep.include({ portMode: "http", ingressClassName: "istio", createIngressClass: true, keepIngressClassOnDestroy: false });
        const off = resolveManagedApi({ ...ESP, createIngressClass: false, keepIngressClassOnDestroy: true }).value!;
        expect([off.createIngressClass, off.keepIngressClassOnDestroy]).to.deep.equal([false, true]);
    });

    it("one CIDR given on its own (which the checks accept) is a list of one: the pod's annotation names it whole", () => {
        const value = resolveManagedApi({ ...ESP, includeIpRanges: "10.4.0.0/14" as unknown as string[] }).value!;
        expect(value.includeIpRanges).to.deep.equal(["10.4.0.0/14"]);
        const template = espDeploymentSpec(value, {}).template as { metadata: { annotations: Record<string, string> } };
        const annotations = template.metadata.annotations;
        expect(annotations["traffic.sidecar.istio.io/includeOutboundIPRanges"]).to.equal("10.4.0.0/14");
    });

    it("the builders read the resolved value: the port's protocol name, the Ingress's class and path", () => {
        const value = resolveManagedApi({ ...ESP, portMode: "tcp", ingressClassName: "mesh", ingressPath: "/api" }).value!;
        expect(espServicePort(value)).to.deep.equal({ port: 80, targetPort: 8081, protocol: "TCP", name: "tcp", appProtocol: "tcp" });
        const spec = currentIngressManifest(value, {}).spec as { ingressClassName: string; rules: { http: { paths: { path: string }[] } }[] };
        expect([spec.ingressClassName, spec.rules[0].http.paths[0].path]).to.deep.equal(["mesh", "/api"]);
    });
});
