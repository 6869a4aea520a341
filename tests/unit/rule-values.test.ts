/**
 * What a client can send to a per-value rule, and who pays for the fallback counters, through the
 * gateway MODEL (gateway-model/, the rendered EnvoyFilters and config.yaml):
 * - a value over 256 bytes, a control character, a value beyond printable ASCII where the rule asks
 *   for it, and the header under a spelling with `_` for `-`: the rule's guard counter, never a
 *   counter of the value's own;
 * - the fallback counters (long paths, untrusted values, a missing value) are kept per client, so one
 *   client fills only its own;
 * - clients keyed by prefix: /32 for IPv4, /64 for IPv6 by default (`clientPrefix`).
 * Each behaviour with its negative control: the same requests against the rendered objects with the
 * guarding matcher taken out (or the old shared counter put back) reach the outcome it prevents.
 * Expected values are written from those rules, not read from the code.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs, ValueCharset } from "../../builders/rule-args";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { explainWith } from "../../gateway-model/explain";
import { GatewayModel } from "../../gateway-model/model";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { K8sObject } from "../../lib/k8s-object";
import { parse, stringify } from "yaml";
import { shopObjects } from "./rules.test";

const M = LimitUnit.Minute;
const KEY: RateLimitRuleArgs = { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 5, unit: M };
const ASCII_KEY: RateLimitRuleArgs = {
    name: "ascii-key",
    path: { prefix: "/ascii" },
    header: { name: "x-token", perValue: true, valueCharset: ValueCharset.PrintableAscii },
    requestsPerUnit: 5,
    unit: M,
};
const PER_CLIENT: RateLimitRuleArgs = { name: "per-client", path: { prefix: "/pc" }, perClientAddress: true, requestsPerUnit: 5, unit: M };

/** The rendered objects with every header matcher `drop` selects taken out of the EnvoyFilters (the control's "without it"). */
function without(objects: K8sObject[], drop: (h: any) => boolean): K8sObject[] {
    const walk = (x: any): any => {
        if (Array.isArray(x)) return x.map(walk);
        if (x === null || typeof x !== "object") return x;
        const out: any = {};
        for (const [k, v] of Object.entries(x)) out[k] = k === "headers" && Array.isArray(v) ? v.filter((h) => !drop(h)).map(walk) : walk(v);
        return out;
    };
    return objects.map((o) => (o.kind === "EnvoyFilter" ? walk(o) : o));
}

/** Each descriptor a request sends, as `key=value,...`, the config entry that answers it, and its Redis key (bucket). */
function sent(m: GatewayModel, path: string, headers: Record<string, string> = {}, clientAddress = "192.0.2.1") {
    return explainWith(m, path, { headers, clientAddress }).descriptors.map((d) => ({
        entries: d.entries.map((e) => `${e.key}=${e.value}`).join(","),
        entry: d.limit?.entry,
        bucket: d.bucket,
    }));
}
const entriesOf = (m: GatewayModel, path: string, headers: Record<string, string> = {}, client?: string) =>
    sent(m, path, headers, client).map((d) => d.entries);

