/**
 * GlobalRateLimit's defaults in the shape of its arguments, for whoever reads a default by the
 * field's path (the stack's config keys). Derived: the plain fields' from their declarations
 * (global-ratelimit-fields.ts, service-fields.ts), the rest from where each is stated (defaults.ts,
 * the rules' client prefix, the Redis mode); the object is type-checked against the arguments. A
 * field absent here has no fixed default. Pure.
 */
import { RedisModeName } from "../builders/redis-connection";
import { DEFAULT_CLIENT_PREFIX } from "../builders/rule-args";
import { defaultsOf } from "../lib/field-decl";
import { DEFAULTS } from "./defaults";
import { GlobalRateLimitArgs } from "./global-ratelimit-args";
import { GLOBAL_ARGS_FIELDS, GLOBAL_FIELDS } from "./global-ratelimit-fields";
import { PER_VALUE_FIELDS, SERVICE_FIELDS } from "./service-fields";

/** Any part of `T`, at any depth (a default may sit under a field whose siblings are required). */
type Partially<T> = {
    [K in keyof T]?: NonNullable<T[K]> extends readonly unknown[] ? T[K] : NonNullable<T[K]> extends object ? Partially<NonNullable<T[K]>> : T[K];
};

export const GLOBAL_DEFAULTS = {
    ...defaultsOf(GLOBAL_FIELDS),
    ...defaultsOf(GLOBAL_ARGS_FIELDS),
    clientPrefix: { ...DEFAULT_CLIENT_PREFIX },
    service: defaultsOf(SERVICE_FIELDS),
    redis: {
        mode: RedisModeName.InCluster,
        image: DEFAULTS.redisImage,
        maxMemory: DEFAULTS.redisMaxMemory,
        tls: DEFAULTS.redisTls,
        passwordSecret: { key: DEFAULTS.redisPasswordSecretKey },
    },
    perValueStore: defaultsOf(PER_VALUE_FIELDS),
} satisfies Partially<GlobalRateLimitArgs>;
