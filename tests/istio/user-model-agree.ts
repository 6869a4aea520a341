/**
 * The gateway MODEL against Istio's generator for a user's gateway that is not bookinfo
 * (tests/istio/render-user.ts): requests (paths × headers × client addresses, inside and outside the
 * client CIDRs) go through the model built from the rendered objects and through the model built
 * from the route configuration Istio generated (dumped by TestUserGateway, XDSCHECK_USER_DUMP);
 * both must send the same descriptors with the same limits.
 *
 *   npx tsx tests/istio/user-model-agree.ts <user render dir> <dump.json>
 * Prints `ok`/`FAIL` lines and exits 1 on any disagreement.
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { K8sObject } from "../../lib/k8s-object";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { gatewayModelFromEnvoy } from "../../gateway-model/read-envoy";

function main(): number {
    const [dir, dumpFile] = process.argv.slice(2);
    if (!dir || !dumpFile) {
        console.error("usage: tsx tests/istio/user-model-agree.ts <user render dir> <dump.json>");
        return 2;
    }
    const objects: K8sObject[] = parseAllDocuments(fs.readFileSync(path.join(dir, "all.yaml"), "utf8"))
        .map((d) => d.toJSON())
        .filter((o) => o?.kind);
    const dump = JSON.parse(fs.readFileSync(dumpFile, "utf8"));
    const fromRender = gatewayModel(objects);
    const fromIstio = gatewayModelFromEnvoy(
        dump.routeConfiguration,
        dump.virtualHost,
        { domain: dump.domain, failureModeDeny: dump.failureModeDeny === true, rateLimitHeaders: dump.rateLimitHeaders === true },
        objects,
    );
    const paths = [
        "/",
        "/login",
        "/login?next=/x",
        "/login/",
        "/search",
        "/search?q=1",
        "/search/x",
        "/searchx",
        "/checkout",
        "/checkout/pay?x",
        "/other",
        "//login",
        // Other spellings of /login and /search (every one counted: builders/path-spellings.ts).
        "/LOGIN",
        "/login;jsessionid=x",
        "/logi%6E",
        "/login%2e",
        "/login.json",
        "/SEARCH/x",
        "/search;v=1/x",
        "/partners",
        "/partners/x?y=1",
        // Rule free-tier (query tier=free, hidden from the headers) in the spellings a client may send.
        "/items?tier=free",
        "/items?%74ier=fr%65e",
        "/search?tier=gold&tier=free",
        "/items?tier=freeze",
        // Rule per-query-key (one counter per api_key under /api): plain, encoded, absent, other
        // case, and the ambiguous spellings its guard counts together.
        "/api?api_key=k1",
        "/api/v1?%61pi_key=k%31&x=2",
        "/api",
        "/api?API_KEY=k1",
        "/api?api_key=fresh&api_key=mine",
        "/api?api_key=mine;x=1",
        "/api?api_key=a+b",
        "/api?api_key=%FF",
        "/api?api_key=caf%C3%A9",
        "/api?api_key=a%20b",
        `/api?api_key=${"z".repeat(300)}`,
    ];
    // Rule writes (POST or DELETE on /search), the method in any case.
    const methods = ["GET", "post"];
    // Per-api-key's guard: a value over 256 bytes, a control character, an underscored spelling of the name.
    const headerSets: Record<string, string>[] = [
        {},
        { "x-api-key": "k1" },
        { authorization: "Bearer t" },
        { "x-api-key": "k2", authorization: "x" },
        { "x-api-key": "v".repeat(300) },
        { "x-api-key": "a\tb" },
        { "x-api-key": "fresh", x_api_key: "mine" },
    ];
    // Inside and outside the client CIDRs of route partners (10.0.0.0/8, 172.16.0.0/12, 2001:db8::/32; per address in 192.168.4.0/22).
    const clients = [
        "192.0.2.1",
        "198.51.100.9",
        "10.1.2.3",
        "172.20.0.1",
        "172.32.0.1",
        "192.168.5.5",
        "192.168.8.0",
        "2001:db8:ffff::9",
        "2001:db8:ffff::1:9",
        "2001:db9::1",
    ];
    const summary = (x: ReturnType<typeof explainWith>) =>
        JSON.stringify({
            route: x.route?.name ?? "404",
            descriptors: x.descriptors.map((d) => [d.entries, d.limit?.entry, d.limit?.requests, d.headersOption]),
            headers: x.calls.map((c) => c.responseHeaders),
            policy: x.rateLimitPolicy ?? [],
        });
    let bad = 0;
    let n = 0;
    for (const p of paths)
        for (const headers of headerSets)
            for (const clientAddress of clients)
                for (const method of methods) {
                    n++;
                    const a = summary(explainWith(fromRender, p, { headers, clientAddress, method }));
                    const b = summary(explainWith(fromIstio, p, { headers, clientAddress, method }));
                    if (a !== b) {
                        bad++;
                        console.log(
                            `FAIL user gateway model agreement ${method} ${p} ${JSON.stringify(headers)} ${clientAddress}: rendered ${a} vs generated ${b}`,
                        );
                    }
                }
    if (!bad)
        console.log(
            `ok   user gateway model agreement: ${n} requests (paths × headers × client addresses × methods), the model from the render and from Istio's generated routes send the same descriptors and X-RateLimit headers`,
        );
    return bad ? 1 : 0;
}

if (require.main === module) process.exit(main());
