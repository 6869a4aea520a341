/**
 * Shared helpers for the cluster tier (tests/cluster/*.test.ts): kubectl against the throw-away API
 * server that tests/cluster/run.sh starts (scripts/cluster/up.sh) and polling helpers.
 *
 * Every test file reads the cluster from `process.env.KUBECONFIG`; run the tier with
 * `npm run test:cluster`, which starts the cluster, exports KUBECONFIG and stops it afterwards.
 */
import { spawnSync } from "child_process";

/** The kubeconfig of the tier's cluster; throws a clear error when the tier was not started by run.sh. */
export function kubeconfig(): string {
    const k = process.env.KUBECONFIG;
    if (!k) throw new Error("KUBECONFIG is not set: run the cluster tier with `npm run test:cluster` (tests/cluster/run.sh starts the API server)");
    return k;
}

export interface KubectlResult {
    status: number;
    stdout: string;
    stderr: string;
}

/** Runs kubectl with the tier's kubeconfig; never throws (look at `status`). */
export function kubectlRaw(args: string[], input?: string): KubectlResult {
    const r = spawnSync("kubectl", ["--kubeconfig", kubeconfig(), ...args], { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    return { status: r.status ?? 1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/** Runs kubectl; throws with its stderr when it exits non-zero. Returns stdout. */
export function kubectl(args: string[], input?: string): string {
    const r = kubectlRaw(args, input);
    if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
}

/** `kubectl ... -o json`, parsed. */
export function kubectlJson<T = any>(args: string[]): T {
    return JSON.parse(kubectl([...args, "-o", "json"])) as T;
}

/** Lines of kubectl's stderr that are API-server warnings (`Warning: ...`), e.g. Pod Security `warn` findings. */
export function warnings(stderr: string): string[] {
    return stderr.split("\n").filter((l) => /^Warning:/.test(l.trim()));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes; then throws with
 * `what` and the last value `describe` gives, so a timeout says what was still missing.
 */
export async function waitFor<T>(
    what: string,
    check: () => T | Promise<T>,
    timeoutMs = 60_000,
    intervalMs = 500,
    describe?: () => string,
): Promise<NonNullable<T>> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
        try {
            const v = await check();
            if (v) return v as NonNullable<T>;
            last = v;
        } catch (e) {
            last = e instanceof Error ? e.message : e;
        }
        if (Date.now() > deadline) {
            throw new Error(
                `timed out after ${timeoutMs / 1000}s waiting for ${what}${describe ? `: ${describe()}` : last !== undefined ? ` (last: ${String(last)})` : ""}`,
            );
        }
        await sleep(intervalMs);
    }
}

/** Creates (or relabels) a namespace with the given labels. */
export function ensureNamespace(name: string, labels: Record<string, string> = {}): void {
    const manifest = { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } };
    kubectl(["apply", "--server-side", "--field-manager=mesh-rl-cluster-test", "-f", "-"], JSON.stringify(manifest));
}

/** Deletes a namespace and waits until it is gone (the namespace controller empties it first). */
export async function deleteNamespace(name: string, timeoutMs = 120_000): Promise<void> {
    kubectl(["delete", "namespace", name, "--ignore-not-found", "--wait=false"]);
    await waitFor(`namespace ${name} deleted`, () => kubectlRaw(["get", "namespace", name]).status !== 0, timeoutMs);
}

/** Labels that make the API server enforce (and warn about) a Pod Security level in a namespace. */
export function podSecurityLabels(level: "restricted" | "baseline" | "privileged"): Record<string, string> {
    return {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": level,
        "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": level,
        "pod-security.kubernetes.io/audit-version": "latest",
    };
}

/**
 * Waits until every replica of the Deployment `d` (a rendered object) has a pod Running on a kwok
 * node, and returns those pods; on a timeout the error shows the pods and the namespace's warning
 * events (e.g. `FailedCreate ... serviceaccount "x" not found` on the ReplicaSet).
 */
export async function waitForDeploymentPods(d: { metadata: { name: string; namespace?: string }; spec?: any }, timeoutMs = 90_000): Promise<any[]> {
    const ns = d.metadata.namespace!;
    const selector = Object.entries<string>(d.spec.selector.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
    const want = d.spec.replicas ?? 1;
    const pods = () => kubectlJson<{ items: any[] }>(["get", "pods", "-n", ns, "-l", selector]).items;
    await waitFor(
        `${ns}/${d.metadata.name}: ${want} pod(s) Running on kwok nodes`,
        () => {
            const got = pods();
            return got.length === want && got.every((p) => /^kwok-node-/.test(p.spec.nodeName ?? "") && p.status.phase === "Running");
        },
        timeoutMs,
        500,
        () => {
            const ev = kubectlRaw([
                "get",
                "events",
                "-n",
                ns,
                "--field-selector",
                "type=Warning",
                "-o",
                "custom-columns=REASON:.reason,MSG:.message",
                "--no-headers",
            ]).stdout.trim();
            return `pods: ${kubectlRaw(["get", "pods", "-n", ns, "-l", selector, "-o", "wide", "--no-headers"]).stdout.trim() || "none"}; warning events: ${ev || "none"}`;
        },
    );
    return pods();
}

/** Local disk a fake node reports (`ephemeral-storage`), as every kubelet does for its node. */
export const NODE_EPHEMERAL_STORAGE = "100Gi";

/**
 * Gives every kwok node (label `type=kwok`) the `ephemeral-storage` capacity a real kubelet reports.
 * scripts/cluster/up.sh registers kwok-node-0 with it; a node registered without it (an older
 * up.sh, a hand-made node) would make the scheduler treat its ephemeral storage as 0 and never place
 * a pod that requests some (the rate-limit service and Redis do: "Insufficient ephemeral-storage").
 * kwok keeps the node's allocatable as written (its node-initialize stage copies it), so one status
 * patch is enough. Idempotent.
 */
export function ensureNodeEphemeralStorage(): string[] {
    const patched: string[] = [];
    for (const n of kubectlJson<{ items: any[] }>(["get", "nodes", "-l", "type=kwok"]).items) {
        if (n.status?.allocatable?.["ephemeral-storage"] && n.status?.capacity?.["ephemeral-storage"]) continue;
        const patch = { status: { capacity: { "ephemeral-storage": NODE_EPHEMERAL_STORAGE }, allocatable: { "ephemeral-storage": NODE_EPHEMERAL_STORAGE } } };
        kubectl(["patch", "node", n.metadata.name, "--subresource=status", "--type=merge", "-p", JSON.stringify(patch)]);
        patched.push(n.metadata.name);
    }
    return patched;
}
