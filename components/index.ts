/**
 * The package entry: the components and their argument types. Importing it runs nothing (no stack
 * config is read, no resource is created); `package/` makes it a Pulumi plugin for every language.
 */
export {
    GlobalRateLimit,
    GlobalRateLimitArgs,
    GatewayTargetArgs,
    RateLimitServiceOptionsArgs,
    RedisOptionsArgs,
    RedisModeName,
    SecretKeyArgs,
    ServiceLogLevel,
} from "./global-ratelimit";
export { LocalRateLimit, LocalRateLimitArgs } from "./local-ratelimit";
export { MeshRateLimit, LimitRowOutput } from "./mesh-ratelimit";
export { Bookinfo, BookinfoArgs } from "./bookinfo";
export { ManagedApi, ManagedApiArgs } from "./managed-api";
export { MeshMutualTls, MeshMutualTlsArgs } from "./mesh-mtls";
export { MeshRateLimitArgs } from "./mesh-ratelimit-args";
export {
    ApiProfileName,
    DescriptorArgs,
    EspPortModeName,
    FilterNamespaces,
    HttpRouteArgs,
    LocalPlacementMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "./mesh-enums";
export { ClientCidrArgs } from "./client-cidr";
export {
    HeaderMatchArgs,
    LimitArgs,
    LimitUnit,
    MissingHeader,
    PathKeyMode,
    PathLimitArgs,
    PathMatchArgs,
    PerPathLimitsArgs,
    RateLimitRuleArgs,
    RouteRefArgs,
} from "./rules";
