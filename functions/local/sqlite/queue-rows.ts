/**
 * How the local queue's rows name their events and receipts: the shapes the queue stores,
 * read back without the queue's statements (queue.ts).
 */
import { HookError } from '../../core/errors';
import type { QueueMessage } from '../../core/types';
import { messageJson } from '../../core/message-json';
import type { EventKey } from './gave-up';

export interface QueueRow {
  id: number;
  message_id: string;
  /** Empty: the message is the event record's (`event_key` names it). */
  body: string;
  event_key: string | null;
  receive_count: number;
  receipt: number;
  sent_at: number;
}

/** SQS's limit for DelaySeconds and visibility changes used by the worker (15 minutes). */
const MAX_DELAY_SECONDS = 900;

/** A send's delay in ms: `delaySeconds` bounded to 0…900 s, as SQS has it. */
export function delayMs(delaySeconds: number | undefined): number {
  return Math.min(Math.max(0, delaySeconds ?? 0), MAX_DELAY_SECONDS) * 1000;
}

/** `event_id` NUL `subscription`: how the queue keys event messages. */
export function eventKeyOf(message: Pick<QueueMessage, 'event_id' | 'subscription'>): string {
  return `${message.event_id}\u0000${message.subscription}`;
}

/** The (event, subscription) of a queue key. */
export function eventOfKey(key: string | null): { event_id: string; subscription: string } {
  const at = (key ?? '').indexOf('\u0000');
  return { event_id: (key ?? '').slice(0, at), subscription: (key ?? '').slice(at + 1) };
}

/** The (event, subscription) a row's message is for: its key, or (a redriven message has none) its body's. */
export function eventOfRow(row: Pick<QueueRow, 'event_key'>, body: string): EventKey | undefined {
  if (row.event_key !== null) return eventOfKey(row.event_key);
  try {
    const message = JSON.parse(body) as Partial<QueueMessage>;
    return typeof message.event_id === 'string' && typeof message.subscription === 'string' ? { event_id: message.event_id, subscription: message.subscription } : undefined;
  } catch {
    return undefined; // a malformed body names no event
  }
}

/** The bodies (empty: by reference to the event record) and queue keys of event messages. */
export function bodiesOf(messages: QueueMessage[], byReference = false): [string[], string[]] {
  return [messages.map((m) => (byReference ? '' : messageJson(m))), messages.map(eventKeyOf)];
}

/** A send that failed: retryable, so ingest answers 503 and the sender tries again. */
export function queueUnavailable(error: unknown): HookError {
  return new HookError('unavailable', `The local queue is unavailable (${error instanceof Error ? error.message : String(error)})`, { retryable: true, cause: error });
}

/** Receipt handles are `{id}.{receipt}`. */
export function parseReceipt(receiptHandle: string): [number, number] {
  const match = /^(\d+)\.(\d+)$/.exec(receiptHandle);
  if (!match) throw new HookError('receipt_invalid', 'Not a receipt handle of the local queue');
  return [Number(match[1]), Number(match[2])];
}

/** Callbacks waiting for the next send: each runs once, at the next `wake()`. */
export class Waiters {
  private readonly waiting = new Set<() => void>();

  /** Returns what cancels the wait. */
  add(wake: () => void): () => void {
    this.waiting.add(wake);
    return () => this.waiting.delete(wake);
  }

  /** Callbacks registered and neither run nor cancelled. */
  get size(): number {
    return this.waiting.size;
  }

  wake(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const resolve of waiting) resolve();
  }
}
