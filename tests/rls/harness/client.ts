/**
 * RLS v3 client over the real gRPC API (`ShouldRateLimit`), using @grpc/grpc-js and the
 * project's own minimal proto (tests/rls/proto/rls.proto).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export type Code = "UNKNOWN" | "OK" | "OVER_LIMIT";

export interface Entry {
    key: string;
    value: string;
}

/** One descriptor = the entries one `rate_limits` element produced for a request. */
export type Descriptor = Entry[];

export interface DescriptorStatus {
    code: Code;
    currentLimit?: { requestsPerUnit: number; unit: string; name: string };
    limitRemaining: number;
    durationUntilResetSeconds?: number;
}

export interface Decision {
    overallCode: Code;
    statuses: DescriptorStatus[];
}

const PROTO = path.join(__dirname, "..", "proto", "rls.proto");

let ctor: grpc.ServiceClientConstructor | undefined;
function serviceCtor(): grpc.ServiceClientConstructor {
    if (!ctor) {
        const def = protoLoader.loadSync(PROTO, { keepCase: false, longs: Number, enums: String, defaults: true });
        const pkg = grpc.loadPackageDefinition(def) as any;
        ctor = pkg.envoy.service.ratelimit.v3.RateLimitService as grpc.ServiceClientConstructor;
    }
    return ctor;
}

export class RlsClient {
    private readonly client: grpc.Client & Record<string, any>;

    /** `address` is host:port of the service's gRPC listener. */
    constructor(readonly address: string) {
        const C = serviceCtor();
        this.client = new C(address, grpc.credentials.createInsecure(), {
            // Keep one HTTP/2 connection per client; concurrency comes from multiplexing.
            "grpc.max_concurrent_streams": 10_000,
        }) as any;
    }

    /** Calls ShouldRateLimit. Rejects with the gRPC error (code, details) when the service errs. */
    /** `addends[i]`: descriptor i's own hits_addend (a rule's cost), as Envoy sends it; undefined: none. */
    shouldRateLimit(
        domain: string,
        descriptors: Descriptor[],
        opts: { hitsAddend?: number; deadlineMs?: number; addends?: (number | undefined)[] } = {},
    ): Promise<Decision> {
        const request = {
            domain,
            descriptors: descriptors.map((entries, i) => (opts.addends?.[i] === undefined ? { entries } : { entries, hitsAddend: { value: opts.addends[i] } })),
            hitsAddend: opts.hitsAddend ?? 0,
        };
        const deadline = new Date(Date.now() + (opts.deadlineMs ?? 10_000));
        return new Promise((resolve, reject) => {
            this.client.ShouldRateLimit(request, { deadline }, (err: grpc.ServiceError | null, res: any) => {
                if (err) return reject(err);
                resolve({
                    overallCode: res.overallCode as Code,
                    statuses: (res.statuses ?? []).map((s: any) => ({
                        code: s.code as Code,
                        currentLimit: s.currentLimit
                            ? { requestsPerUnit: s.currentLimit.requestsPerUnit, unit: s.currentLimit.unit, name: s.currentLimit.name }
                            : undefined,
                        limitRemaining: s.limitRemaining,
                        durationUntilResetSeconds: s.durationUntilReset ? Number(s.durationUntilReset.seconds) : undefined,
                    })),
                });
            });
        });
    }

    /** Resolves when the channel is connected (or rejects after `ms`). */
    waitForReady(ms = 10_000): Promise<void> {
        return new Promise((resolve, reject) => this.client.waitForReady(new Date(Date.now() + ms), (e) => (e ? reject(e) : resolve())));
    }

    close(): void {
        this.client.close();
    }
}

let bytesCtor: grpc.ServiceClientConstructor | undefined;
/**
 * One call with descriptor values as raw bytes, which a gateway may send (Envoy copies header bytes
 * and percent-decoded query bytes into the descriptor) but @grpc/proto-loader cannot encode as a
 * protobuf string: the same proto with `bytes value` (the wire format is the same). Resolves with the
 * answer, or with the gRPC error the service returned.
 */
export function shouldRateLimitBytes(address: string, domain: string, descriptors: { key: string; value: Buffer }[][]): Promise<Decision | grpc.ServiceError> {
    if (!bytesCtor) {
        const text = fs.readFileSync(PROTO, "utf8").replace(/^(\s*)string value = 2;$/m, "$1bytes value = 2;");
        if (!text.includes("bytes value = 2;")) throw new Error("rls.proto: no `string value = 2;` to read as bytes");
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rls-bytes-")), "rls.proto");
        fs.writeFileSync(file, text);
        const def = protoLoader.loadSync(file, { keepCase: false, longs: Number, enums: String, defaults: true });
        bytesCtor = (grpc.loadPackageDefinition(def) as any).envoy.service.ratelimit.v3.RateLimitService as grpc.ServiceClientConstructor;
    }
    const c = new bytesCtor(address, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
    const request = { domain, descriptors: descriptors.map((entries) => ({ entries: entries.map((e) => ({ key: e.key, value: e.value })) })), hitsAddend: 0 };
    return new Promise((resolve) =>
        c.ShouldRateLimit(request, { deadline: new Date(Date.now() + 10_000) }, (err: grpc.ServiceError | null, res: any) => {
            c.close();
            resolve(err ?? { overallCode: res.overallCode as Code, statuses: [] });
        }),
    );
}

const HEALTH_PROTO = path.join(__dirname, "..", "proto", "health.proto");
let healthCtor: grpc.ServiceClientConstructor | undefined;

/**
 * The gRPC health check the kubelet's `grpc` probe makes: the status the server reports for
 * `service` (`SERVING`, `NOT_SERVING`, ...), or "unreachable" when the call fails.
 */
export function grpcHealth(address: string, service: string, timeoutMs = 2_000): Promise<string> {
    if (!healthCtor) {
        const def = protoLoader.loadSync(HEALTH_PROTO, { keepCase: false, enums: String, defaults: true });
        healthCtor = (grpc.loadPackageDefinition(def) as any).grpc.health.v1.Health as grpc.ServiceClientConstructor;
    }
    const c = new healthCtor(address, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
    return new Promise((resolve) => {
        c.Check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (err: grpc.ServiceError | null, res: any) => {
            c.close();
            resolve(err ? "unreachable" : String(res.status));
        });
    });
}

/**
 * What a gateway with `failure_mode_deny: true` makes of an answer (model of Envoy's ratelimit
 * filter): an error → 500 (fail closed), OVER_LIMIT → 429, any other code → the request passes.
 */
export function gatewayOutcome(d: Decision | Error): "allow" | "429" | "500" {
    if (d instanceof Error) return "500";
    return d.overallCode === "OVER_LIMIT" ? "429" : "allow";
}
