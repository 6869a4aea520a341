/**
 * Fixed windows are aligned to the epoch (a 1/min limit resets at every minute boundary), so a
 * check that must stay inside one window first makes sure enough of the window is left.
 */
import { sleep } from "./ports";

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

/** The epoch-aligned minute a timestamp falls in (to assert a sequence stayed in one window). */
export function minuteOf(ms: number): number {
    return Math.floor(ms / 60_000);
}
