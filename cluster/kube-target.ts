/**
 * The cluster the Kubernetes provider deploys to, as kubectl flags, so every check of the preflight
 * asks that cluster and not whatever kubectl's current context points at.
 *
 * The program deploys through the default Kubernetes provider, which reads (pulumi-kubernetes 4.25,
 * https://www.pulumi.com/registry/packages/kubernetes/installation-configuration/):
 * - `kubernetes:kubeconfig`: the contents of a kubeconfig, or the path of one; else the `KUBECONFIG`
 *   environment variable (one path or a list), else `~/.kube/config`;
 * - `kubernetes:context`: the context in it (else its current-context);
 * - `kubernetes:cluster`: the cluster in it (else the context's).
 *
 * kubectl gets the same: `--kubeconfig <file>` (the path, or the contents written to a file of mode
 * 0600 in a fresh temp folder that `close()` removes: the contents may be a secret and never appear
 * in process arguments or logs), `--context`, `--cluster`. Without `kubernetes:kubeconfig` no
 * `--kubeconfig` is given: kubectl then reads `KUBECONFIG` (merging a list as the provider does) or
 * `~/.kube/config` itself.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** What the provider reads to find its cluster. */
export interface ClusterTarget {
    /** `kubernetes:kubeconfig`: a kubeconfig's contents or its path. */
    kubeconfig?: string;
    /** `kubernetes:context`. */
    context?: string;
    /** `kubernetes:cluster`. */
    cluster?: string;
}

/** kubectl's global flags for one target, and the cleanup of the temp file they may name. */
export interface KubectlTarget {
    /** Flags to put before every kubectl command. Never holds a kubeconfig's contents. */
    readonly flags: readonly string[];
    /** Removes the temp kubeconfig, if one was written; idempotent. */
    close(): void;
}

/** The provider's target from the program's whole config map (`kubernetes:*` keys; secrets come decrypted). */
export function providerTarget(allConfig: Record<string, unknown>): ClusterTarget {
    const get = (k: string) => {
        const v = allConfig[`kubernetes:${k}`];
        return typeof v === "string" && v.trim() !== "" ? v : undefined;
    };
    const kubeconfig = get("kubeconfig");
    const context = get("context");
    const cluster = get("cluster");
    return { ...(kubeconfig ? { kubeconfig } : {}), ...(context ? { context } : {}), ...(cluster ? { cluster } : {}) };
}

/** `~/x` as the home folder's `x`. */
function expandHome(p: string): string {
    return p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
}

/** The path `value` names, when it is the path of an existing file (the provider's own test); else undefined (contents). */
export function kubeconfigPath(value: string): string | undefined {
    if (value.includes("\n")) return undefined;
    const p = expandHome(value.trim());
    try {
        return fs.statSync(p).isFile() ? p : undefined;
    } catch {
        return undefined;
    }
}

/**
 * kubectl's flags for `t`. A kubeconfig given as contents is written to a 0600 file in a fresh temp
 * folder: call `close()` when the checks are done (the folder goes with it).
 */
export function openKubectlTarget(t: ClusterTarget): KubectlTarget {
    const flags: string[] = [];
    let dir: string | undefined;
    if (t.kubeconfig !== undefined) {
        const given = kubeconfigPath(t.kubeconfig);
        if (given) {
            flags.push("--kubeconfig", given);
        } else {
            dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-kubeconfig-"));
            const file = path.join(dir, "kubeconfig");
            fs.writeFileSync(file, t.kubeconfig, { mode: 0o600, flag: "wx" });
            flags.push("--kubeconfig", file);
        }
    }
    if (t.context) flags.push("--context", t.context);
    if (t.cluster) flags.push("--cluster", t.cluster);
    return {
        flags,
        close() {
            if (dir) fs.rmSync(dir, { recursive: true, force: true });
            dir = undefined;
        },
    };
}

/** Where the checks look, in words for messages (never the kubeconfig's contents). */
export function describeTarget(t: ClusterTarget): string {
    const from =
        t.kubeconfig === undefined
            ? "KUBECONFIG or ~/.kube/config"
            : kubeconfigPath(t.kubeconfig)
              ? `kubeconfig ${t.kubeconfig}`
              : "the kubeconfig in kubernetes:kubeconfig";
    return `${from}, context ${t.context ?? "(its current-context)"}${t.cluster ? `, cluster ${t.cluster}` : ""}`;
}