describe("per-value values: bounded, printable, one spelling of the header name (gateway model)", () => {
    const objects = shopObjects([KEY, ASCII_KEY]);
    const m = gatewayModel(objects);
    const guard = (rule: string, client = "192.0.2.1/32") => `rule=${rule},untrusted_value=shared,masked_remote_address=${client}`;

    it("a 256-byte value has its own counter; 257 bytes (or 129 two-byte characters) go to the guard", () => {
        expect(entriesOf(m, "/", { "x-api-key": "k".repeat(256) })).to.deep.equal([`rule=per-key,x-api-key=${"k".repeat(256)}`]);
        expect(entriesOf(m, "/", { "x-api-key": "k".repeat(257) })).to.deep.equal([guard("per-key")]);
        expect(entriesOf(m, "/", { "x-api-key": "é".repeat(129) })).to.deep.equal([guard("per-key")]);
        expect(entriesOf(m, "/", { "x-api-key": "v".repeat(300) })).to.deep.equal([guard("per-key")]);
    });
    it("negative control: without the length matcher in the value's entry, a 257-byte value (and every longer one) gets a counter of its own", () => {
        const unbounded = gatewayModel(without(objects, (h) => h?.invert_match === true && h?.safe_regex_match?.regex === "\\C{257}\\C*"));
        for (const n of [257, 2000]) expect(entriesOf(unbounded, "/", { "x-api-key": "k".repeat(n) })).to.include(`rule=per-key,x-api-key=${"k".repeat(n)}`);
    });
    it("a control character (tab, DEL, a C1 control) goes to the guard; a space, é and an emoji have their own counters", () => {
        for (const v of ["a\tb", "a\u007fb", "a\u0085b"]) expect(entriesOf(m, "/", { "x-api-key": v }), JSON.stringify(v)).to.deep.equal([guard("per-key")]);
        for (const v of ["a b", "café", "😀"]) expect(entriesOf(m, "/", { "x-api-key": v }), v).to.deep.equal([`rule=per-key,x-api-key=${v}`]);
    });
    it("valueCharset printable-ascii: café or a tab go to the guard, an ASCII token has its own counter", () => {
        expect(entriesOf(m, "/ascii", { "x-token": "Ab9-_.~+/=" })).to.include("rule=ascii-key,x-token=Ab9-_.~+/=");
        expect(entriesOf(m, "/ascii", { "x-token": "café" })).to.include(guard("ascii-key"));
        // Control: the same value under the UTF-8 charset (per-key) has a counter of its own.
        expect(entriesOf(m, "/ascii", { "x-api-key": "café" })).to.include("rule=per-key,x-api-key=café");
    });
    it("x_api_key (any '_' for '-') beside or instead of x-api-key goes to the guard, once per request", () => {
        const requests: Record<string, string>[] = [
            { "x-api-key": "fresh-1", x_api_key: "mine" },
            { "x-api-key": "fresh-2", "x-api_key": "mine" },
            { x_api_key: "mine" },
            { "x_api-key": "mine" },
        ];
        for (const h of requests) expect(entriesOf(m, "/", h), JSON.stringify(h)).to.deep.equal([guard("per-key")]);
        expect(entriesOf(m, "/", { "x-api-key": "mine" })).to.deep.equal(["rule=per-key,x-api-key=mine"]);
    });
    it("negative control: without the underscored-name matchers, each fresh x-api-key beside the real x_api_key gets a counter of its own", () => {
        const open = gatewayModel(without(objects, (h) => typeof h?.name === "string" && h.name.includes("_")));
        const got = [1, 2, 3].map((i) => entriesOf(open, "/", { "x-api-key": `fresh-${i}`, x_api_key: "mine" }).join());
        expect(got).to.deep.equal(["rule=per-key,x-api-key=fresh-1", "rule=per-key,x-api-key=fresh-2", "rule=per-key,x-api-key=fresh-3"]);
    });
    it("a name with more than 4 hyphens is refused at preview, naming the field and the fix", () => {
        const p = compileGlobalLimits({ rules: [{ ...KEY, header: { name: "x-a-b-c-d-e", perValue: true } }] }).problems;
        expect(p.map((x) => x.key)).to.deep.equal(["rules[0].header.name"]);
        expect(p[0]!.problem).to.match(/^has 5 hyphens, more than 4/);
        expect(p[0]!.fix).to.match(/at most 4 hyphens/);
        expect(compileGlobalLimits({ rules: [{ ...KEY, header: { name: "x-a-b-c-d", perValue: true } }] }).problems).to.deep.equal([]);
    });
    it("valueCharset without perValue is refused with the field and the fix", () => {
        const p = (header: any) => compileGlobalLimits({ rules: [{ ...KEY, header }] }).problems.map((x) => `${x.key}: ${x.problem} / ${x.fix}`);
        // Not a charset: tests/unit/field-rules.test.ts (the one-of rule, its header.valueCharset row).
        expect(p({ name: "x-k", valueCharset: "printable-ascii" })).to.deep.equal([
            "rules[0].header.valueCharset: applies only with perValue (it says which values get a counter of their own) / remove rules[0].header.valueCharset, or set rules[0].header.perValue to true",
        ]);
    });
});

