/**
 * The package entry: the components and their argument types. Importing it runs nothing (no stack
 * config is read, no resource is created); `plugin/` makes it a Pulumi plugin for every language.
 */
export { AccessPolicyArgs, GlobalRateLimitArgs, GlobalRateLimitOptions, RateLimitServiceOptionsArgs } from "./components/global-ratelimit/args.generated";
export { GlobalRateLimit } from "./components/global-ratelimit/component";
export type { GlobalRateLimitResourceOptions } from "./components/global-ratelimit/component";
export type { OwnershipView, RoutedHosts, ServingGateway } from "./builders/host-ownership-rule";
export { PlatformRateLimit } from "./components/platform-ratelimit/component";
export { PlatformGatewayArgs, PlatformLimitsArgs, PlatformRateLimitArgs } from "./components/platform-ratelimit/args.generated";
export { PlatformDefaults } from "./components/global-ratelimit/platform-defaults";
export { PerValueStoreArgs } from "./components/global-ratelimit/per-value-store";
export { MonitoringArgs, MonitoringOptionsArgs } from "./components/service/ratelimit-monitoring";
export { CounterStore } from "./builders/counter-stores";
export { ErrorStatus, FilterLayout, RateLimitHeaders } from "./builders/envoy-filters";
export { GatewayTargetArgs } from "./components/global-ratelimit/gateway-target";
export { GatewayAccessLogArgs, SecretHeaderArgs, SecretHeaderForm } from "./components/global-ratelimit/gateway-access-log";
export { RedisOptionsArgs, SecretKeyArgs } from "./components/service/redis-options";
export { RedisModeName } from "./builders/redis-connection";
export { ServiceLogLevel } from "./components/service/settings";
export { LocalBucketOptions, LocalRateLimit, LocalRateLimitArgs } from "./components/local-ratelimit/component";
export { MeshRateLimit, LimitRowOutput } from "./mesh/mesh-ratelimit";
export { Bookinfo } from "./components/bookinfo/component";
export { BookinfoArgs, BookinfoOptions } from "./components/bookinfo/args.generated";
export { ManagedApi } from "./components/managed-api/component";
export { ManagedApiArgs, ManagedApiOptions } from "./components/managed-api/args.generated";
export { MeshMutualTls, MeshMutualTlsArgs } from "./components/mesh-mtls/component";
export {
    MeshRateLimitArgs,
    MeshPathsArgs,
    MeshLimitsArgs,
    MeshPlacementArgs,
    MeshGlobalArgs,
    MeshAccessPolicyArgs,
    MeshLocalArgs,
    MeshBookinfoArgs,
    MeshManagedApiArgs,
} from "./mesh/mesh-ratelimit-args.generated";
export {
    ApiProfileName,
    BookinfoMode,
    DescriptorArgs,
    EspPortModeName,
    FilterNamespaces,
    HttpRouteArgs,
    LocalPlacementMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "./components/common/mesh-enums";
export { ClientCidrArgs } from "./builders/client-cidr";
export { IdentityArgs, JwtIdentityArgs, MissingIdentity } from "./builders/identity-args";
export {
    ClientPrefixArgs,
    HeaderMatchArgs,
    QueryMatchArgs,
    LimitArgs,
    LimitUnit,
    MissingHeader,
    PathKeyMode,
    PathLimitArgs,
    PathMatchArgs,
    PathSpellings,
    PerPathLimitsArgs,
    RateLimitRuleArgs,
    RouteRefArgs,
    ValueCharset,
} from "./builders/rule-args";
// Ownership per stack: the owner annotation, and the check a program runs before it registers anything.
export {
    LiveObjectMeta,
    OWNER_ANNOTATION,
    ObjectRef,
    OwnershipVerdict,
    classifyObjects,
    currentStackOwner,
    duplicateObjects,
    ownerTransformation,
    plannedObjects,
} from "./components/common/ownership";
// Bad arguments throw an InputError listing every Problem (field path, value, what is wrong, the fix).
export { InputError, Problem } from "./lib/problems";
// Offline proof of a user's own program (the `mesh-ratelimit` command's engine): nothing runs at import.
export { renderProgram, RenderedProgram, RenderProgramOptions, ProgramError } from "./prove/program-runner";
export { explainProgram, ExplainRequest, ExplainOptions, ProgramExplanation, replayLog, replayLogFile, ReplayOptions, ProgramReplay } from "./prove/api";
export { Decision, CountedDescriptor, RefusedBy, ProveRequest, ProveResponse, Simulator } from "./prove/simulate";
export { parseLog, parseLogLine, LogRequest, BadLine, ParsedLog } from "./prove/access-log";
export { RuleReplay, ReplayResult, ChangedDecision } from "./prove/replay";
