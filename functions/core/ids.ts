import { randomBytes } from 'node:crypto';

// Random bits come from a pool refilled 4 KiB at a time: one system call per 512 ids, not per event.
let pool = Buffer.alloc(0);
let offset = 0;

function random8(): string {
  if (offset + 8 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  offset += 8;
  return pool.toString('hex', offset - 8, offset);
}

let lastMs = -1;
let lastRandom = 0n;
const MAX_RANDOM = (1n << 64n) - 1n;

/**
 * Event ids sort by arrival: a base-36 millisecond timestamp, then 64 random bits. Ids made
 * in the same millisecond by one process count up from the first one's random bits, so
 * they sort in the order they were made too (records are listed, and held events released,
 * by arrival time, then id).
 */
export function newEventId(nowMs: number): string {
  if (nowMs === lastMs && lastRandom < MAX_RANDOM) lastRandom += 1n;
  else {
    lastMs = nowMs;
    lastRandom = BigInt(`0x${random8()}`);
  }
  return `evt_${nowMs.toString(36).padStart(9, '0')}${lastRandom.toString(16).padStart(16, '0')}`;
}

/** A subscription's custom-endpoint secret: 32 random bytes, Standard Webhooks form. */
export function newSubscriptionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
