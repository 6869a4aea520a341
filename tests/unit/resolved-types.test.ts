/**
 * Issue 65: every exported `Resolved*` type of components/ and builders/ is derived from its
 * declarations (`Resolved<typeof X_FIELDS>` of lib/field-decl.ts, or a type mapped over a generated
 * argument type), unless it is on the short allow-list below with its reason. A hand-written one (an
 * interface, a type alias whose body is an object type, or a read-only wrapper of an interface of its
 * own file) that is not on the list fails; the controls run the checker on source strings.
 *
 * builders/ (floor 1) cannot import the declarations of components/ (floor 2, docs/proof/architecture.md),
 * and the declarations carry their checks, which builders/ must not hold (typed-builders.test.ts): the
 * builders' resolved types stay written there, and each is pinned here, at compile time, to the
 * `Resolved<...>` of the declarations its fields come from (`npx tsc --noEmit` fails on a drift), its
 * computed fields named.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { ROOT, sourceFiles } from "./layout-lib";
import { Resolved } from "../../lib/field-decl";
import { ResolvedManagedApi } from "../../builders/managed-api";
import { ResolvedBookinfo, ResolvedHttpRoute } from "../../builders/bookinfo";
import { ResolvedLocalBucket } from "../../builders/local-bucket-filter";
import { ResolvedIdentity } from "../../builders/identity-args";
import { ResolvedLimit } from "../../builders/rule-args";
import { MANAGED_API_ARGS_FIELDS, MANAGED_API_OPTIONS_FIELDS } from "../../components/managed-api/fields";
import { BOOKINFO_ARGS_FIELDS, BOOKINFO_OPTIONS_FIELDS } from "../../components/bookinfo/fields";
import { LOCAL_ARGS_FIELDS, LOCAL_BUCKET_FIELDS } from "../../components/local-ratelimit/fields";
import { IDENTITY_FIELDS, JWT_IDENTITY_FIELDS } from "../../components/rules/identity-fields";
import { HTTP_ROUTE_FIELDS } from "../../components/rules/mesh-route-fields";
import { LIMIT_FIELDS } from "../../components/rules/rule-fields";

/** One exported `Resolved*` type of a source file, and whether it is written out by hand. */
export interface ResolvedTypeFound {
    name: string;
    file: string;
    handWritten: boolean;
}

const exported = (s: ts.Statement): boolean =>
    ts.canHaveModifiers(s) ? (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword) : false;

/** The interface a type names, through `Readonly<...>` and `DeepReadonly<...>`, when it is one of `local`. */
function wrappedInterface(t: ts.TypeNode, local: Set<string>): string | undefined {
    if (!ts.isTypeReferenceNode(t) || !ts.isIdentifier(t.typeName)) return undefined;
    const name = t.typeName.text;
    if (local.has(name)) return name;
    const [arg] = t.typeArguments ?? [];
    return (name === "Readonly" || name === "DeepReadonly") && arg && t.typeArguments!.length === 1 ? wrappedInterface(arg, local) : undefined;
}

/**
 * The exported `Resolved*` types of a source text: an interface, an alias of an object type, or an
 * alias of (a read-only wrapper of) an interface of the same file is hand-written; any other alias
 * (`Resolved<typeof F>`, a type mapped over an argument type, an intersection) is derived.
 */
export function resolvedTypesOf(file: string, text: string): ResolvedTypeFound[] {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const local = new Set(sf.statements.filter(ts.isInterfaceDeclaration).map((s) => s.name.text));
    return sf.statements.flatMap((s): ResolvedTypeFound[] => {
        if (!exported(s) || !(ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) || !/^Resolved[A-Z]/.test(s.name.text)) return [];
        const handWritten = ts.isInterfaceDeclaration(s) || ts.isTypeLiteralNode(s.type) || wrappedInterface(s.type, local) !== undefined;
        return [{ name: s.name.text, file, handWritten }];
    });
}

/** The hand-written ones of `found` that `allowed` does not list. */
export function unlisted(found: ResolvedTypeFound[], allowed: Readonly<Record<string, unknown>>): string[] {
    return found.filter((f) => f.handWritten && !(f.name in allowed)).map((f) => `${f.file} ${f.name}`);
}

