/**
 * Values the REAL envoyproxy/ratelimit service cannot read: it takes descriptor values as protobuf
 * strings and refuses a whole call (gRPC INTERNAL) when one of them is not valid UTF-8, so every
 * other descriptor of that call goes uncounted, and a gateway failing open (`failureModeDeny`
 * false, the default) lets the request through. A client writes such a value with plain ASCII:
 * `?api_key=%FF` (Envoy's `query_parameters` percent-decodes it into the byte 0xFF), or raw bytes
 * in a header. Per-value rules therefore send a value only when it is valid UTF-8 (for a query
 * parameter: its percent-encoded bytes form whole, well-formed UTF-8 characters); other requests
 * share the client's guard counter (`untrusted_value=shared` and the client's prefix). The gateway MODEL (no Envoy here) turns requests into descriptors; the
 * negative control sends the bytes Envoy's reading would give.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs, ValueCharset } from "../../builders/rule-args";
import { envoyPercentDecodeBytes } from "../../gateway-model/evaluate";
import { gatewayOutcome, shouldRateLimitBytes } from "./harness/client";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";
import type { K8sObject } from "../../lib/k8s-object";
import { trustedQueryValueRegex } from "../../builders/request-match";
import { probe, re2FullMatch } from "../re2/probe";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "per-qkey", path: { prefix: "/q" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "fixed", path: { prefix: "/q" }, requestsPerUnit: 1000, unit: M },
];

/** The client address of the raw-path case's requests (the harness's default client). */
const CLIENT = "192.0.2.1";

/** 24 requests, each with a value never sent before that decodes to bytes the service refuses. */
const unreadable = (i: number) => [`/q?api_key=%FF${i}`, `/q?api_key=k${i}%C3`, `/q?api_key=%ED%A0%80${i}`, `/q?api_key=%C0%AF${i}`][i % 4]!;

describe("rls: values the rate-limit service cannot read (invalid UTF-8) never reach it", function () {
    const { shop, send, perValueSide } = useShop(RULES);

    it("the real service refuses a whole call when one value is not valid UTF-8 (gRPC INTERNAL); a valid non-ASCII value is read", async () => {
        const addr = perValueSide().client.address;
        const shared = { key: "rule", value: Buffer.from("per-qkey") };
        const bad = await shouldRateLimitBytes(addr, "shop", [[shared], [shared, { key: "query_value", value: Buffer.from([0x6b, 0xff]) }]]);
        expect(bad instanceof Error ? `${(bad as any).code} ${(bad as any).details}` : "answered").to.match(/^13 .*invalid UTF-8/);
        const good = await shouldRateLimitBytes(addr, "shop", [[shared], [shared, { key: "query_value", value: Buffer.from("café", "utf8") }]]);
        expect(good instanceof Error ? "error" : (good as any).overallCode).to.equal("OK");
    });

    it("query.perValue: 24 requests from one client whose value decodes to invalid UTF-8 send no value; they share the client's guard counter of 3", async () => {
        await ensureWindow(10);
        let ok = 0;
        for (let i = 0; i < 24; i++) {
            const r = await send(unreadable(i), {});
            const entries = r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));
            expect(entries, unreadable(i)).to.include("rule=per-qkey,untrusted_value=shared,masked_remote_address=192.0.2.1/32");
            expect(
                entries.some((e) => e.includes("query_value")),
                unreadable(i),
            ).to.equal(false);
            if (r.d?.overallCode === "OK") ok++;
        }
        expect(ok).to.equal(3);
    });

    it("negative control: the bytes Envoy's query_parameters reads from the same requests make every call fail, and a gateway failing open passes all 24", async () => {
        const addr = perValueSide().client.address;
        const outcomes: string[] = [];
        for (let i = 100; i < 124; i++) {
            const raw = unreadable(i).split("api_key=")[1]!;
            const answer = await shouldRateLimitBytes(addr, "shop", [
                [
                    { key: "rule", value: Buffer.from("per-qkey") },
                    { key: "query_value", value: envoyPercentDecodeBytes(raw) },
                ],
            ]);
            // failure_mode_deny false: an error lets the request through (the model of Envoy's filter: only OVER_LIMIT refuses).
            outcomes.push(answer instanceof Error ? "error: allowed" : gatewayOutcome(answer));
        }
        expect(outcomes).to.deep.equal(Array(24).fill("error: allowed"));
    });

    it("a raw :path whose query value is not valid UTF-8 (a UTF-8-encoded surrogate, no percent-encoding), matched by C++ RE2 as Envoy does: only the trusted-value :path matcher (printable ASCII or whole UTF-8 escapes) keeps it out, the client's guard counter takes 24 such requests, 3 pass; negative control: with that matcher widened to (?s:.*) the value is sent, every call fails, 24 of 24 pass", async () => {
        const bin = probe();
        // ED A0 80 + i: U+D800..U+D817 written as UTF-8, which the service refuses; no '%' anywhere.
        const raw = (i: number) => Buffer.concat([Buffer.from(`/q?api_key=s${i}`), Buffer.from([0xed, 0xa0, 0x80 + i])]);
        // A minute of its own: the shared counter refused in an earlier case stays in the service's local cache for its minute.
        await ensureWindow(60);
        const rendered = await rawPathOutcomes(bin, shop.objects, raw);
        expect(rendered.sent, "the descriptors Envoy sends (as rendered)").to.deep.equal(
            Array(24).fill(`rule=per-qkey,untrusted_value=shared,masked_remote_address=${CLIENT}/32`),
        );
        expect(rendered.outcomes.filter((o) => o === "allow")).to.have.length(3);
        await ensureWindow(10);
        const widened = await rawPathOutcomes(bin, widenTrustedValue(shop.objects), raw);
        expect(widened.sent[0], "widened: the value itself is sent").to.match(/^rule=per-qkey,query_value=s0/);
        expect(widened.outcomes, "widened: the call fails, the gateway fails open").to.deep.equal(Array(24).fill("error: allowed"));
    });

    /** The per-qkey entries' descriptors for each raw :path (C++ RE2 on the bytes), sent to the real per-value service. */
    async function rawPathOutcomes(bin: string, objects: K8sObject[], raw: (i: number) => Buffer) {
        const entries = ruleEntries(objects, "per-qkey");
        expect(entries, "the value's entry, the ambiguous, untrusted, too long and missing ones").to.have.length(5);
        const sent: string[] = [];
        const outcomes: string[] = [];
        for (let i = 0; i < 24; i++) {
            const descriptors = entries.filter((e) => entryMatches(bin, e, raw(i))).map((e) => descriptorOf(e, raw(i)));
            sent.push(descriptors.map((d) => d.map((x) => `${x.key}=${x.value.toString("latin1")}`).join(",")).join(" | "));
            const answer = await shouldRateLimitBytes(perValueSide().client.address, "shop", descriptors);
            outcomes.push(answer instanceof Error ? "error: allowed" : gatewayOutcome(answer));
        }
        return { sent, outcomes };
    }
});

