/**
 * What the admission-policy tests share: applying as the test and as an impersonated identity, the
 * role that lets the impersonated teams write EnvoyFilters in the gateway's namespace, and the
 * assertions on a refusal by the policy (its name, the rule and a fix) and on an admission.
 */
import { expect } from "chai";
import { kubectl, kubectlRaw } from "./kube";

export type Identity = { user: string; groups: string[] };
type Result = { status: number; stderr: string };

/** `kubectl apply` (server-side) as the test itself. */
export const apply = (o: unknown): string => kubectl(["apply", "--server-side", "--field-manager=mesh-rl-cluster-test", "-f", "-"], JSON.stringify(o));

/** `kubectl apply` as an impersonated identity, under `manager`; never throws. */
export const applyAs = (id: Identity, o: unknown, manager: string) =>
    kubectlRaw(
        [
            "--as",
            id.user,
            ...id.groups.flatMap((g) => ["--as-group", g]),
            "apply",
            "--server-side",
            "--force-conflicts",
            `--field-manager=${manager}`,
            "-f",
            "-",
        ],
        JSON.stringify(o),
    );

/** A ClusterRole `role` on EnvoyFilters, bound in `namespace` to `subjects` (RBAC subjects). */
export function grantEnvoyFilterWrites(role: string, namespace: string, subjects: unknown[]): void {
    apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: role },
        rules: [{ apiGroups: ["networking.istio.io"], resources: ["envoyfilters"], verbs: ["get", "list", "create", "update", "patch", "delete"] }],
    });
    apply({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: role, namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects,
    });
}

/** The team's service account `deployer` in `namespace`, as an RBAC subject. */
export const deployerSubject = (namespace: string) => ({ kind: "ServiceAccount", name: "deployer", namespace });

/** Refused by the ValidatingAdmissionPolicy `policy` under `rule`, with a fix. */
export function expectRefused(r: Result, rule: string, policy: string): void {
    expect(r.status, `admitted, expected rule ${rule}`).to.not.equal(0);
    expect(r.stderr).to.include(`ValidatingAdmissionPolicy '${policy}'`);
    expect(r.stderr).to.include(`rule ${rule}:`).and.include("fix:");
}

export function expectAdmitted(r: Result): void {
    expect(r.status, r.stderr).to.equal(0);
}
