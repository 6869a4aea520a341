/**
 * Converts DIR/all.yaml of an offline render into a JSON `List` for `kubectl apply -f`, leaving out
 * the objects named with --skip (e.g. the seed profile's mesh ConfigMap line, which is a patch, not
 * an object to apply whole).
 *   tsx tests/e2e/render-to-json.ts DIR OUT.json [--skip Kind/ns/name,...]
 */
import * as fs from "fs";
import { loadRender, objectId } from "./compare";

const [dir, out, flag, list] = process.argv.slice(2);
const skip = new Set(flag === "--skip" ? (list ?? "").split(",").filter(Boolean) : []);
const items = loadRender(dir).filter((o) => !skip.has(objectId(o)));
fs.writeFileSync(out, JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 1));
console.log(`${items.length} objects -> ${out}`);
