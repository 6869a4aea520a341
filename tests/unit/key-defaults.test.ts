/**
 * The stack's config keys state no default of their own: each key's default is read from the
 * declaration of the field it sets (MeshRateLimit's `MESH_DEFAULTS`, GlobalRateLimit's
 * `GLOBAL_DEFAULTS`, which place the components' defaults under their fields), so a component's
 * default and its key's cannot drift apart. Controls: the scan finds a literal default, and a key
 * whose field the stack presets differently from the component shows the stack's preset.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { CONFIG_KEYS, configDefault } from "../../program/config-keys";
import { SECRET_KEY_FIELDS } from "../../components/service/redis-fields";
import { GLOBAL_DEFAULTS } from "../../components/global-ratelimit/defaults";
import { GLOBAL_FIELDS } from "../../components/global-ratelimit/fields";
import { PER_VALUE_FIELDS, SERVICE_FIELDS } from "../../components/service/fields";
import { MESH_DEFAULTS } from "../../mesh/mesh-defaults";
import { LimitUnit } from "../../builders/rule-args";
import { ServiceLogLevel } from "../../components/service/settings";

/** The choices a description leaves out. */
function unlisted(description: string, choices: readonly string[]): string[] {
    return choices.filter((c) => !description.includes(`\`${c}\``));
}

const KEYS_FILE = path.join(__dirname, "..", "..", "program", "config-keys.ts");

/** The rows' `default:` lines that state a value (`""`, "variant preset or derived", is no value). */
function literalDefaults(text: string): string[] {
    return text.split("\n").filter((l) => /^\s+default: [^;]*$/.test(l) && !/^\s+default: "",?$/.test(l));
}

describe("config keys: each default read from its field's declaration", () => {
    it("no row of program/config-keys.ts states a default value; control: the scan finds one", () => {
        expect(literalDefaults(fs.readFileSync(KEYS_FILE, "utf8"))).to.deep.equal([]);
        expect(literalDefaults('    {\n        key: "x",\n        default: "10s",\n        default: "",\n')).to.deep.equal(['        default: "10s",']);
    });

    it("GlobalRateLimit's own defaults reach their keys (timeout, service, tuning, Redis, per-value store)", () => {
        expect(configDefault("rateLimitTimeout")).to.equal(GLOBAL_FIELDS.timeout.default);
        expect(configDefault("ratelimitLogLevel")).to.equal(SERVICE_FIELDS.logLevel.default);
        expect(configDefault("redisPoolSize")).to.equal(String(SERVICE_FIELDS.redisPoolSize.default));
        expect(configDefault("redisPasswordSecretKey")).to.equal(SECRET_KEY_FIELDS.key.default);
        expect(configDefault("perValueTimeout")).to.equal(PER_VALUE_FIELDS.timeout.default);
        expect(configDefault("clientPrefixV6")).to.equal(String(GLOBAL_DEFAULTS.clientPrefix.v6));
    });

    it("control: where the stack presets a field apart from the component, the key shows the stack's (filterLayout)", () => {
        expect(configDefault("filterLayout")).to.equal(MESH_DEFAULTS.global.filterLayout);
        expect(configDefault("filterLayout")).to.not.equal("per-instance");
    });

    it("every key with a fixed default has one, as the user would type it (lists comma-separated)", () => {
        expect(configDefault("gatewayHosts")).to.equal(MESH_DEFAULTS.bookinfo.hosts.join(","));
        for (const k of CONFIG_KEYS) expect(k.default, k.key).to.be.a("string");
    });

    it("a key lists exactly its enum's choices (unit: every LimitUnit; ratelimitLogLevel: every level); control: the old unit text leaves three out", () => {
        const description = (key: string) => CONFIG_KEYS.find((k) => k.key === key)!.description;
        expect(unlisted(description("unit"), Object.values(LimitUnit))).to.deep.equal([]);
        expect(unlisted(description("ratelimitLogLevel"), Object.values(ServiceLogLevel))).to.deep.equal([]);
        expect(unlisted("Time unit of every global limit: `second`, `minute`, `hour` or `day`.", Object.values(LimitUnit))).to.deep.equal([
            "week",
            "month",
            "year",
        ]);
    });
});
