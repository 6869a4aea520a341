/**
 * Text edits of Istio's mesh config (the `mesh` entry of ConfigMap `istio`), done line by line so
 * every byte the stack does not own stays as it was.
 */

const topLevelLine = (key: string) => new RegExp(`^${key}:[^\\n]*$`, "m");

/** Value of a top-level `key: value` line, or undefined when the key is absent. */
export function getTopLevel(text: string, key: string): string | undefined {
    const m = topLevelLine(key).exec(text);
    return m ? m[0].slice(key.length + 1).trim() : undefined;
}

/**
 * Sets a top-level `key: value` line: replaces the existing line, or appends one. With `value`
 * undefined, removes the line. Other lines, comments and the trailing newline are untouched.
 */
export function setTopLevel(text: string, key: string, value: string | undefined): string {
    const re = topLevelLine(key);
    if (value === undefined) {
        return text.replace(new RegExp(`^${key}:[^\\n]*(\\n|$)`, "m"), "");
    }
    const line = `${key}: ${value}`;
    if (re.test(text)) return text.replace(re, line);
    if (text === "") return `${line}\n`;
    return text.endsWith("\n") ? `${text}${line}\n` : `${text}\n${line}`;
}

/**
 * What to write back on destroy. If nobody changed the text since the stack set it, the original
 * text exactly; otherwise only the stack's line is put back as it was (others' edits are kept).
 */
export function restoredText(current: string, applied: string, original: string, key: string): string {
    if (current === applied) return original;
    return setTopLevel(current, key, getTopLevel(original, key));
}
