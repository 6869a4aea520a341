/** Levenshtein distance, for "did you mean" suggestions (config keys, values, CLI flags). Pure, no imports. */
export function editDistance(a: string, b: string): number {
    const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) dp[0][j] = j;
    for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
            dp[i][j] = Math.min(dp[i - 1][j] + 1, dp[i][j - 1] + 1, dp[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
        }
    }
    return dp[a.length][b.length];
}

/**
 * The known name nearest to `name` by edit distance, case aside, when it is within
 * `max(2, ⌊length / divisor⌋)`; the first of equals wins. With `prefixes`, a name that extends or
 * shortens a known one (both of 3 letters or more: `bucketSize`, `fillInt`) counts as distance 1.
 */
export function nearestName(name: string, known: Iterable<string>, opts: { divisor: number; prefixes?: boolean }): string | undefined {
    const lower = name.toLowerCase();
    let best: string | undefined;
    let bestDistance = Infinity;
    for (const k of known) {
        const kl = k.toLowerCase();
        const extends_ = opts.prefixes && kl.length >= 3 && lower.length >= 3 && (lower.startsWith(kl) || kl.startsWith(lower));
        const d = Math.min(editDistance(lower, kl), extends_ ? 1 : Infinity);
        if (d < bestDistance) [best, bestDistance] = [k, d];
    }
    return bestDistance <= Math.max(2, Math.floor(name.length / opts.divisor)) ? best : undefined;
}

/**
 * The allowed value a mistyped one most likely meant: same letters in another case, then one that
 * starts the other (`minutes` → `minute`, `sec` → `second`, `https` → `http`), then the nearest by
 * edit distance when it is close; otherwise `fallback` (the field's default), never simply the first.
 */
export function closestValue(value: string, allowed: readonly string[], fallback: string): string {
    const v = value.trim().toLowerCase();
    const ci = allowed.find((a) => a.toLowerCase() === v);
    if (ci) return ci;
    const prefixed = allowed.filter((a) => v.length >= 2 && (v.startsWith(a.toLowerCase()) || a.toLowerCase().startsWith(v)));
    if (prefixed.length) return prefixed.sort((a, b) => Math.abs(a.length - v.length) - Math.abs(b.length - v.length))[0];
    return nearestName(v, allowed, { divisor: 3 }) ?? fallback;
}
