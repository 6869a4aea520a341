/**
 * The stack's own identity: a random id (`mesh-ratelimit:stackId`) that goes into the owner
 * annotation of every object the stack creates (components/common/ownership.ts).
 *
 * `<organization>/<project>/<stack>` alone is not unique: every self-managed (file, S3, ...) backend
 * reports the organization `organization`, so two people whose stacks are both called `local` would
 * write the same owner value, each taking the other's objects on `up` and deleting them on
 * `destroy`. The id is made once per stack (random, 64 bits or more) and kept in the stack's config,
 * so two stacks of the same name in different backends are two owners.
 *
 * Why config and not state: the program cannot write stack config during a run, and reading the
 * stack's own previous state (a self StackReference) gives an Output, while the ownership check must
 * decide synchronously, before anything is registered. A config key is there before the first
 * `pulumi preview`; when it is missing the program stops before registering anything, with a fresh
 * value in the fix (docs/operations.md, "The stack's identity").
 */
import { randomBytes } from "crypto";
import { Problem } from "../lib/problems";

/** The config key (without the project prefix). */
export const STACK_ID_KEY = "stackId";

/** What a stack id looks like: lowercase hex, 16 to 64 characters (64 to 256 bits). */
export const STACK_ID_PATTERN = /^[0-9a-f]{16,64}$/;

/**
 * The id the offline render writes (render/, tests/golden): a fixed value that never names a real
 * stack, since it is not hex. A program that deploys refuses to run without a real id.
 */
export const RENDER_STACK_ID = "render-only-stack-id";

/** A fresh random id: 16 lowercase hex characters (64 bits). */
export function newStackId(): string {
    return randomBytes(8).toString("hex");
}

/** The command that sets `id` as the stack's id. */
export function setStackIdCommand(id: string): string {
    return `pulumi config set ${STACK_ID_KEY} ${id}`;
}

/**
 * The problem with the configured id, if any. `value` undefined or empty: not set (the fix gives
 * `fresh`, a newly generated id). Otherwise it must match STACK_ID_PATTERN.
 */
export function stackIdProblem(value: string | undefined, fresh: string = newStackId()): Problem | undefined {
    const v = value?.trim() ?? "";
    if (v === "") {
        return {
            key: STACK_ID_KEY,
            problem:
                "the stack has no id of its own. The id goes into the owner annotation of every object the stack creates, so that a stack of the same name in another backend (another person's `local`) is another owner",
            fix: `${setStackIdCommand(fresh)}   (a value generated for this stack now; keep it in the stack's own config, never in a file others copy, and never change it while the stack has objects)`,
        };
    }
    if (!STACK_ID_PATTERN.test(v)) {
        return {
            key: STACK_ID_KEY,
            value: v,
            problem: "must be 16 to 64 lowercase hexadecimal characters (a random id)",
            fix: `${setStackIdCommand(fresh)}   (a value generated now), unless objects already carry the old id: then set that one again`,
        };
    }
    return undefined;
}
