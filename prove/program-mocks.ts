/**
 * What the mocks a program runs under do that the engine would: a Kubernetes object declared without
 * `metadata.name` gets the name the engine gives it (the resource's name, a dash and a suffix), so a
 * program that passes an auto-named Secret's or Service's name on (a documented use) renders as it
 * deploys; and every error raised while the program runs, in an output too (an `apply` that throws,
 * a component's check of a value known late), is collected, never lost.
 */
import { createHash } from "crypto";

/**
 * The suffix of an auto-named object. The engine's is random (seven hex digits); here it is derived
 * from the resource's type and name, so two runs of one program (and `replay --compare`) agree.
 */
export function autoNameSuffix(type: string, name: string): string {
    return createHash("sha256").update(`${type}\n${name}`).digest("hex").slice(0, 7);
}

/** The name a Kubernetes object gets when its program gives none; undefined when it has one, or is no Kubernetes object. */
export function autoName(type: string, name: string, inputs: Record<string, any>): string | undefined {
    if (!type.startsWith("kubernetes:") || typeof inputs?.kind !== "string" || typeof inputs?.apiVersion !== "string") return undefined;
    const given = inputs.metadata?.name;
    if (typeof given === "string" && given !== "") return undefined;
    return `${name}-${autoNameSuffix(type, name)}`;
}

/** Inputs with the engine's name filled in (the same object when the object has a name). */
export function withAutoName(type: string, name: string, inputs: Record<string, any>): Record<string, any> {
    const auto = autoName(type, name, inputs);
    return auto === undefined ? inputs : { ...inputs, metadata: { ...(inputs.metadata ?? {}), name: auto } };
}

/** The message of an error, without the runtime's `error serializing property "x": ` prefixes (the component's own words kept). */
export function failureMessage(e: unknown): string {
    const text = e instanceof Error ? e.message : String(e);
    return text.replace(/^(error serializing property "[^"]*": )+/, "");
}

/** The errors raised while the program runs: promise rejections nothing handled, and errors logged through Pulumi's log. */
export class FailureWatch {
    private readonly errors: string[] = [];
    private settle!: () => void;
    /** Settles at the first error, or when nothing is left to run while the program's outputs still wait (they never resolve). */
    readonly failed = new Promise<void>((r) => (this.settle = r));
    private readonly onRejection = (reason: unknown) => this.logged(failureMessage(reason));
    private readonly onIdle = () =>
        this.logged(
            "the program's outputs never resolved (an output waits on a value nothing provides, or on an error that was lost): no object that depends on them was registered",
        );

    start(): this {
        process.on("unhandledRejection", this.onRejection);
        process.on("beforeExit", this.onIdle);
        return this;
    }

    /** An error Pulumi's log reported (`pulumi.log.error`, the runtime's own reports). */
    logged(message: string): void {
        if (!this.errors.includes(message)) this.errors.push(message);
        this.settle();
    }

    /** `work`, or the first error raised while it waits. */
    async race(work: Promise<void>): Promise<void> {
        await Promise.race([work, this.failed]);
    }

    /** Waits for rejections still on their way (Node reports them after the microtasks run), then stops; the errors, in order. */
    async stop(): Promise<string[]> {
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        process.off("unhandledRejection", this.onRejection);
        process.off("beforeExit", this.onIdle);
        return [...this.errors];
    }
}
