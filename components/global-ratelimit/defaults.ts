/**
 * GlobalRateLimit's defaults in the shape of its arguments, for whoever reads a default by the
 * field's path (the stack's config keys). Derived: the plain fields' from their declarations
 * (global-ratelimit-fields.ts, service-fields.ts, redis-fields.ts, ratelimit-monitoring-fields.ts,
 * client-prefix-fields.ts); the object is type-checked against the arguments. A field absent here
 * has no fixed default. Pure.
 */
import { defaultsOf } from "../../lib/field-decl";
import { CLIENT_PREFIX_FIELDS } from "../rules/client-prefix-fields";
import { GlobalRateLimitArgs } from "./args.generated";
import { GLOBAL_ARGS_FIELDS, GLOBAL_FIELDS } from "./fields";
import { REDIS_FIELDS, SECRET_KEY_FIELDS } from "../service/redis-fields";
import { MONITORING_FIELDS, MONITORING_OPTION_FIELDS } from "../service/ratelimit-monitoring-fields";
import { PER_VALUE_FIELDS, SERVICE_FIELDS } from "../service/fields";

/** Any part of `T`, at any depth (a default may sit under a field whose siblings are required). */
type Partially<T> = {
    [K in keyof T]?: NonNullable<T[K]> extends readonly unknown[] ? T[K] : NonNullable<T[K]> extends object ? Partially<NonNullable<T[K]>> : T[K];
};

export const GLOBAL_DEFAULTS = {
    ...defaultsOf(GLOBAL_FIELDS),
    ...defaultsOf(GLOBAL_ARGS_FIELDS),
    clientPrefix: defaultsOf(CLIENT_PREFIX_FIELDS),
    service: defaultsOf(SERVICE_FIELDS),
    redis: { ...defaultsOf(REDIS_FIELDS), passwordSecret: defaultsOf(SECRET_KEY_FIELDS) },
    monitoring: { ...defaultsOf(MONITORING_OPTION_FIELDS), ...defaultsOf(MONITORING_FIELDS) },
    perValueStore: defaultsOf(PER_VALUE_FIELDS),
} satisfies Partially<GlobalRateLimitArgs>;
