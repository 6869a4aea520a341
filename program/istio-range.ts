/**
 * The Istio versions this stack is proven against, and what `pulumi preview` says about the mesh's
 * own. Proven means the istio tier passes with Istio's configuration generator at that version
 * (`npm run test:istio-versions`, docs/proof/istio-check.md): the stack's EnvoyFilters land where they
 * must and carry what they must. Every other version is assumed, not proven: Istio ignores an
 * EnvoyFilter patch that matches nothing without saying so, so a generator change can switch a
 * limit off silently. Pure.
 */

/** The proven versions: the Istio minor version, and the istio.io/istio module versions the tier ran. */
export const PROVEN_ISTIO: readonly { minor: string; builds: string; kind: string }[] = [
    { minor: "1.30", builds: "release-1.30 of 2026-08-26 (9739e10eb9d7, 1.30.3)", kind: "release" },
    { minor: "1.31", builds: "development builds of 2026-04-23 (b01690e6db7d) and 2026-08-27 (eed52ebb66ad)", kind: "development" },
];

/** The proven range in words. */
export const PROVEN_ISTIO_TEXT = PROVEN_ISTIO.map((p) => `${p.minor} (${p.builds})`).join(" and ");

/** `<major>.<minor>` of an istiod image tag (`1.30.3`, `1.31-dev`, `1.30.3-distroless`), or undefined. */
export function istioMinorOf(tag: string): string | undefined {
    return /^v?(\d+)\.(\d+)(?:[.-]|$)/.exec(tag.trim())?.slice(1, 3).join(".");
}

/**
 * What preview says of each istiod version found (the tags of the istiod images in the mesh
 * namespace): nothing for a proven release, a note for a development line, a warning naming the
 * proven range otherwise.
 */
export function istioVersionMessages(tags: string[]): { warnings: string[]; notes: string[] } {
    const warnings: string[] = [];
    const notes: string[] = [];
    for (const tag of [...new Set(tags)]) {
        const minor = istioMinorOf(tag);
        const proven = PROVEN_ISTIO.find((p) => p.minor === minor);
        if (proven?.kind === "release") continue;
        if (proven) notes.push(`Istio ${tag}: proven only against ${proven.builds}, not a release`);
        else
            warnings.push(
                `Istio ${tag} is outside the proven range (${PROVEN_ISTIO_TEXT}): the rate limits may be silently ignored (Istio drops an EnvoyFilter patch that matches nothing). Check it with npm run test:istio-versions against that version (docs/proof/istio-check.md), or run a proven version`,
            );
    }
    return { warnings, notes };
}