describe("fallback counters per client (gateway model)", () => {
    const objects = shopObjects([KEY, { name: "fixed", path: { exact: "/f" }, requestsPerUnit: 1, unit: M }], {
        perPath: { eachPath: { requestsPerUnit: 100, unit: M } },
    });
    const m = gatewayModel(objects);
    const longPath = `/${"p".repeat(1100)}`;
    const bucketOf = (ds: ReturnType<typeof sent>, key: string) => ds.filter((d) => d.entries.includes(key) && d.entry !== undefined).map((d) => d.bucket);

    it("two clients' long paths: two counters (the client's prefix under long_path), and the path's own entry has no limit", () => {
        const a = sent(m, longPath, {}, "192.0.2.1");
        const b = sent(m, `/${"q".repeat(1100)}`, {}, "192.0.2.2");
        expect(a.map((d) => `${d.entries} -> ${d.entry ?? "no limit"}`)).to.include.members([
            "other_paths=each,PATH=(path over 1024 bytes) -> no limit",
            "other_paths=each,long_path=over-1024-bytes,masked_remote_address=192.0.2.1/32 -> other_paths=each / long_path=over-1024-bytes / masked_remote_address (catch-all)",
        ]);
        expect(bucketOf(a, "long_path")).to.have.length(1);
        expect(bucketOf(a, "long_path")).to.not.deep.equal(bucketOf(b, "long_path"));
        // A short path meets its own counter only: the long-path entry matches no config node.
        expect(
            sent(m, "/short", {}, "192.0.2.1")
                .filter((d) => d.entry !== undefined)
                .map((d) => d.entries),
        ).to.deep.equal(["other_paths=each,PATH=/short", "rule=per-key,missing_value=shared,masked_remote_address=192.0.2.1/32"]);
    });
    it("negative control: the old layout (one limited PATH=(path over 1024 bytes) counter) gives both clients ONE counter: client 1's 100 long paths deny client 2", () => {
        const old = objects.map((o) => {
            if (o.kind !== "ConfigMap" || !String(o.metadata.name).endsWith("per-value")) return o;
            const cfg = parse(o.data["config.yaml"]);
            const walk = (ds: any[]) => {
                for (const d of ds) {
                    if (d.value === "(path over 1024 bytes)") d.rate_limit = { unit: "minute", requests_per_unit: 100 };
                    if (d.descriptors) walk(d.descriptors);
                }
            };
            walk(cfg.descriptors);
            return { ...o, data: { "config.yaml": stringify(cfg) } };
        });
        const om = gatewayModel(old);
        const a = sent(om, longPath, {}, "192.0.2.1").filter((d) => d.entries.includes("PATH=(path over"));
        const b = sent(om, `/${"q".repeat(1100)}`, {}, "192.0.2.2").filter((d) => d.entries.includes("PATH=(path over"));
        expect(a[0]!.entry).to.not.equal(undefined);
        expect(a[0]!.bucket).to.equal(b[0]!.bucket);
    });
    it("untrusted values and missing headers: one counter per client, two clients two counters", () => {
        const requests: Record<string, string>[] = [{ "x-api-key": "a,b" }, {}];
        for (const headers of requests) {
            const a = sent(m, "/x", headers, "192.0.2.1").filter((d) => d.entries.startsWith("rule=per-key"));
            const b = sent(m, "/x", headers, "192.0.2.2").filter((d) => d.entries.startsWith("rule=per-key"));
            expect(a).to.have.length(1);
            expect(a[0]!.entry).to.match(/masked_remote_address \(catch-all\)$/);
            expect(a[0]!.bucket).to.not.equal(b[0]!.bucket);
        }
    });
});

