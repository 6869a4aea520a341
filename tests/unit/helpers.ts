/** Shared test helpers: render the program under mocks and look objects up. */
import { parse } from "yaml";
import { K8sObject, RenderOptions, renderStack } from "../../render/render";

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
        if (!o) throw new Error(`${kind} ${namespace ?? "*"}/${name} was not rendered; have: ${this.objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
        return o;
    }

    names(kind: string): string[] {
        return this.objects.filter((o) => o.kind === kind).map((o) => o.metadata.name).sort();
    }
}

export async function render(opts: RenderOptions = {}): Promise<Rendered> {
    return new Rendered(await renderStack({ base: DEV, ...opts }));
}

/** The parsed `config.yaml` of the rate-limit ConfigMap. */
export function rateLimitConfig(r: Rendered): any {
    return parse(r.get("ConfigMap", "ratelimit-config", "default").data["config.yaml"]);
}
