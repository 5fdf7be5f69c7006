/**
 * Whether a parsed payload may travel inline in the queue message (and the event record),
 * or must travel as the sender's raw bytes through the PayloadStore. Re-serialising is not
 * always safe: a valid 5,000-deep object overflows `JSON.stringify` (and structuredClone),
 * and numbers such as `1e20` grow when printed again (`100000000000000000000`), so a body
 * under the inline limit could become a message or record too large to store. Every such
 * retry would fail the same way (503 for ever); keeping the raw bytes cannot.
 */
import type { RawBody } from '../auth/signatures';

/** True when `payload` re-serialises without error to no more bytes than the body it came from. */
export function inlineSafe(payload: unknown, body: RawBody): boolean {
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch {
    return false;
  }
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  return Buffer.byteLength(text, 'utf8') <= bodyBytes;
}