describe("clients keyed by prefix: /32 for IPv4, /64 for IPv6 (gateway model)", () => {
    const bucket = (m: GatewayModel, client: string) => sent(m, "/pc", {}, client).find((d) => d.entries.startsWith("rule=per-client"))!;
    const m = gatewayModel(shopObjects([PER_CLIENT]));

    it("two addresses in one /64 share a counter; in different /64s they do not; IPv4 stays per address", () => {
        const a = bucket(m, "2001:db8:1:2::1");
        expect(a.entries).to.equal("rule=per-client,masked_remote_address=2001:db8:1:2::/64");
        expect(bucket(m, "2001:db8:1:2:ffff:ffff:ffff:fffe").bucket).to.equal(a.bucket);
        expect(bucket(m, "2001:db8:1:3::1").bucket).to.not.equal(a.bucket);
        expect(bucket(m, "192.0.2.1").bucket).to.not.equal(bucket(m, "192.0.2.2").bucket);
    });
    it("negative control: keyed by the full address (clientPrefix v6 128), the two /64 neighbours get two counters", () => {
        const full = gatewayModel(shopObjects([PER_CLIENT], { clientPrefix: { v6: 128 } }));
        expect(bucket(full, "2001:db8:1:2::1").entries).to.equal("rule=per-client,masked_remote_address=2001:db8:1:2::1/128");
        expect(bucket(full, "2001:db8:1:2::1").bucket).to.not.equal(bucket(full, "2001:db8:1:2::2").bucket);
    });
    it("clientPrefix v4 24: a /24 is one client", () => {
        const wide = gatewayModel(shopObjects([PER_CLIENT], { clientPrefix: { v4: 24 } }));
        expect(bucket(wide, "192.0.2.1").entries).to.equal("rule=per-client,masked_remote_address=192.0.2.0/24");
        expect(bucket(wide, "192.0.2.1").bucket).to.equal(bucket(wide, "192.0.2.200").bucket);
    });
    it("clientCidr.perAddress counts per prefix within the CIDR", () => {
        const cm = gatewayModel(shopObjects([{ name: "lan", clientCidr: { cidr: "2001:db8::/32", perAddress: true }, requestsPerUnit: 5, unit: M }]));
        const d = sent(cm, "/", {}, "2001:db8:5:6::7");
        expect(d.map((x) => x.entries)).to.deep.equal(["rule=lan,masked_remote_address=2001:db8::/32,masked_remote_address=2001:db8:5:6::/64"]);
        expect(d[0]!.entry).to.equal("rule=lan / masked_remote_address=2001:db8::/32 / masked_remote_address (catch-all)");
    });
    it("bad prefix lengths are refused with the field and the fix", () => {
        const p = (clientPrefix: any) =>
            compileGlobalLimits({ rules: [PER_CLIENT], clientPrefix }).problems.map((x) => `${x.key}=${JSON.stringify(x.value)}: ${x.fix}`);
        expect(p({ v4: 33, v6: 64 })).to.deep.equal(["clientPrefix.v4=33: set clientPrefix.v4 to 32"]);
        expect(p({ v6: 129 })).to.deep.equal(["clientPrefix.v6=129: set clientPrefix.v6 to 128"]);
        expect(p({ v6: -1 })).to.deep.equal(["clientPrefix.v6=-1: set clientPrefix.v6 to 0"]);
        // A fraction: the whole-number rule (tests/unit/field-rules.test.ts, its clientPrefix rows).
        expect(p("64")).to.deep.equal(['clientPrefix="64": set clientPrefix to { v4: 32, v6: 64 }']);
        expect(p({ v4: 0, v6: 128 })).to.deep.equal([]);
    });
});
