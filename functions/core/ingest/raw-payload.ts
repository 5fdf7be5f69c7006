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

/**
 * One pass over JSON text (bytes or string), strings skipped: the deepest nesting of
 * objects and arrays, and whether any number is written with an exponent (`1e20`, the only
 * way a number's printed form can be longer than its source). Specialised per input type
 * and free of closures and sets: it runs on every accepted request.
 */
function scan(body: RawBody): { depth: number; exponent: boolean } {
  // Bytes read as latin1 keep every ASCII structural character where it was (UTF-8 never uses them inside a character).
  return scanText(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1'));
}

function scanText(body: string): { depth: number; exponent: boolean } {
  let depth = 0;
  let deepest = 0;
  let exponent = false;
  let previous = 0;
  const length = body.length;
  for (let i = 0; i < length; i++) {
    const c = body.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string at once: find its closing quote, stepping over escapes.
      let end = body.indexOf('"', i + 1);
      while (end > 0 && isEscaped(body, end)) end = body.indexOf('"', end + 1);
      if (end < 0) break;
      i = end;
      previous = QUOTE;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
    else if ((c === 0x65 || c === 0x45) && previous >= 0x30 && previous <= 0x39) exponent = true;
    previous = c;
  }
  return { depth: deepest, exponent };
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let slashes = 0;
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) slashes += 1;
  return slashes % 2 === 1;
}

/** The deepest nesting of objects and arrays in JSON text (bytes or string), strings skipped. */
export function jsonDepth(body: RawBody): number {
  return scan(body).depth;
}

/**
 * True when `payload` is shallow enough and re-serialises to no more bytes than the body it
 * came from. Re-serialising can only grow a body through numbers written with an exponent,
 * so JSON.stringify runs only for those.
 */
export function inlineSafe(payload: unknown, body: RawBody): boolean {
  const { depth, exponent } = scan(body);
  if (depth > MAX_INLINE_DEPTH) return false;
  if (!exponent) return true;
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch {
    return false;
  }
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  return Buffer.byteLength(text, 'utf8') <= bodyBytes;
}

/** Whether the body is at most `limit` bytes; text is only measured when its length leaves doubt. */
export function fitsIn(body: RawBody, limit: number): boolean {
  if (typeof body !== 'string') return body.length <= limit;
  // A UTF-16 code unit takes 1 to 3 bytes in UTF-8.
  if (body.length > limit) return false;
  return body.length * 3 <= limit || Buffer.byteLength(body, 'utf8') <= limit;
}
