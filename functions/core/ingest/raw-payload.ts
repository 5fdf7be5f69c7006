/**
 * Whether a parsed payload may travel inline in the queue message (and the event record),
 * or must travel as the sender's raw bytes through the PayloadStore. Re-serialising is not
 * always safe: a valid 5,000-deep object overflows `JSON.stringify` (and structuredClone,
 * and the recursion of every adapter that walks it), and numbers such as `1e20` grow when
 * printed again (`100000000000000000000`), so a body under the inline limit could become
 * a message or record too large to store. Every retry of such a body would fail the same
 * way (503 for ever); keeping the raw bytes cannot.
 */
import type { RawBody } from '../auth/signatures';

/** Deeper payloads travel as raw bytes: far below any stack limit, far above real webhooks. */
export const MAX_INLINE_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = new Set([0x7b, 0x5b]);
const CLOSE = new Set([0x7d, 0x5d]);

/** The deepest nesting of objects and arrays in JSON text (bytes or string), strings skipped. */
export function jsonDepth(body: RawBody): number {
  const at = typeof body === 'string' ? (i: number) => body.charCodeAt(i) : (i: number) => body[i] as number;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPEN.has(c)) deepest = Math.max(deepest, ++depth);
    else if (CLOSE.has(c)) depth -= 1;
  }
  return deepest;
}

/** True when `payload` is shallow enough and re-serialises to no more bytes than the body it came from. */
export function inlineSafe(payload: unknown, body: RawBody): boolean {
  if (jsonDepth(body) > MAX_INLINE_DEPTH) return false;
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch {
    return false;
  }
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  return Buffer.byteLength(text, 'utf8') <= bodyBytes;
}
