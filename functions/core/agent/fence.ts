/**
 * The prompt fence (DESIGN §3, "payload text is untrusted"). The subscription's prompt
 * template is the operator's instruction and reaches the model as it is; every value
 * inserted from the payload, and every tool result, is enclosed between
 * `<untrusted-data-TOKEN>` and `</untrusted-data-TOKEN>`, where TOKEN is random per run.
 *
 * Nothing inside can close the fence: the token is drawn after the payload values are
 * known and never occurs in them (compared without case or whitespace), and any
 * occurrence in text fenced later with the same token (tool results, which could echo
 * what the model was led to fetch) is replaced before wrapping, in any case or spacing.
 */
import { randomFillSync } from 'node:crypto';

export const FENCE_TAG = 'untrusted-data';

export interface Part {
  /** true: the operator's template text; false: inserted from outside (fenced). */
  trusted: boolean;
  text: string;
}

const squeeze = (text: string) => text.replace(/\s+/g, '').toLowerCase();

/**
 * Bytes from the CSPRNG drawn a pool at a time and each used once, as `randomUUID` buffers
 * its own: a draw of 9 bytes per prompt was ~1% of serve's CPU under load.
 */
const pool = Buffer.alloc(4608);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/** A fresh token that occurs in none of `avoid` (case and whitespace ignored). */
export function newFenceToken(avoid: readonly string[] = []): string {
  const haystacks = avoid.map(squeeze);
  for (;;) {
    const token = randomHex(9);
    if (!haystacks.some((h) => h.includes(token))) return token;
  }
}

export const fenceOpen = (token: string) => `<${FENCE_TAG}-${token}>`;
export const fenceClose = (token: string) => `</${FENCE_TAG}-${token}>`;

/** The token in `text`, in any case, with any whitespace between its characters. */
function tokenPattern(token: string): RegExp {
  return new RegExp(token.split('').join('\\s*'), 'gi');
}

/** Wraps outside text in the fence of `token`; any occurrence of the token inside is replaced first. */
export function fenceText(text: string, token: string): string {
  // The pattern is slow on long text; the squeezed text tells first whether it can match at all.
  const clean = !squeeze(text).includes(token);
  return `${fenceOpen(token)}${clean ? text : text.replace(tokenPattern(token), '[fence token removed]')}${fenceClose(token)}`;
}

/** Trusted parts as they are, untrusted ones fenced with one token drawn for this prompt. */
export function fenceParts(parts: readonly Part[]): string {
  const token = newFenceToken(parts.filter((p) => !p.trusted).map((p) => p.text));
  // The token was drawn to occur in none of these texts: they are wrapped as they are.
  return parts.map((p) => (p.trusted ? p.text : `${fenceOpen(token)}${p.text}${fenceClose(token)}`)).join('');
}