/** Each allowed hand-written type, with why no declaration can define it; `pinned` ones are pinned below. */
const ALLOWED: Readonly<Record<string, { reason: string; pinned?: true }>> = {
    ResolvedPlatformService: { reason: "computed: the service's Istio cluster name, authority and gRPC address, derived from its name, namespace and port" },
    ResolvedMonitoring: { reason: "computed: the dashboard's and alert rules' input, names and placement, derived from the service and gateway" },
    ResolvedPlatformSource: { reason: "computed: a source's compiled limits, its call, ports and policy (DeepReadonly of PlatformSourceResolution)" },
    ResolvedPlatformRateLimit: { reason: "computed: the resolved parts together (DeepReadonly of PlatformRateLimitResolution)" },
    ResolvedPerValue: { reason: "computed: the per-value side's limits, call, endpoint and prefix (DeepReadonly of PerValueResolution)" },
    ResolvedGlobalRateLimit: { reason: "computed: the resolved parts together (DeepReadonly of GlobalRateLimitResolution)" },
    ResolvedRedis: { reason: "computed: builders' own RedisConnection (no declaration of its own) with its password's Secret decided (`auth`)" },
    ResolvedPerPath: { reason: "computed: the per-path descriptor key and each path's ResolvedLimit" },
    ResolvedManagedApi: { reason: "builders/ cannot import components/managed-api/fields.ts (an upward import)", pinned: true },
    ResolvedBookinfo: { reason: "builders/ cannot import components/bookinfo/fields.ts (an upward import)", pinned: true },
    ResolvedHttpRoute: { reason: "builders/ cannot import components/rules/mesh-route-fields.ts (an upward import)", pinned: true },
    ResolvedLocalBucket: { reason: "builders/ cannot import components/local-ratelimit/fields.ts (an upward import)", pinned: true },
    ResolvedIdentity: { reason: "builders/ cannot import components/rules/identity-fields.ts (an upward import)", pinned: true },
    ResolvedLimit: { reason: "builders/ cannot import components/rules/rule-fields.ts (an upward import)", pinned: true },
};

/** The keys of `T` that are optional. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
/** Whether two unions of keys are the same. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/**
 * `true` when the hand-written `H` has every field of `D` (the declarations' `Resolved<...>`), each
 * optional as there and of a type `D`'s value fits, and besides them exactly the computed fields `Extra`.
 */
type Pinned<H, D, Extra extends PropertyKey> =
    SameKeys<Exclude<keyof D, keyof H>, never> extends true
        ? SameKeys<Exclude<keyof H, keyof D>, Extra> extends true
            ? SameKeys<Extract<OptionalKeys<H>, keyof D>, OptionalKeys<D>> extends true
                ? D extends Pick<H, keyof D & keyof H>
                    ? true
                    : false
                : false
            : false
        : false;
/** Compiles only with `true`: a pin. */
const pin = <T extends true>(): T => true as T;

/** The builders' resolved types pinned to their declarations (compile-time; the values only list them). */
const PINS: Readonly<Record<string, true>> = {
    ResolvedManagedApi: pin<Pinned<ResolvedManagedApi, Resolved<typeof MANAGED_API_OPTIONS_FIELDS & typeof MANAGED_API_ARGS_FIELDS>, never>>(),
    ResolvedBookinfo: pin<Pinned<ResolvedBookinfo, Resolved<typeof BOOKINFO_OPTIONS_FIELDS & typeof BOOKINFO_ARGS_FIELDS>, "routes">>(),
    ResolvedHttpRoute: pin<Pinned<ResolvedHttpRoute, Resolved<Pick<typeof HTTP_ROUTE_FIELDS, "name">>, "exact" | "prefix">>(),
    ResolvedLocalBucket:
        pin<
            Pinned<
                ResolvedLocalBucket,
                Resolved<Pick<typeof LOCAL_ARGS_FIELDS, "selector" | "port" | "bucket" | "routes"> & Pick<typeof LOCAL_BUCKET_FIELDS, "fillInterval">>,
                "waypoint" | "httpFilterName" | "behaviour"
            >
        >(),
    ResolvedIdentity: pin<Pinned<ResolvedIdentity, Resolved<typeof IDENTITY_FIELDS>, "jwt">>(),
    ResolvedLimit: pin<Pinned<ResolvedLimit, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, "requests" | "unit" | "seconds">>(),
};

/** The identity's `jwt`, its claim filled in, is the JWT declarations' too. */
pin<Pinned<ResolvedIdentity["jwt"], Resolved<typeof JWT_IDENTITY_FIELDS>, never>>();

