/** Shared test helpers: render the program under mocks and look objects up. */
import { parse } from "yaml";
import { K8sObject } from "../../lib/k8s-object";
import { RenderOptions, renderStack } from "../../render/render";

/**
 * True inside a Stryker mutation run (`npm run test:mutation`): its mocha runner keeps its
 * instrumentation context on `globalThis.__stryker__` before any test file loads.
 */
export const MUTATION_RUN = typeof (globalThis as Record<string, unknown>).__stryker__ === "object";

/**
 * `before` normally; `beforeEach` in a mutation run. Stryker's per-test coverage charges code to
 * the test that runs it, and runs a mutant only against those tests: work done once in a `before`
 * hook (or cached across tests) would be charged to a single test, or to none, and the tests that
 * assert on its result would never be run against the mutant (a false survivor).
 */
export function beforeAllTests(fn: () => Promise<void> | void): void {
    (MUTATION_RUN ? beforeEach : before)(fn);
}

export const DEV: Record<string, string> = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

export class Rendered {
    constructor(readonly objects: K8sObject[]) {}

    find(kind: string, name: string, namespace?: string): K8sObject | undefined {
        return this.objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
    }

    get(kind: string, name: string, namespace?: string): any {
        const o = this.find(kind, name, namespace);
        if (!o)
            throw new Error(
                `${kind} ${namespace ?? "*"}/${name} was not rendered; have: ${this.objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`,
            );
        return o;
    }

    names(kind: string): string[] {
        return this.objects
            .filter((o) => o.kind === kind)
            .map((o) => o.metadata.name)
            .sort();
    }
}

export async function render(opts: RenderOptions = {}): Promise<Rendered> {
    return new Rendered(await renderStack({ base: DEV, ...opts }));
}

/** The parsed `config.yaml` of the rate-limit ConfigMap. */
export function rateLimitConfig(r: Rendered): any {
    return parse(r.get("ConfigMap", "ratelimit-config", "default").data["config.yaml"]);
}
