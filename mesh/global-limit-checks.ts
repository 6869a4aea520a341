/**
 * MeshRateLimit's checks of its global limits: the domain, the three limits or the whole descriptor
 * list, variant A's route limit and its regex, and the filter choices its other parts depend on.
 * Pure; each problem under its field (mesh-checks.ts runs them in the order problems are reported).
 */
import { bindCrossCheck } from "../lib/cross-checks";
import { withDefaults } from "../lib/field-decl";
import { GLOBAL_FIELDS } from "../components/global-ratelimit/fields";
import { MESH_LIMITS_CHECKS } from "./mesh-fields";
import { FilterLayout } from "../builders/envoy-filters";
import type { SpecPaths } from "../builders/routes";
import { defaultApiRegex } from "../builders/routes";
import { DEFAULT_PATH_KEY, LimitUnit } from "../builders/rule-args";
import { StackVariant } from "../components/common/mesh-enums";
import type { DescriptorArgs } from "../components/common/mesh-enums";
import { fieldRef } from "../lib/fix-style";
import { compileFullMatch } from "../lib/formats";
import { keyOf } from "./arg-paths";
import { Reader, readDescriptors, textOr } from "./field-reader";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";
import { MESH_DEFAULTS } from "./mesh-defaults";
import type { ApiRouteLimit, StackSettings } from "./settings-types";
import { VARIANT_PRESETS } from "./settings-types";

/** The global limits: the domain, the descriptors (the variant's preset, or the whole list given) and variant A's route limit. */
export function readGlobalLimits(
    r: Reader,
    a: MeshRateLimitArgs,
    variant: StackVariant,
    paths: SpecPaths,
): { domain: string; descriptors: DescriptorArgs[]; apiRoute?: ApiRouteLimit; apiRouteName: string } {
    const preset = VARIANT_PRESETS[variant];
    // GlobalRateLimit checks the domain; the variant presets it.
    const domain = textOr(a.global?.domain, preset.domain);
    const unit = r.oneOf<LimitUnit>(["limits", "unit"]);
    const limitedPathLimit = r.limit(["limits", "limitedPath"], unit);
    const catchAllLimit = r.limit(["limits", "catchAll"], unit);
    let apiLimit: ReturnType<Reader["limit"]> | undefined;
    if (preset.routeSplit) {
        apiLimit = r.limit(["limits", "api"], unit, preset.apiLimit);
    } else if (r.given(["limits", "api"]) !== undefined) {
        r.fail(
            ["limits", "api"],
            r.shown(["limits", "api"]),
            `applies only to variant A (variant ${variant} has no '${textOr(a.limits?.apiRoute, MESH_DEFAULTS.limits.apiRoute)}' route limit)`,
            (s) => `${s.rm(keyOf(["limits", "api"]))}, or ${s.set(keyOf(["variant"]), "A")}`,
        );
    }

    const apiRouteName = textOr(a.limits?.apiRoute, MESH_DEFAULTS.limits.apiRoute);
    const descriptorValue = textOr(a.limits?.apiDescriptorValue, MESH_DEFAULTS.limits.apiDescriptorValue);
    const apiRoute = readApiRoute(r, preset.routeSplit, paths, apiRouteName, descriptorValue);

    const presetDescriptors: DescriptorArgs[] = [
        { key: DEFAULT_PATH_KEY, value: paths.limited, ...limitedPathLimit },
        ...(apiLimit !== undefined ? [{ key: DEFAULT_PATH_KEY, value: descriptorValue, ...apiLimit }] : []),
        { key: DEFAULT_PATH_KEY, ...catchAllLimit },
    ];
    if (presetDescriptors[0].value === descriptorValue && apiLimit !== undefined) {
        r.fail(["limits", "apiDescriptorValue"], descriptorValue, `equals ${fieldRef(keyOf(["paths", "limited"]))}, so two descriptors would collide`, (s) =>
            s.set(keyOf(["limits", "apiDescriptorValue"]), "api"),
        );
    }
    return { domain, descriptors: readLimitList(r, presetDescriptors), apiRoute, apiRouteName };
}

/** Variant A's route limit (its route, regex and descriptor value); the regex refused in variant B. */
function readApiRoute(r: Reader, routeSplit: boolean, paths: SpecPaths, route: string, descriptorValue: string): ApiRouteLimit | undefined {
    const regexPath = ["limits", "apiRouteRegex"] as const;
    if (!routeSplit) {
        if (r.given(regexPath) !== undefined) r.fail(regexPath, r.shown(regexPath), "applies only to variant A", (s) => s.rm(keyOf(regexPath)));
        return undefined;
    }
    // The specification writes `<api_prefix>/[1-9]{1,2}`, which misses 10, 20, ... 90 although it
    // means "a number from 1 to 99"; this form matches exactly 1..99 (README, deviations).
    const regex = r.shown(regexPath) ?? defaultApiRegex(paths.apiPrefix);
    try {
        compileFullMatch(regex);
    } catch (e) {
        r.fail(
            regexPath,
            regex,
            `is not a valid RE2 regular expression (${(e as Error).message.replace(/^Invalid regular expression: /, "")}); Envoy would reject the route patch`,
            (s) => s.set(keyOf(regexPath), defaultApiRegex(paths.apiPrefix)),
        );
    }
    return { route, regex, descriptorValue };
}

/** The whole descriptor list when given (the three limits then refused as ignored), else the preset's. */
function readLimitList(r: Reader, presetDescriptors: DescriptorArgs[]): DescriptorArgs[] {
    const descriptorsPath = ["limits", "descriptors"] as const;
    const descriptors = readDescriptors(r, descriptorsPath, presetDescriptors);
    if (r.given(descriptorsPath) === undefined) return descriptors;
    for (const k of ["limitedPath", "api", "catchAll"] as const) {
        const path = ["limits", k] as const;
        if (r.given(path) !== undefined) {
            r.fail(
                path,
                r.shown(path),
                `is ignored because '${fieldRef(keyOf(descriptorsPath))}' replaces the whole list`,
                (s) => `${s.rm(keyOf(path))}, or ${s.rm(keyOf(descriptorsPath))}`,
            );
        }
    }
    return descriptors;
}

/**
 * How the gateway's rate-limit filter asks the service: the choices MeshRateLimit's other parts
 * depend on (the path key of its limits, the layout its local bucket shares). The timeout and the
 * status on error are GlobalRateLimit's alone: its plan checks them, and they are taken as given.
 */
export function readGlobalFilter(a: MeshRateLimitArgs): Omit<StackSettings["global"], "domain" | "descriptors" | "apiRoute"> {
    const g = a.global ?? {};
    // GlobalRateLimit's declared defaults, but the layout: the stack's is the specification's (mesh-defaults.ts).
    const d = withDefaults(GLOBAL_FIELDS, g);
    return {
        failureModeDeny: d.failureModeDeny,
        preLimit: d.preLimit,
        counterStore: d.counterStore,
        pathKey: d.pathKey,
        filterLayout: g.filterLayout ?? (MESH_DEFAULTS.global.filterLayout as FilterLayout),
        ...(g.statusOnError !== undefined ? { statusOnError: g.statusOnError } : {}),
    };
}

/** The limits' cross-field checks (mesh-fields.ts MESH_LIMITS_CHECKS). */
bindCrossCheck(MESH_LIMITS_CHECKS.apiRoute, "global-limit-checks.ts readGlobalLimits, readApiRoute; mesh-checks.ts readBookinfo", readGlobalLimits);
bindCrossCheck(MESH_LIMITS_CHECKS.descriptors, "global-limit-checks.ts readLimitList", readLimitList);
