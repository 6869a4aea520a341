/**
 * The subset of Istio's Gateway and VirtualService specs this package writes, declared once, so a
 * misspelt field does not compile (components/common/crds.ts wraps them as resources).
 */

/** A Gateway's spec: the gateway pods it selects and its servers. */
export interface GatewaySpec {
    selector: Record<string, string>;
    servers: { port: { number: number; name: string; protocol: string }; hosts: string[] }[];
}

/** Istio's `StringMatch`: the two kinds of URI match this package writes. */
export interface StringMatch {
    exact?: string;
    prefix?: string;
}

/** A VirtualService's spec: its hosts, the Gateways it binds to and its HTTP routes. */
export interface VirtualServiceSpec {
    hosts: string[];
    gateways: string[];
    http: {
        name?: string;
        match: { uri: StringMatch }[];
        route: { destination: { host: string; port: { number: number } } }[];
    }[];
}
