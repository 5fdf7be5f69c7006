/**
 * The JSON text of a queue message, built once per message and without re-serialising its
 * payload (issue 16). Ingest has the sender's body as text, and it is the very text its
 * `payload` was parsed from: the message's text embeds it as is, so `JSON.parse` of the
 * message (by the worker, or when a record is read back) yields exactly the payload ingest
 * parsed, and the 21 KB payload is not walked by `JSON.stringify` once for the event
 * record and once more for the queue body.
 *
 * The text is remembered per message object (a WeakMap): adapters call `messageJson`
 * wherever they wrote `JSON.stringify(message)`. A message must not be changed after its
 * text is remembered (ingest builds it completely first; everything else copies messages
 * before changing them, and a copy has no remembered text).
 */
import type { QueueMessage } from './types';

const texts = new WeakMap<QueueMessage, string>();

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** String.prototype.isWellFormed (Node ≥ 20; not in this project's TypeScript lib yet). */
function wellFormed(text: string): boolean {
  const native = (text as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(text) : !LONE_SURROGATE.test(text);
}

/**
 * Remembers `message`'s text with `payloadText` (the body its `payload` was parsed from)
 * in place of the re-serialised payload. Text that is not well-formed UTF-16 (a lone
 * surrogate, which JSON.stringify would escape and SQS and DynamoDB refuse) is not used.
 */
export function rememberMessageJson(message: QueueMessage, payloadText: string): void {
  if (message.payload === undefined || !wellFormed(payloadText)) return;
  const { payload: _payload, ...rest } = message;
  const head = JSON.stringify(rest);
  texts.set(message, `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"payload":${payloadText}}`);
}

/** Remembers `text` as `message`'s JSON: the text it was just parsed from (a stored record's, a queue body). */
export function rememberMessageText(message: QueueMessage, text: string): void {
  if (wellFormed(text)) texts.set(message, text);
}

/**
 * The text of `message` sent by reference (a queue that cannot store it beside its record,
 * SQS): every field but the payload, which the worker reads with the record. A few hundred
 * bytes instead of the whole payload signed, sent and stored once more per event.
 */
export function recordedMessageJson(message: QueueMessage): string {
  const { payload: _payload, payload_ref: _ref, ...rest } = message;
  return JSON.stringify({ ...rest, recorded: true });
}

/** `JSON.stringify(message)`, or the text remembered for it. */
export function messageJson(message: QueueMessage): string {
  return texts.get(message) ?? JSON.stringify(message);
}
