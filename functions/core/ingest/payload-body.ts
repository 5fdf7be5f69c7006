/**
 * The JSON object a request carries (DESIGN §2.1 step 5), checked after authentication,
 * which always runs over the raw bytes. Two shapes beyond a plain JSON body:
 * - `application/x-www-form-urlencoded` with a `payload` field: GitHub's "form" content
 *   type (the default of its hook API, and a choice in the UI; Gitea and Gogs send the
 *   same). The signature covers the form bytes; the event is the JSON in `payload`.
 * - A leading byte order mark: dropped, as the byte decoder drops it. API Gateway hands
 *   JSON over as text, where the BOM is still there; serve passes such bodies as bytes.
 */
import type { RawBody } from '../auth/signatures';
import type { Payload } from '../events/classify';

export type ParsedPayload = { payload: Payload; text: string } | { error: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const FORM = 'application/x-www-form-urlencoded';

/** Whether a Content-Type names the form encoding (parameters and case aside). */
function isForm(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === FORM;
}

/** `text` is the JSON the payload was parsed from: what the queue and the payload store keep. */
export function parsePayload(body: RawBody, contentType: string | undefined): ParsedPayload {
  let text: string;
  try {
    text = typeof body === 'string' ? body : utf8.decode(body);
  } catch {
    return { error: 'not valid UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // A JSON body labelled as a form (`curl -d` does that) is still read as JSON: a form
  // GitHub sends starts with `payload=`, never with a brace.
  if (isForm(contentType) && !text.trimStart().startsWith('{')) {
    const field = new URLSearchParams(text).get('payload');
    if (field === null) return { error: 'a form without a payload field' };
    text = field;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'malformed JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: `a JSON ${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value}, not an object` };
  }
  return { payload: value as Payload, text };
}
