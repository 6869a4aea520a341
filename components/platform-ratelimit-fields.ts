/**
 * PlatformRateLimit's own plain fields, each declared once: its default, its rule and where it
 * goes. The resolve (platform-ratelimit-resolve.ts) reads them and nothing below it fills a default.
 * The documentation stays on the arguments' JSDoc (the package schema and docs are generated from
 * it); a unit test holds each default stated there to the one declared here. The service's other
 * settings, Redis and the monitoring are GlobalRateLimit's (their defaults are its own).
 */
import { GoesTo, Rule, booleanRule, protoDurationRule } from "../lib/field-decl";
import { frozenCopy } from "../lib/frozen";

/** One plain field: where it is given, its default, its rule (lib/field-decl.ts; its fix falls back to the value given) and where it goes. */
interface PlatformField<T> {
    /** The argument's path (`filters.<source>.` adds a filter's own). */
    readonly path: string;
    readonly default: T;
    /** Where the resolved value goes. */
    readonly goesTo: GoesTo;
    readonly rule?: Rule<T>;
}

/** A field whose rule the platform applies itself (the others' rules are GlobalRateLimit's, on the service's arguments). */
type CheckedField<T> = PlatformField<T> & Required<Pick<PlatformField<T>, "rule">>;

/** The platform's plain fields (read-only). */
export const PLATFORM_FIELDS = frozenCopy({
    failureModeDeny: {
        path: "failureModeDeny",
        default: false,
        goesTo: { envoy: "each platform filter's `failure_mode_deny` (and the monitoring's fail-mode alerts)" },
        rule: booleanRule(),
    } satisfies CheckedField<boolean>,
    /** 5× the service's p99 (10.9 ms) with its store saturated (docs/proof/benchmarks.md). */
    timeout: {
        path: "timeout",
        default: "0.05s",
        goesTo: { envoy: "each platform filter's `timeout` (the service's `REDIS_TIMEOUT` derived from it)" },
        rule: protoDurationRule(0.001),
    } satisfies CheckedField<string>,
    preLimit: {
        path: "preLimit",
        default: true,
        goesTo: { object: "a local rate-limit filter before each platform filter (none in the service's shadow mode)" },
        rule: booleanRule(),
    } satisfies CheckedField<boolean>,
    serviceName: {
        path: "service.name",
        default: "ratelimit-platform",
        goesTo: { object: "the service's Deployment and Service names" },
    } satisfies PlatformField<string>,
    configName: {
        path: "service.configName",
        default: "ratelimit-platform-config",
        goesTo: { object: "the service's ConfigMap name" },
    } satisfies PlatformField<string>,
});
