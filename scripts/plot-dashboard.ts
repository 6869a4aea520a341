/**
 * Draws the dashboard's panels from series recorded by the rls tier's monitoring test
 * (MESH_RL_RECORD_DASHBOARD=<file>): one small chart per panel, two per row, with gnuplot.
 *   npx tsx scripts/plot-dashboard.ts <series.json> <out.png>
 * Called by scripts/render-dashboard-png.sh.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { execFileSync } from "child_process";

interface Recorded {
    t0: number;
    panels: { title: string; unit: string; series: { legend: string; values: [number, number][] }[] }[];
}

const [input, out] = process.argv.slice(2);
if (!input || !out) {
    console.error("usage: tsx scripts/plot-dashboard.ts <series.json> <out.png>");
    process.exit(2);
}
const rec = JSON.parse(fs.readFileSync(input, "utf8")) as Recorded;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-plot-"));
const cols = 2;
const rows = Math.ceil(rec.panels.length / cols);
const quote = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
const lines: string[] = [
    `set terminal pngcairo noenhanced size 1400,${rows * 260} font "sans,9"`,
    `set output ${quote(path.resolve(out))}`,
    `set multiplot layout ${rows},${cols} title "mesh-ratelimit dashboard (rls tier run: real service, Redis and Prometheus; Envoy panels from the stat model)" font "sans,11"`,
    "set key top left font 'sans,8'",
    "set grid",
    "set xlabel 'seconds into the run' offset 0,0.5",
];
rec.panels.forEach((p, i) => {
    lines.push(`set title ${quote(p.title.length > 70 ? `${p.title.slice(0, 67)}...` : p.title)}`);
    lines.push(`set ylabel ${quote(p.unit === "reqps" ? "per second" : p.unit === "s" ? "seconds" : p.unit)}`);
    const plots = p.series.map((s, j) => {
        const file = path.join(dir, `p${i}s${j}.dat`);
        fs.writeFileSync(file, s.values.map(([t, v]) => `${(t - rec.t0).toFixed(0)} ${Number.isFinite(v) ? v : "NaN"}`).join("\n") + "\n");
        return `${quote(file)} using 1:2 with lines lw 2 title ${quote(s.legend)}`;
    });
    lines.push(
        plots.length
            ? `plot ${plots.join(", ")}`
            : `set label 1 "no series in this run" at graph 0.35,0.5; set yrange [0:1]; plot 2 notitle; unset label 1; set autoscale y`,
    );
});
lines.push("unset multiplot");
fs.writeFileSync(path.join(dir, "plot.gp"), lines.join("\n") + "\n");
execFileSync("gnuplot", [path.join(dir, "plot.gp")], { stdio: "inherit" });
fs.rmSync(dir, { recursive: true, force: true });
console.log(`wrote ${out}`);
