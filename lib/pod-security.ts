/**
 * Security contexts of the Kubernetes `restricted` Pod Security Standard
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted): a non-root
 * user, no privilege escalation, every capability dropped, the runtime's default seccomp profile.
 * A read-only root filesystem is not part of the standard; the stack sets it wherever the program
 * writes nothing outside the emptyDir volumes it is given.
 */

/** Pod-level part: run as `uid:gid` (never root) under the runtime's default seccomp profile. */
export function restrictedPodSecurityContext(uid: number, gid: number = uid) {
    return {
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: gid,
        // emptyDir volumes are group-owned by it, so the process can write them.
        fsGroup: gid,
        seccompProfile: { type: "RuntimeDefault" },
    };
}

/** Container-level part of `restricted`; `readOnlyRootFilesystem` where the program allows it. */
export function restrictedContainerSecurityContext(readOnlyRootFilesystem: boolean) {
    return {
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
        readOnlyRootFilesystem,
    };
}

/**
 * User ids the images run as (the `restricted` level needs a non-zero id the kubelet can check; an
 * image whose user is root or a name gets one here).
 * - envoyproxy/ratelimit: the image sets no USER (root); the static Go binary only reads its config,
 *   so any id works: 65532, the conventional "nonroot".
 * - redis alpine images: the image's user `redis` is uid 999, inside the host's system range
 *   (kube-score and many admission policies want 10000 or more). Redis reads no file of the image
 *   user's and writes only its emptyDir /data (group-owned through fsGroup), so it runs as 10001.
 * - Istio's bookinfo images: uid 1000, as Istio's samples run them.
 */
export const RATELIMIT_UID = 65532;
export const REDIS_UID = 10001;
export const REDIS_GID = 10001;
export const BOOKINFO_UID = 1000;
/** The echo backend of the managed-API sample (image user not published): an unprivileged id. */
export const ECHO_UID = 1000;
