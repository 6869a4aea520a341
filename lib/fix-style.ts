/**
 * How a fix is phrased: for `pulumi config` (the program), for component arguments, or for the
 * render CLI's flags. A fix is either one text or a function of the style. Pure, no imports.
 */

/**
 * How a fix names a change to one config key: `pulumi config ...` for the program, the `--set`
 * and flags the user typed for the render and explain CLIs (render/args.ts).
 */
export interface FixStyle {
    set(key: string, value: string): string;
    rm(key: string): string;
    /** Replace a misspelt key by the known one, keeping the value. */
    rename(from: string, to: string, value: string): string;
    /** The error's first line, for n problems. */
    header(n: number): string;
}

/** A fix: fixed text, or text built from a style's commands. */
export type Fix = string | ((style: FixStyle) => string);
