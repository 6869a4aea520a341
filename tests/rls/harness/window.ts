/**
 * Fixed windows are aligned to the epoch (a 1/min limit resets at every minute boundary), so a
 * check that must stay inside one window first makes sure enough of the window is left.
 */
import { sleep } from "./ports";
import { fixedWindowStart } from "../../../gateway-model/fixed-window";

/** Seconds left in the current minute. */
export function secondsLeftInMinute(now = Date.now()): number {
    return 60 - ((now / 1000) % 60);
}

/** Waits for the next minute when fewer than `needSeconds` remain; returns the ms waited. */
export async function ensureWindow(needSeconds: number): Promise<number> {
    const left = secondsLeftInMinute();
    if (left >= needSeconds) return 0;
    const ms = Math.ceil(left * 1000) + 100;
    await sleep(ms);
    return ms;
}

/** The epoch-aligned minute a timestamp falls in, its start in seconds (to assert a sequence stayed in one window). */
export function minuteOf(ms: number): number {
    return fixedWindowStart(60, ms);
}

/**
 * Waits for the next window of `unitSeconds` when fewer than `needSeconds` of the current one remain;
 * returns the ms waited. A case that must stay inside one window however long its flood takes uses a
 * long window (an hour) and needs only a few minutes of it.
 */
export async function ensureWindowOf(unitSeconds: number, needSeconds: number): Promise<number> {
    const left = unitSeconds - ((Date.now() / 1000) % unitSeconds);
    if (left >= needSeconds) return 0;
    const ms = Math.ceil(left * 1000) + 100;
    await sleep(ms);
    return ms;
}

/** The epoch-aligned window of `unitSeconds` a timestamp falls in (its start, seconds since the epoch). */
export function windowOf(ms: number, unitSeconds: number): number {
    return fixedWindowStart(unitSeconds, ms);
}
