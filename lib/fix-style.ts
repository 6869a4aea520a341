/**
 * How a fix is phrased: for component arguments, for `pulumi config` (the program), or for the
 * render CLI's flags. A fix is either one text or a function of the style. Pure, no imports.
 */

/**
 * How a fix names a change to one input: an argument field (`global.timeout`) set, removed or
 * renamed. Each style phrases it for its input: argument edits for the components, `pulumi config`
 * commands for the program, the `--set` and flags the user typed for the render and explain CLIs.
 */
export interface FixStyle {
    set(key: string, value: string): string;
    rm(key: string): string;
    /** Replace a misspelt key by the known one, keeping the value. */
    rename(from: string, to: string, value: string): string;
    /** The error's first line, for n problems. */
    header(n: number): string;
    /** How the style names an argument field (a config key for stack config). Absent: the field path itself. */
    name?(field: string): string;
}

/** A fix: fixed text, or text built from a style's commands. */
export type Fix = string | ((style: FixStyle) => string);

/** How a problem's text names another field: `${fieldRef("paths.limited")}`, written out by `namedIn` in the reader's style. */
export function fieldRef(field: string): string {
    return `«${field}»`;
}

/** A problem's text with each field it names (`fieldRef`) in the style's words. */
export function namedIn(text: string, style: FixStyle): string {
    return text.replace(/«([^»]+)»/g, (_m, f: string) => (style.name ? style.name(f) : f));
}

/** A problem's text with each field it names as the field's own path (a component's own phrasing). */
export function plainNames(text: string): string {
    return text.replace(/«([^»]+)»/g, "$1");
}

/** The text of a problem (`problem`, and `problemWith` when it names other fields: `fieldRef`). */
export function problemText(text: string): { problem: string; problemWith?: (style: FixStyle) => string } {
    return /«[^»]+»/.test(text) ? { problem: plainNames(text), problemWith: (style) => namedIn(text, style) } : { problem: text };
}
