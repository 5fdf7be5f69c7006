/**
 * Queue message bodies: reading one (untrusted bytes until they have the shape of a
 * QueueMessage) and writing one without printing its payload again.
 */
import type { QueueMessage } from '../types';
import { noteMessageBytes } from './record';

const SOURCES = new Set(['github', 'gitlab', 'custom']);
const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

export function parseQueueMessage(body: string): QueueMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  if (m.v !== 1 || !str(m.event_id) || !str(m.subscription) || !SOURCES.has(m.source as string) || !str(m.event) || !str(m.delivery_id) || !str(m.received_at)) return undefined;
  const inline = m.payload !== undefined && m.payload !== null && typeof m.payload === 'object' && !Array.isArray(m.payload);
  if (!inline && !str(m.payload_ref)) return undefined;
  noteMessageBytes(value as QueueMessage, body);
  return value as QueueMessage;
}

/** The JSON text each payload was parsed from (ingest), so writing its message does not print it again. */
const payloadTexts = new WeakMap<object, string>();

/** Remembers that `payload` was parsed from `text` (a JSON object text); neither may change afterwards. */
export function rememberPayloadText(payload: object, text: string): void {
  payloadTexts.set(payload, text);
}

/**
 * `JSON.stringify(message)`, with the payload spliced in as the text it was parsed from
 * when that is known: a 20 KB payload is not printed once per store it goes to. Parsing
 * the result gives the same message (JSON.parse of that text is the payload).
 */
export function messageJson(message: QueueMessage): string {
  const text = message.payload === undefined ? undefined : payloadTexts.get(message.payload);
  if (text === undefined) return JSON.stringify(message);
  const { payload: _payload, ...rest } = message;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"payload":${text}}`;
}
