import { randomBytes } from 'node:crypto';

/** Event ids sort by arrival: a base-36 millisecond timestamp, then 64 random bits. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

/** A subscription's custom-endpoint secret: 32 random bytes, Standard Webhooks form. */
export function newSubscriptionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
