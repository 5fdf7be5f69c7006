/**
 * Debounce at ingest (issue 17): an event for a subscription with `debounce_seconds` is
 * keyed by its subject (the PR/MR/issue/commit/alert group, `subjectOf`), recorded as the
 * subject's latest event, and queued with that delay. When the worker receives it, a later
 * event of the same subject has replaced it (→ `superseded`) or it is the latest (→ runs).
 *
 * The latest-event pointer must never name an event without a queue message: that event
 * would supersede the earlier ones and never run itself. The local store writes both in
 * one transaction (AtomicAccept); elsewhere the message is sent first and the pointer set
 * after. A crash (or a failed write) between the two leaves the pointer on an earlier
 * event, and the worker's gate lets an event run whose subject's latest is older than
 * itself: at worst one run too many, never none.
 */
import { describeError } from '../errors';
import type { Payload } from '../events/classify';
import { subjectOf } from '../events/subject';
import type { Logger } from '../log';
import type { DebounceStore, DelayedMessage, EventQueue } from '../ports';
import type { EventRecord, Source, Subscription } from '../types';
import { DEBOUNCE_TTL_SECONDS } from '../worker/gates';

export interface DebouncePlan {
  subjectKey: string;
  delaySeconds: number;
}

/** Undefined when the event is not debounced (no setting, or no subject to merge on). */
export function debouncePlan(subscription: Subscription, source: Source, event: string, payload: Payload, eventId: string): DebouncePlan | undefined {
  const seconds = subscription.debounce_seconds;
  if (!seconds || seconds <= 0) return undefined;
  const subject = subjectOf(source, event, payload, eventId);
  if (subject.key.startsWith('event:')) return undefined;
  return { subjectKey: subject.key, delaySeconds: Math.min(900, Math.ceil(seconds)) };
}

/**
 * Queues each delayed message with its delay, then records it as its subject's latest. A
 * failed send throws (nothing was accepted: 503); a pointer that cannot be set once the
 * messages are queued is only logged, since the event is accepted and runs anyway.
 */
export async function sendDebounced(store: DebounceStore, queue: EventQueue, delayed: DelayedMessage[], logger: Logger): Promise<void> {
  const byDelay = new Map<number, DelayedMessage['message'][]>();
  for (const { message, delaySeconds } of delayed) byDelay.set(delaySeconds, [...(byDelay.get(delaySeconds) ?? []), message]);
  for (const [delaySeconds, messages] of byDelay) await queue.send(messages, { delaySeconds });
  for (const { message } of delayed) {
    try {
      await store.setLatest(message.subscription, message.subject_key as string, message.event_id, DEBOUNCE_TTL_SECONDS);
    } catch (error) {
      logger.warn('could not record the latest event of its subject; earlier ones of the burst may run too', {
        event_id: message.event_id, subscription: message.subscription, error: describeError(error),
      });
    }
  }
}

/**
 * A held event of a debounced subscription is recorded as its subject's latest too (hunt 7):
 * an earlier event of the subject still waiting out its window in the queue (accepted before
 * the pause) is then superseded by it, as it would have been without the pause, instead of
 * running after it once `resume` has released it. Only held records of debounced
 * subscriptions carry a subject key, so other requests write nothing more. A failed write
 * is only logged: the event is stored, and at worst the earlier one runs too.
 */
export async function recordHeldAsLatest(store: DebounceStore, records: readonly EventRecord[], logger: Logger): Promise<void> {
  for (const record of records) {
    const subject = record.message.subject_key;
    if (record.status !== 'held' || !subject) continue;
    try {
      await store.setLatest(record.subscription, subject, record.event_id, DEBOUNCE_TTL_SECONDS);
    } catch (error) {
      logger.warn('could not record a held event as the latest of its subject; an earlier queued one may run too', {
        event_id: record.event_id, subscription: record.subscription, error: describeError(error),
      });
    }
  }
}