/** Every `rate_limits` entry of the rendered filters whose first action names `rule`, once each. */
function ruleEntries(objects: K8sObject[], rule: string): any[] {
    const seen = new Map<string, any>();
    const walk = (x: any) => {
        if (!x || typeof x !== "object") return;
        if (Array.isArray(x.actions) && x.actions[0]?.header_value_match?.descriptor_value === rule) seen.set(JSON.stringify(x), x);
        for (const v of Object.values(x)) walk(v);
    };
    objects.filter((o) => o.kind === "EnvoyFilter").forEach(walk);
    return [...seen.values()];
}

/** Envoy's `header_value_match` of an entry on the raw `:path` bytes: every condition a C++ RE2 full match (or its inverse). */
function entryMatches(bin: string, entry: any, path: Buffer): boolean {
    return entry.actions[0].header_value_match.headers.every((h: any) => {
        if (h.name !== ":path" || !h.safe_regex_match) throw new Error(`condition ${JSON.stringify(h)} is not a :path regex`);
        return re2FullMatch(bin, h.safe_regex_match.regex, [path])[0] !== (h.invert_match === true);
    });
}

/** The descriptor an entry sends: the rule's name, a generic key, or the raw bytes of the query parameter (no '%' to decode). */
function descriptorOf(entry: any, path: Buffer): { key: string; value: Buffer }[] {
    return entry.actions.map((a: any) => {
        if (a.header_value_match) return { key: a.header_value_match.descriptor_key, value: Buffer.from(a.header_value_match.descriptor_value) };
        if (a.generic_key) return { key: a.generic_key.descriptor_key, value: Buffer.from(a.generic_key.descriptor_value) };
        // The requests come from one IPv4 client: its /32 (the rule's per-client fallback).
        if (a.masked_remote_address) return { key: "masked_remote_address", value: Buffer.from(`${CLIENT}/${a.masked_remote_address.v4_prefix_mask_len}`) };
        if (a.query_parameters) {
            const at = path.indexOf(`${a.query_parameters.query_parameter_name}=`);
            return { key: a.query_parameters.descriptor_key, value: path.subarray(at + a.query_parameters.query_parameter_name.length + 1) };
        }
        throw new Error(`action ${JSON.stringify(a)} is not modelled here`);
    });
}

/**
 * The rendered objects with the trusted-value matcher of `api_key` (printable ASCII as written, or
 * escapes forming whole UTF-8 characters) widened to `(?s:.*)` (the negative control).
 */
function widenTrustedValue(objects: K8sObject[]): K8sObject[] {
    const good = JSON.stringify(trustedQueryValueRegex("api_key", ValueCharset.Utf8));
    const text = JSON.stringify(objects);
    if (!text.includes(good)) throw new Error("the rendered filters hold no trusted-value matcher of api_key to widen");
    return JSON.parse(text.split(good).join(JSON.stringify("(?s:.*)")));
}
