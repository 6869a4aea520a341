/**
 * Two modules `@pulumi/pulumi` loads at import that a program under the mocks never uses: the
 * TypeScript compiler (`typescript-shim`, read by closure serialization to parse a function's text)
 * and `@npmcli/arborist` (closure serialization's package walk). Together they are about 55 MB of a
 * `replay`'s resident memory (measured: docs/proof/benchmarks.md). While Pulumi itself is loaded
 * they are handed over as stand-ins that load the real module on first use, so a program that does
 * serialize a function (`pulumi.runtime.serializeFunction`, a callback resource) gets the real one.
 */
import Module = require("module");

/** The requests deferred, when made from inside a copy of `@pulumi/pulumi`. */
const DEFERRED = [/(^|\/)typescript-shim$/, /^@npmcli\/arborist$/];

type Load = (request: string, parent: { filename?: string } | undefined, isMain: boolean) => unknown;

/** A stand-in for a module: every property read (or `in`) loads the real module once and reads it there. */
export function deferredModule(load: () => object): object {
    let real: object | undefined;
    const get = () => (real ??= load());
    return new Proxy(
        {},
        {
            // `__esModule` keeps TypeScript's `__importStar` from copying the module's keys at import.
            get: (_t, key) => (key === "__esModule" ? true : (get() as Record<string | symbol, unknown>)[key]),
            has: (_t, key) => key in get(),
        },
    );
}

/** Whether a request from `parent` is one deferred: a deferred name, from a file inside `@pulumi/pulumi`. */
export function isDeferred(request: string, parent: string | undefined): boolean {
    return parent !== undefined && /[\\/]@pulumi[\\/]pulumi[\\/]/.test(parent) && DEFERRED.some((d) => d.test(request));
}

/** Runs `fn` (the require of `@pulumi/pulumi`) with the deferred modules handed over as stand-ins; Node's loader restored after. */
export function withDeferredModules<T>(fn: () => T): T {
    const mod = Module as unknown as { _load: Load };
    const original = mod._load;
    mod._load = function (this: unknown, request, parent, isMain) {
        if (!isDeferred(request, parent?.filename)) return original.call(this, request, parent, isMain);
        return deferredModule(() => original.call(this, request, parent, isMain) as object);
    };
    try {
        return fn();
    } finally {
        mod._load = original;
    }
}
