/**
 * Root hook of the cluster tier (loaded by tests/cluster/.mocharc.json before any test file):
 * brings the fake nodes to what a real node reports before anything is scheduled (kube.ts,
 * ensureNodeEphemeralStorage).
 */
import { ensureNodeEphemeralStorage, kubeconfig } from "./kube";

export const mochaHooks = {
    beforeAll(): void {
        kubeconfig();
        ensureNodeEphemeralStorage();
    },
};
