/** Where the real programs are: built by scripts/tools/build-ratelimit.sh, Redis from Debian. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { execFileSync } from "child_process";

export const RATELIMIT_COMMIT = "3fb702589d36";

export function cacheDir(): string {
    return process.env.MESH_RL_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "mesh-ratelimit");
}

export function ratelimitBin(name: "service_cmd" | "config_check_cmd"): string {
    return path.join(cacheDir(), "tools", `ratelimit-${RATELIMIT_COMMIT}`, name);
}

function which(cmd: string): string | undefined {
    try {
        return execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim() || undefined;
    } catch {
        return undefined;
    }
}

/** The project's Go load generator (tests/rls/build-loadgen.sh); RLS_LOADGEN overrides. */
export function loadgenBin(): string {
    return process.env.RLS_LOADGEN ?? path.join(cacheDir(), "tools", "rls-loadgen", "rls-loadgen");
}

export function redisServerBin(): string | undefined {
    return which("redis-server");
}

export function redisCliBin(): string | undefined {
    return which("redis-cli");
}

export function redisBenchmarkBin(): string | undefined {
    return which("redis-benchmark");
}

/** Names of the missing tools (empty when the tier can run). */
export function missingTools(): string[] {
    const missing: string[] = [];
    for (const b of ["service_cmd", "config_check_cmd"] as const) {
        if (!fs.existsSync(ratelimitBin(b))) missing.push(ratelimitBin(b));
    }
    if (!redisServerBin()) missing.push("redis-server");
    return missing;
}
