/**
 * A message given back to the queue for a reason its event record does not show: a store
 * call failed (DynamoDB, S3, the local disk) or the invocation had too little time left to
 * start it. The queue used to retry such messages in silence and, after the last receive,
 * dead-letter them with the record still `queued`. Now each is logged with its ids, and
 * the reason is written on the record, on the last receive as the worker's own give-up
 * writes it (`failed`, `gave up after N attempts: <reason>`), so the event log and the
 * dead-letter listing (queue-gave-up.ts leaves a failed record's reason as it is) say why.
 */
import { randomUUID } from 'node:crypto';
import { describeError } from '../errors';
import { childLogger, type Logger } from '../log';
import { redactSecrets } from '../redact';
import type { EventRecord, EventStatus, QueueMessage } from '../types';
import { handedOver, parseQueueMessage } from './message';
import { secretsOf, type WorkerDeps } from './process';

/** A queue record as the batch handler has it (the SQS record's fields used here). */
export interface GivenBackRecord {
  messageId: string;
  body: string;
}

/** Statuses a give-back may explain: the record still waits for this message. */
const WAITING = new Set<EventStatus>(['queued', 'processing']);

/** How long the note may hold the worker lease: a few store calls. */
const NOTE_LEASE_MS = 30_000;

/** The message of a queue record, if it is one (parsed again only on this rare path). */
function messageOf(record: GivenBackRecord): QueueMessage | undefined {
  return handedOver(record) ?? parseQueueMessage(record.body);
}

/** A logger whose lines carry the queue message id, and the event id and subscription when the body has them. */
export function recordLogger(logger: Logger, record: GivenBackRecord): Logger {
  const message = messageOf(record);
  return childLogger(logger, { message_id: record.messageId, ...(message ? { event_id: message.event_id, subscription: message.subscription } : {}) });
}

export interface GiveBack {
  code: string;
  reason: string;
  receiveCount: number;
  /** Write the reason on the record on the last receive only (a give-back that is no failure). */
  recordOnLastOnly?: boolean;
}

/** Logs the give-back and writes its reason on the record (best effort: never throws). */
export async function noteGivenBack(deps: WorkerDeps, record: GivenBackRecord, giveBack: GiveBack): Promise<void> {
  const logger = recordLogger(deps.logger, record);
  const reason = redactSecrets(giveBack.reason, secretsOf(deps.config));
  const last = giveBack.receiveCount >= deps.maxReceiveCount;
  const fields = { code: giveBack.code, reason, attempt: giveBack.receiveCount, max_receive_count: deps.maxReceiveCount };
  if (last) logger.error('given back on its last receive: the queue moves it to the dead-letter queue', fields);
  else logger.warn('given back to the queue: it comes again', fields);
  const message = messageOf(record);
  if (!message || (giveBack.recordOnLastOnly && !last)) return;
  const changes: Partial<EventRecord> = last
    ? { status: 'failed', error: { code: giveBack.code, message: `gave up after ${giveBack.receiveCount} attempts: ${reason}` } }
    : { status: 'queued', error: { code: giveBack.code, message: reason } };
  try {
    await underLease(deps, message, async () => {
      const stored = await deps.events.get(message.event_id, message.subscription);
      // A finished record (a copy of the message ran it meanwhile) keeps its outcome.
      if (!stored || !WAITING.has(stored.status)) return;
      await deps.events.update(message.event_id, message.subscription, { ...changes, updated_at: new Date(deps.clock.now()).toISOString() });
    });
  } catch (error) {
    logger.warn('the reason could not be written on the event record', { error: describeError(error) });
  }
}

/** Runs `fn` holding the worker lease, so no copy of the message runs meanwhile; skipped when a copy holds it (that copy records its own outcome). */
async function underLease(deps: WorkerDeps, message: QueueMessage, fn: () => Promise<void>): Promise<void> {
  if (!deps.leases) return fn();
  const holder = randomUUID();
  if (!(await deps.leases.acquire(message.event_id, message.subscription, holder, NOTE_LEASE_MS))) return;
  try {
    await fn();
  } finally {
    await deps.leases.release(message.event_id, message.subscription, holder).catch(() => undefined);
  }
}
