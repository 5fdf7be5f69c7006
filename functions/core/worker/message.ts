/** Reading a queue message body: untrusted bytes until they have the shape of a QueueMessage. */
import type { QueueMessage } from '../types';
import { rememberMessageText } from '../message-json';
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
  if (!inline && !str(m.payload_ref) && m.recorded !== true) return undefined;
  noteMessageBytes(value as QueueMessage, body);
  rememberMessageText(value as QueueMessage, body);
  return value as QueueMessage;
}


/**
 * Queue records whose message was handed over in-process, already parsed (serve: the
 * message ingest built moments ago); keyed by the record object, so the record's body and
 * message cannot part. The worker then skips parsing the body again.
 */
const handed = new WeakMap<object, QueueMessage>();

export function handOver(record: object, message: QueueMessage): void {
  handed.set(record, message);
}

export function handedOver(record: object): QueueMessage | undefined {
  return handed.get(record);
}
