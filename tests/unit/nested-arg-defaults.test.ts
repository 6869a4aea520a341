/**
 * The nested argument types declared in components/global-ratelimit/gateway-target-fields.ts,
 * gateway-access-log-fields.ts, client-cidr-fields.ts, identity-fields.ts and request-cost-fields.ts:
 * their generated files are current, and the defaults the resolvers fill are the declared ones (a
 * changed declaration changes what is filled, so a literal left in a resolver fails here).
 */
import { expect } from "chai";
import * as fs from "fs";
import { GATEWAY_TARGET_FIELDS } from "../../components/global-ratelimit/gateway-target-fields";
import { gatewayTargetOf } from "../../components/global-ratelimit/gateway-target";
import { ACCESS_LOG_FIELDS, SECRET_HEADER_FIELDS } from "../../components/global-ratelimit/gateway-access-log-fields";
import { accessLogOf } from "../../components/global-ratelimit/gateway-access-log";
import { CLIENT_CIDR_FIELDS } from "../../components/rules/client-cidr-fields";
import { checkClientCidr } from "../../components/rules/client-cidr-checks";
import { IDENTITY_FIELDS, JWT_IDENTITY_FIELDS } from "../../components/rules/identity-fields";
import { checkIdentity, resolveIdentity } from "../../components/rules/identity-checks";
import { REQUEST_COST_FIELDS, RESPONSE_MISSING_COST } from "../../components/rules/request-cost-fields";
import { checkRequestCost, resolveRequestCost } from "../../components/rules/request-cost-checks";
import { MissingIdentity } from "../../builders/identity-args";
import { Problem } from "../../lib/problems";
import { generated } from "../../scripts/gen-arg-types";

/** Runs `body` with a declaration's default changed, then puts it back. */
function withDefault<T>(d: { default: T }, value: T, body: () => void): void {
    const before = d.default;
    d.default = value;
    try {
        body();
    } finally {
        d.default = before;
    }
}

const JWT = { issuer: "https://auth.example.com", jwksUri: "https://auth.example.com/keys" };
const gateway = (g: object) => gatewayTargetOf({ selector: { istio: "ingressgateway" }, virtualHosts: ["a.example.com:80"], ...g }, []);

describe("nested argument types: one declaration per field", () => {
    it("their generated files are current", () => {
        const outs = [
            "gateway-target-args.generated.ts",
            "gateway-access-log-args.generated.ts",
            "client-cidr-args.generated.ts",
            "identity-arg-types.generated.ts",
            "request-cost-arg-types.generated.ts",
        ];
        const files = generated().filter(([out]) => outs.some((o) => out.endsWith(`/${o}`)));
        expect(files).to.have.length(outs.length);
        for (const [out, text] of files) expect(fs.readFileSync(out, "utf8"), `${out}: run npm run gen`).to.equal(text);
    });

    it("the defaults filled are the declared ones: as documented, and following a changed declaration", () => {
        expect([GATEWAY_TARGET_FIELDS.namespace.default, GATEWAY_TARGET_FIELDS.allVirtualHosts.default]).to.deep.equal(["istio-system", false]);
        expect(gateway({}).namespace).to.equal(GATEWAY_TARGET_FIELDS.namespace.default);
        withDefault(GATEWAY_TARGET_FIELDS.namespace, "edge", () => expect(gateway({}).namespace).to.equal("edge"));
        withDefault(GATEWAY_TARGET_FIELDS.allVirtualHosts, true, () => expect(gateway({}).all).to.equal(true));

        expect(ACCESS_LOG_FIELDS.path.default).to.equal("/dev/stdout");
        expect(accessLogOf({}, [], [])?.path).to.equal("/dev/stdout");
        withDefault(ACCESS_LOG_FIELDS.path, "/var/log/a.json", () => expect(accessLogOf({}, [], [])?.path).to.equal("/var/log/a.json"));

        const id = resolveIdentity({ jwt: JWT });
        expect([id.jwt.claim, id.missing]).to.deep.equal(["sub", MissingIdentity.PerClient]);
        withDefault(JWT_IDENTITY_FIELDS.claim, "email", () => expect(resolveIdentity({ jwt: JWT }).jwt.claim).to.equal("email"));
        withDefault(IDENTITY_FIELDS.missing, MissingIdentity.Refuse, () => expect(resolveIdentity({ jwt: JWT }).missing).to.equal(MissingIdentity.Refuse));

        expect(resolveRequestCost({ requestHeader: "x-cost" }).missingCost).to.equal(1);
        expect(resolveRequestCost({ responseHeader: "x-tokens-used" }).missingCost).to.equal(RESPONSE_MISSING_COST);
        withDefault(REQUEST_COST_FIELDS.missingCost, 3, () => expect(resolveRequestCost({ requestHeader: "x-cost" }).missingCost).to.equal(3));
    });

    it("the checks run the declared rules (a field's problem under its path, the fix from its default)", () => {
        const problems: Problem[] = [];
        gatewayTargetOf(
            { selector: { istio: "ingressgateway" }, virtualHosts: ["a.example.com:80"], namespace: "Bad_NS", allVirtualHosts: "yes" as never },
            problems,
        );
        accessLogOf({ path: "relative.json", secretHeaders: [{ name: "x-api-key", as: "hmac" }] }, [], problems);
        checkClientCidr("rules[0].clientCidr", { cidr: "10.0.0.0/8", perAddress: "no" }, problems);
        checkIdentity("rules[1]", { identity: { jwt: { ...JWT, claim: "exp" }, missing: "deny" } }, problems);
        checkRequestCost("rules[2].cost", { requestHeader: "X-Cost", missingCost: -1 }, problems);
        expect(problems.map((p) => p.key)).to.deep.equal([
            "gateway.namespace",
            "gateway.allVirtualHosts",
            "accessLog.secretHeaders[0].as",
            "accessLog.path",
            "rules[0].clientCidr.perAddress",
            "rules[1].identity.jwt.claim",
            "rules[1].identity.missing",
            "rules[2].cost.requestHeader",
            "rules[2].cost.missingCost",
        ]);
        expect(problems.find((p) => p.key === "accessLog.path")?.fix).to.contain(`"${ACCESS_LOG_FIELDS.path.default}"`);
        expect(problems.find((p) => p.key === "rules[2].cost.missingCost")?.fix).to.equal("set rules[2].cost.missingCost to e.g. 1");
        expect(SECRET_HEADER_FIELDS.as.default).to.equal("omit");
        expect(CLIENT_CIDR_FIELDS.perAddress.default).to.equal(false);
    });
});
