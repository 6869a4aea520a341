/**
 * The program's side of stack config: the Pulumi CLI's whole config map (`project:key` → value)
 * read into RawConfig, keys this project does not know reported, and the values of secret keys kept
 * out of every error message. MeshRateLimit (the package) never sees the config map.
 */
import { CONFIG_KEY_NAMES, PROJECT } from "../program/config-keys";
import { PULUMI_FIX, RawConfig, closestKey, configProblem } from "./config-problems";
import { FixStyle } from "../lib/fix-style";
import { Problem } from "../lib/problems";
import { STACK_ID_KEY } from "./stack-identity";

/**
 * Turns the CLI's whole config map (`project:key` → value) into RawConfig, reporting keys of this
 * project that the stack does not know (typos would otherwise be silently ignored).
 */
export function rawConfigFromAll(
    all: Record<string, string>,
    isSecret: (fullKey: string) => boolean = () => false,
): { raw: RawConfig; unknown: Problem[]; secretKeys: Set<string>; stackId?: string } {
    const raw: RawConfig = {};
    let stackId: string | undefined;
    const unknown: Problem[] = [];
    const secretKeys = new Set<string>();
    for (const [fullKey, value] of Object.entries(all)) {
        const prefix = `${PROJECT}:`;
        if (!fullKey.startsWith(prefix)) continue;
        const key = fullKey.slice(prefix.length);
        const secret = isSecret(fullKey);
        if (secret) secretKeys.add(key);
        if (key === STACK_ID_KEY) {
            // The program's own key (program/stack-identity.ts), not an argument of MeshRateLimit.
            stackId = String(value);
        } else if (CONFIG_KEY_NAMES.has(key)) {
            // Strings from the Pulumi CLI; a number or boolean (a typed default, a YAML scalar) is read the same way.
            raw[key] = typeof value === "string" ? value : JSON.stringify(value);
        } else {
            const near = closestKey(key);
            // A secret's value is never printed: the fix moves it without showing it, and keeps it secret.
            const move = secret ? `pulumi config set --secret ${near} "$(pulumi config get ${key})" && pulumi config rm ${key}` : undefined;
            unknown.push(
                configProblem(key, secret ? SECRET_SHOWN : String(value), "unknown configuration key", (s) =>
                    near ? `did you mean '${near}'? ${move ?? s.rename(key, near, String(value))}` : `${s.rm(key)} (docs/configuration.md lists every key)`,
                ),
            );
        }
    }
    return { raw, unknown, secretKeys, ...(stackId !== undefined ? { stackId } : {}) };
}

/** How a secret config value appears in an error. */
export const SECRET_SHOWN = "[secret]";

/**
 * The problems with the values of secret config keys hidden: the value itself, and wherever the
 * problem text or the fix quotes it (Pulumi hands the program secrets decrypted).
 */
export function hideSecretValues(problems: Problem[], raw: RawConfig, secretKeys: ReadonlySet<string>): Problem[] {
    const secrets = [...secretKeys].map((k) => raw[k]?.trim()).filter((v): v is string => !!v);
    if (!secrets.length) return problems;
    const hide = (text: string) => secrets.reduce((t, v) => t.split(v).join(SECRET_SHOWN), text);
    // A suggested value for a secret key may be derived from the secret: none is shown, and the
    // command keeps the new value secret.
    const keepSecret = (style: FixStyle): FixStyle => ({
        ...style,
        set: (k, v) => (secretKeys.has(k) ? style.set(k, "<corrected value>").replace(/^pulumi config set /, "pulumi config set --secret ") : style.set(k, v)),
    });
    return problems.map((p) => {
        const fixWith = p.fixWith;
        return {
            ...p,
            value: p.value === undefined ? undefined : secretKeys.has(p.key) ? SECRET_SHOWN : hide(String(p.value)),
            problem: hide(p.problem),
            fix: hide(fixWith ? fixWith(keepSecret(PULUMI_FIX)) : p.fix),
            ...(fixWith ? { fixWith: (style: FixStyle) => hide(fixWith(keepSecret(style))) } : {}),
            ...(p.problemWith ? { problemWith: (style: FixStyle) => hide(p.problemWith!(style)) } : {}),
        };
    });
}
