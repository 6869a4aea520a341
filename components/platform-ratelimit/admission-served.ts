/**
 * Whether the cluster serves the admission policy PlatformRateLimit installs
 * (admissionregistration.k8s.io/v1 `validatingadmissionpolicies`, Kubernetes 1.30 or later), read
 * with kubectl at preview (`KUBECONFIG`, else `~/.kube/config`). Not read under Pulumi's mocks;
 * when kubectl cannot answer, the preview warns and the API server answers at `pulumi up`.
 */
import { execFileSync } from "child_process";
import { ADMISSION_API_VERSION } from "../../builders/admission-policy";
import { Problem } from "../../lib/problems";
import { firstLineOf, underMocks } from "../global-ratelimit/host-ownership-lookup";

/** The problem of a cluster that does not serve the policy, from `kubectl api-resources -o name` of its group; none when it does. Exported for testing. */
export function admissionServedProblems(resourceNames: string[]): Problem[] {
    if (resourceNames.some((n) => n.trim() === "validatingadmissionpolicies.admissionregistration.k8s.io")) return [];
    return [
        {
            key: "admission.install",
            value: true,
            problem: `the cluster does not serve ${ADMISSION_API_VERSION} ValidatingAdmissionPolicy (Kubernetes 1.30 or later), which enforces the platform's limits at the API server`,
            fix: "use Kubernetes 1.30 or later, or set admission.install: false and have the cluster's admin enforce the same rules",
        },
    ];
}

/** The problems of the cluster kubectl reaches; none under mocks or when kubectl fails (with a warning). */
export function readAdmissionServed(warn: (m: string) => void): Problem[] {
    if (underMocks()) return [];
    try {
        const out = execFileSync("kubectl", ["api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name"], {
            encoding: "utf8",
            timeout: 20_000,
            stdio: ["ignore", "pipe", "pipe"],
        });
        return admissionServedProblems(out.split("\n"));
    } catch (e: any) {
        warn(`could not list the cluster's admission APIs with kubectl (${firstLineOf(e)}); not checked that it serves ValidatingAdmissionPolicy`);
        return [];
    }
}
