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

/** Event ids sort by arrival: a base-36 millisecond timestamp, then 64 random bits. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36).padStart(9, '0')}${random8()}`;
}

/** A subscription's custom-endpoint secret: 32 random bytes, Standard Webhooks form. */
export function newSubscriptionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
