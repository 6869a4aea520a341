/**
 * PlatformRateLimit's own plain fields, each declared once: its default, its rule and where it
 * goes. The resolve (platform-ratelimit-resolve.ts) reads them and nothing below it fills a default.
 * The documentation stays on the arguments' JSDoc (the package schema and docs are generated from
 * it); a unit test holds each default stated there to the one declared here. The service's other
 * settings, Redis and the monitoring are GlobalRateLimit's (their defaults are its own).
 */
import { booleanProblems, protoDurationProblems } from "../lib/field-checks";
import { frozenCopy } from "../lib/frozen";
import { Problem } from "../lib/problems";

/** One plain field: where it is given, its default, its rule (`fallback`: the value a fix suggests). */
interface PlatformField<T> {
    /** The argument's path (`filters.<source>.` adds a filter's own). */
    readonly path: string;
    readonly default: T;
    /** Where the resolved value goes. */
    readonly goesTo: string;
    readonly rule?: (key: string, value: unknown, fallback: T) => Problem[];
}

/** A field whose rule the platform applies itself (the others' rules are GlobalRateLimit's, on the service's arguments). */
type CheckedField<T> = PlatformField<T> & Required<Pick<PlatformField<T>, "rule">>;

/** The platform's plain fields (read-only). */
export const PLATFORM_FIELDS = frozenCopy({
    failureModeDeny: {
        path: "failureModeDeny",
        default: false,
        goesTo: "each platform filter's `failure_mode_deny` (and the monitoring's fail-mode alerts)",
        rule: (key, value, fallback) => booleanProblems(key, value, fallback),
    } satisfies CheckedField<boolean>,
    /** 5× the service's p99 (10.9 ms) with its store saturated (docs/proof/benchmarks.md). */
    timeout: {
        path: "timeout",
        default: "0.05s",
        goesTo: "each platform filter's `timeout`, and the service's Redis timeout derived from it",
        rule: (key, value, fallback) => protoDurationProblems(key, value, 0.001, fallback),
    } satisfies CheckedField<string>,
    preLimit: {
        path: "preLimit",
        default: true,
        goesTo: "a local rate-limit filter before each platform filter (none in the service's shadow mode)",
        rule: (key, value, fallback) => booleanProblems(key, value, fallback),
    } satisfies CheckedField<boolean>,
    serviceName: { path: "service.name", default: "ratelimit-platform", goesTo: "the service's Deployment and Service names" } satisfies PlatformField<string>,
    configName: { path: "service.configName", default: "ratelimit-platform-config", goesTo: "the service's ConfigMap name" } satisfies PlatformField<string>,
});
