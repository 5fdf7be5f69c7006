/**
 * Dead letters as an operator sees them, and moving them back to the queue (`hookagent
 * webhook dead-letters` / `redrive`). The port is implemented over SQS
 * (functions/aws/sqs-dead-letter-queue.ts); a local store implements it the same way.
 */
import type { EventLog } from '../ports';
import type { QueueMessage } from '../types';
import { queueGaveUpChanges } from '../worker/queue-gave-up';

export interface DeadLetter {
  /** The dead-letter queue's id of the message. */
  id: string;
  /** From the message body; undefined when the body is not a queue message. */
  event_id?: string;
  subscription?: string;
  /** Why it was dead-lettered (the worker's reason, or the queue's redrive after N receives). */
  reason: string;
  receive_count: number;
  /**
   * ISO time it was dead-lettered, when known: when the worker (or the local queue) sent it
   * to the dead-letter queue. Absent for a letter SQS's redrive policy moved: SQS keeps the
   * original SentTimestamp and no attribute tells when the move happened.
   */
  dead_at?: string;
  /**
   * ISO time the event's message was first sent to the event queue, for a letter SQS's
   * redrive policy moved (its SentTimestamp); it was dead-lettered some time after that.
   */
  queued_at?: string;
  body: string;
}

/** A listing that may stop short of the whole queue (SQS: 1,000 letters at most). */
export interface DeadLetterListing {
  letters: DeadLetter[];
  /** Set when `letters` are only the first received: the queue's approximate count of all, when it could be read. */
  truncated?: { approximateTotal?: number };
}

export interface DeadLetterQueue {
  /**
   * The dead letters, oldest first (by `dead_at`, else `queued_at`), without removing or
   * hiding any for long: every one (SQS: the first 1,000 received; `listing()` says so).
   */
  list(): Promise<DeadLetter[]>;
  /**
   * Moves the selected dead letters back to the event queue: `beforeRequeue` runs first for
   * each (a failure leaves that letter where it is), then it is sent to the queue and removed.
   * Every letter of the queue is offered to `select`, however many there are. Returns those moved.
   */
  redrive(select: (letter: DeadLetter) => boolean, beforeRequeue: (letter: DeadLetter) => Promise<void>): Promise<DeadLetter[]>;
}

/** Reads what a dead letter's body says about its event. */
export function describeBody(body: string): Pick<DeadLetter, 'event_id' | 'subscription'> {
  try {
    const message = JSON.parse(body) as Partial<QueueMessage>;
    if (message && typeof message.event_id === 'string' && typeof message.subscription === 'string') return { event_id: message.event_id, subscription: message.subscription };
  } catch {
    // Not JSON: a malformed message, shown by its id.
  }
  return {};
}

export interface RedriveResult {
  moved: DeadLetter[];
  /** Requested event ids that are not in the dead-letter queue. */
  notFound: string[];
}

/**
 * Redrives all dead letters that carry a queue message, or those of `eventIds`. The event's
 * record is reopened first (status `queued`, error cleared), so the worker runs it again
 * instead of acknowledging a finished record.
 */
export async function redriveDeadLetters(queue: DeadLetterQueue, events: EventLog, eventIds: string[], now: () => Date = () => new Date()): Promise<RedriveResult> {
  const wanted = new Set(eventIds);
  const seen = new Set<string>();
  const moved = await queue.redrive(
    (letter) => letter.event_id !== undefined && (wanted.size === 0 || wanted.has(letter.event_id)),
    async (letter) => {
      seen.add(letter.event_id as string);
      const record = await events.get(letter.event_id as string, letter.subscription as string);
      if (record && record.status === 'failed') {
        const { error: _error, ...rest } = record;
        await events.putAll([{ ...rest, status: 'queued', updated_at: now().toISOString() }]);
      }
    },
  );
  return { moved, notFound: [...wanted].filter((id) => !seen.has(id)) };
}

/**
 * Records of dead letters that never ended: on AWS, SQS's redrive moves a message to the
 * DLQ by itself after `maxReceiveCount` receives, and if the last attempt was cut off (a
 * Lambda timeout, a crash) no code of ours saw it, so its record stayed `queued` or
 * `processing`. Listing the dead letters sets such records `failed` with that reason
 * (queue-gave-up.ts), and a failed record without `dead_lettered_at` gets it. Returns the
 * event ids changed. The local queue does this itself when it dead-letters a message.
 */
export async function settleDeadLetters(events: EventLog, letters: DeadLetter[], options: { receiveCount?: number; now?: () => Date } = {}): Promise<string[]> {
  const settled: string[] = [];
  for (const letter of letters) {
    if (letter.event_id === undefined || letter.subscription === undefined) continue;
    const record = await events.get(letter.event_id, letter.subscription);
    if (!record) continue;
    const changes = queueGaveUpChanges(record, options.receiveCount ?? letter.receive_count, (options.now?.() ?? new Date()).toISOString());
    if (!changes) continue;
    // Only if no worker moved it on since it was read (a copy of the message may still run).
    if (events.putIfStatus) {
      if (!(await events.putIfStatus({ ...record, ...changes }, record.status))) continue;
    } else {
      await events.update(letter.event_id, letter.subscription, changes);
    }
    settled.push(letter.event_id);
  }
  return settled;
}
