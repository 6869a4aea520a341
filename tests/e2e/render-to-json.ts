/**
 * Converts DIR/all.yaml of an offline render into a JSON `List` for `kubectl apply -f`.
 * Reason: the render is YAML 1.2 (plain `no` is a string there), while kubectl reads YAML 1.1,
 * where plain `no` is the boolean false (redis' `--appendonly no` argument would be rejected).
 *   tsx tests/e2e/render-to-json.ts DIR OUT.json [--skip Kind/ns/name,...]
 */
import * as fs from "fs";
import { loadRender, objectId } from "./compare";

const [dir, out, flag, list] = process.argv.slice(2);
const skip = new Set(flag === "--skip" ? (list ?? "").split(",").filter(Boolean) : []);
const items = loadRender(dir).filter((o) => !skip.has(objectId(o)));
fs.writeFileSync(out, JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 1));
console.log(`${items.length} objects -> ${out}`);
