/**
 * The fields of two lists MeshRateLimit and Bookinfo take whole: a VirtualService HTTP route of the
 * bookinfo sample (`HttpRouteArgs`) and an entry of the rate-limit service's descriptor list
 * (`DescriptorArgs`), each declared once (lib/field-decl.ts); components/common/mesh-route-args.generated.ts is
 * generated from these tables (`npm run gen`) and components/common/mesh-enums.ts exports it
 * again. Each list is checked whole, an entry with the others (components/bookinfo/resolve.ts
 * `routeProblems`, mesh/field-reader.ts `readDescriptors`): the rules here say so. Pure.
 */
import { ArgInterface, field, oneOfRule } from "../../lib/field-decl";
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { LimitUnit } from "../../builders/rule-args";
import { LIMIT_FIELDS } from "./rule-fields";
import { t } from "../../lib/field-types";

/** Each list is judged whole, an entry with the others: the routes (components/bookinfo/resolve.ts), the descriptors (mesh/field-reader.ts). */
export const MESH_ROUTE_CHECKS = {
    routes: crossCheck("bookinfo routes", ["name", "exact", "prefix"], "names distinct; paths and prefixes a client can send, each in one route"),
    descriptors: crossCheck("descriptor list", ["key", "value", "unit", "requestsPerUnit"], "a non-empty list, each key and value once, each limit valid"),
};
const withRoutes = (what: string) => checkedWith<never>(MESH_ROUTE_CHECKS.routes, what);
const withDescriptors = (what: string) => checkedWith<never>(MESH_ROUTE_CHECKS.descriptors, what);

/** The fields of `HttpRouteArgs`. */
export const HTTP_ROUTE_FIELDS = {
    name: field<string>({
        doc: "Route name (a route limit names it).",
        type: t.string(),
        defaultNote: "none",
        rule: withRoutes("a route name, distinct"),
        goesTo: { object: "the VirtualService's http[].name" },
    }),
    exact: field<string[]>({
        doc: "Exact paths.",
        type: t.list(t.string()),
        defaultNote: "none",
        rule: withRoutes("paths a client can send"),
        goesTo: { object: "the VirtualService's http[].match[].uri.exact" },
    }),
    prefix: field<string[]>({
        doc: "Path prefixes.",
        type: t.list(t.string()),
        defaultNote: "none",
        rule: withRoutes("path prefixes a client can send"),
        goesTo: { object: "the VirtualService's http[].match[].uri.prefix" },
    }),
};

/** The fields of `DescriptorArgs`. */
export const DESCRIPTOR_FIELDS = {
    key: field<string>({
        doc: "Descriptor key: `PATH`.",
        type: t.string(),
        required: true,
        rule: withDescriptors("`PATH`"),
        goesTo: { object: "the rate-limit service's config.yaml descriptor key" },
    }),
    value: field<string>({
        doc: "Value; absent: the catch-all (every distinct value its own counter).",
        type: t.string(),
        rule: withDescriptors("a non-empty string, each key and value once"),
        goesTo: { object: "the rate-limit service's config.yaml descriptor value" },
    }),
    unit: field<LimitUnit>({
        ...LIMIT_FIELDS.unit,
        doc: "Time unit.",
        rule: { ...oneOfRule(LimitUnit, "LimitUnit"), ...withDescriptors("one of its values") },
    }),
    requestsPerUnit: field<number>({
        ...LIMIT_FIELDS.requestsPerUnit,
        doc: "Requests per unit.",
        rule: withDescriptors(LIMIT_FIELDS.requestsPerUnit.rule.text),
    }),
};

/** The interfaces generated from these tables (components/common/mesh-route-args.generated.ts). */
export const MESH_ROUTE_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "HttpRouteArgs", doc: "A VirtualService HTTP route of the bookinfo sample.", fields: HTTP_ROUTE_FIELDS },
    { name: "DescriptorArgs", doc: "One entry of the rate-limit service's descriptor list (the `descriptors` key).", fields: DESCRIPTOR_FIELDS },
];

/** The imports of the generated components/common/mesh-route-args.generated.ts. */
export const MESH_ROUTE_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = { "../../builders/rule-args": ["LimitUnit"] };
