/**
 * The unknown-field check, from the declarations: every argument type's fields and their shapes
 * (`argTypesOf`, read from the argument interfaces' tables at run time, an interface's `extends`
 * included), and the fields of a value that its type does not know, each with the closest known
 * name (`unknownFields`). Python, YAML and plain JavaScript programs have no type checker to refuse
 * a misspelt field, which would otherwise be ignored (or widen a rule to every request). Pure.
 */
import * as pulumi from "@pulumi/pulumi";
import { nearestName } from "./edit-distance";
import { ArgInterface } from "./field-decl";
import { FieldShape } from "./field-types";
import { Problem } from "./problems";

/** Every field of each argument type, by the type's name. */
export type ArgTypes = Readonly<Record<string, Readonly<Record<string, FieldShape>>>>;

/** The argument types of `interfaces`, each with the fields of the interface it extends (one of them) before its own. */
export function argTypesOf(interfaces: readonly ArgInterface[]): ArgTypes {
    const byName = new Map(interfaces.map((i) => [i.name, i]));
    const fieldsOf = (i: ArgInterface): Record<string, FieldShape> => {
        const own = Object.fromEntries(Object.entries(i.fields).map(([k, d]) => [k, d.type.shape]));
        if (i.extends === undefined) return own;
        const base = byName.get(i.extends);
        if (base === undefined) throw new Error(`internal: ${i.name} extends ${i.extends}, which no table declares`);
        return { ...fieldsOf(base), ...own };
    };
    return Object.fromEntries(interfaces.map((i) => [i.name, fieldsOf(i)]));
}

/** The known name closest to `name` (case aside, a prefix of it, or within a third of its length), if any is close. */
export function closestName(name: string, known: readonly string[]): string | undefined {
    return nearestName(name, known, { divisor: 3, prefixes: true });
}

/** Whether `v` is not known yet: an Output or a promise. */
const isDeferredValue = (v: unknown) =>
    pulumi.Output.isInstance(v) || (typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function");
/** A plain object: not a list, an Output or a promise. */
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) && !isDeferredValue(v);

function unknownIn(types: ArgTypes, at: string, owner: string, value: unknown, fields: Readonly<Record<string, FieldShape>>, out: Problem[]): void {
    if (!isPlainObject(value)) return;
    const known = Object.keys(fields);
    for (const [k, v] of Object.entries(value)) {
        const where = at ? `${at}.${k}` : k;
        if (!(k in fields)) {
            if (v === undefined) continue;
            const near = closestName(k, known);
            out.push({
                key: where,
                value: v,
                problem: `is not ${owner}`,
                fix: near !== undefined ? `rename ${k} to ${near}` : `remove ${k}; the fields are ${known.join(", ")}`,
            });
        } else shapeIn(types, where, v, fields[k], out);
    }
}

function shapeIn(types: ArgTypes, at: string, value: unknown, shape: FieldShape, out: Problem[]): void {
    if (shape === null || value === undefined) return;
    if (typeof shape === "string") {
        if (types[shape] === undefined) throw new Error(`internal: a field at ${at} names ${shape}, which no table declares`);
        unknownIn(types, at, `a field of ${shape}`, value, types[shape], out);
    } else if ("list" in shape) {
        if (Array.isArray(value)) value.forEach((v, i) => shapeIn(types, `${at}[${i}]`, v, shape.list, out));
    } else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) shapeIn(types, `${at}.${k}`, v, shape.map, out);
}

/** Every field of `value` (at any depth) that its type `root` of `types` does not know, `owner` naming what the top level is ("an argument of X"). */
export function unknownFields(types: ArgTypes, root: string, owner: string, value: unknown): Problem[] {
    if (types[root] === undefined) throw new Error(`internal: no table declares ${root}`);
    const out: Problem[] = [];
    unknownIn(types, "", owner, value, types[root], out);
    return out;
}