/** Every exported `Resolved*` type of components/ and builders/ (generated files left out). */
function allResolvedTypes(): ResolvedTypeFound[] {
    const files = [...sourceFiles("components"), ...sourceFiles("builders")].filter((f) => !f.includes(".generated."));
    return files.flatMap((f) => resolvedTypesOf(f, fs.readFileSync(path.join(ROOT, f), "utf8")));
}

describe("resolved types derived from their declarations (issue 65)", () => {
    const found = allResolvedTypes();

    it("every hand-written Resolved* type is on the allow-list, with its reason", () => {
        expect(found.length).to.be.greaterThan(20);
        expect(unlisted(found, ALLOWED)).to.deep.equal([]);
        for (const [name, { reason }] of Object.entries(ALLOWED)) expect(reason, name).to.match(/^(computed: |builders\/ cannot import )/);
    });

    it("each allow-list entry is a hand-written type that exists (the list shrinks as types are derived)", () => {
        const hand = new Set(found.filter((f) => f.handWritten).map((f) => f.name));
        expect(Object.keys(ALLOWED).filter((n) => !hand.has(n))).to.deep.equal([]);
    });

    it("each builders' type on the list is pinned to its declarations, and only those are", () => {
        const pinned = Object.keys(ALLOWED).filter((n) => ALLOWED[n]!.pinned);
        expect(Object.keys(PINS).sort()).to.deep.equal(pinned.sort());
        const inBuilders = new Set(found.filter((f) => f.file.startsWith("builders/")).map((f) => f.name));
        expect(pinned.filter((n) => !inBuilders.has(n))).to.deep.equal([]);
    });

    it("the components' types named by issue 65 are derived from their declarations", () => {
        const derived = new Set(found.filter((f) => !f.handWritten).map((f) => f.name));
        for (const n of [
            "ResolvedLocalRateLimit",
            "ResolvedPlatformGateway",
            "ResolvedPlatformAdmission",
            "ResolvedGateway",
            "ResolvedPlatformCall",
            "ResolvedMeshMutualTls",
        ])
            expect(derived.has(n), n).to.equal(true);
    });

    it("control: the checker finds a hand-written interface, object alias or wrapped interface, and passes derived ones", () => {
        const src = [
            "export interface ResolvedFoo { readonly a: string }",
            "export type ResolvedBar = { readonly a: string };",
            "interface BazResolution { a: string }",
            "export type ResolvedBaz = DeepReadonly<BazResolution>;",
            "export type ResolvedQux = Resolved<typeof QUX_FIELDS> & { readonly extra: number };",
            "export type ResolvedQuux = Readonly<QuuxArgs> & { readonly missing: number };",
            "interface ResolvedHidden { a: string }",
        ].join("\n");
        const got = resolvedTypesOf("x.ts", src);
        expect(got.map((g) => [g.name, g.handWritten])).to.deep.equal([
            ["ResolvedFoo", true],
            ["ResolvedBar", true],
            ["ResolvedBaz", true],
            ["ResolvedQux", false],
            ["ResolvedQuux", false],
        ]);
        expect(unlisted(got, ALLOWED)).to.deep.equal(["x.ts ResolvedFoo", "x.ts ResolvedBar", "x.ts ResolvedBaz"]);
        // An interface added to a real file beside its derived type fails the scan.
        const real = fs.readFileSync(path.join(ROOT, "components/global-ratelimit/gateway-target.ts"), "utf8");
        const added = `${real}\nexport interface ResolvedExtra { readonly namespace: string }\n`;
        expect(unlisted(resolvedTypesOf("components/global-ratelimit/gateway-target.ts", added), ALLOWED)).to.deep.equal([
            "components/global-ratelimit/gateway-target.ts ResolvedExtra",
        ]);
    });

    it("control: a pin fails to compile on a drift (checked by tsc --noEmit)", () => {
        // @ts-expect-error a computed field left out of the extras (ResolvedLimit's `seconds`)
        pin<Pinned<ResolvedLimit, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, "requests" | "unit">>();
        // @ts-expect-error a declared field of another type than its declaration's
        pin<Pinned<{ readonly shadow: string }, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, never>>();
        // @ts-expect-error a declared field left out of the hand-written type
        pin<Pinned<{ readonly requests: number }, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, "requests">>();
        // @ts-expect-error a field optional by hand that its declaration's default always sets
        pin<Pinned<{ readonly shadow?: boolean }, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, never>>();
        expect(pin<Pinned<{ readonly shadow: boolean }, Resolved<Pick<typeof LIMIT_FIELDS, "shadow">>, never>>()).to.equal(true);
    });
});
