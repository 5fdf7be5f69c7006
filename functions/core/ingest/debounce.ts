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
 *
 * A shorter window (or none) set while debounced events wait in the queue (hunt 9): those
 * keep their subject key and are still judged by the gate when they leave the queue, so
 * until the old window has passed (`debounce_pointer_until`, set by `webhook update`) the
 * events accepted meanwhile are recorded as their subject's latest too, without a delay or
 * a subject key of their own (they are not debounced: the gate never supersedes them).
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
  /** 0: not delayed, only recorded as its subject's latest (the pointer is kept: see above). */
  delaySeconds: number;
}

/** An event recorded as its subject's latest without a delayed message: held, or accepted while the pointer is kept. */
export interface LatestPointer {
  subscription: string;
  subjectKey: string;
  eventId: string;
}

/** Undefined when the event is not debounced and no earlier one may wait for it (no setting, or no subject to merge on). */
export function debouncePlan(subscription: Subscription, source: Source, event: string, payload: Payload, eventId: string, nowMs: number): DebouncePlan | undefined {
  const seconds = subscription.debounce_seconds ?? 0;
  const until = subscription.debounce_pointer_until;
  const keptPointer = until !== undefined && Date.parse(until) > nowMs;
  if (seconds <= 0 && !keptPointer) return undefined;
  const subject = subjectOf(source, event, payload, eventId);
  if (subject.key.startsWith('event:')) return undefined;
  return { subjectKey: subject.key, delaySeconds: seconds > 0 ? Math.min(900, Math.ceil(seconds)) : 0 };
}

/**
 * `debounce_pointer_until` after `webhook update` changed `before` into `after` at `nowMs`:
 * a shorter window (or none) keeps the pointer until the longest an event accepted under
 * the old one may still wait in the queue (the old window from now), or the time kept
 * already if later. Undefined once that has passed.
 */
export function pointerKeptUntil(before: Subscription, after: Subscription, nowMs: number): string | undefined {
  const stored = before.debounce_pointer_until === undefined ? 0 : Date.parse(before.debounce_pointer_until);
  const old = before.debounce_seconds ?? 0;
  const shortened = old > (after.debounce_seconds ?? 0) ? nowMs + Math.min(900, Math.ceil(old)) * 1000 : 0;
  const until = Math.max(stored, shortened);
  return until > nowMs ? new Date(until).toISOString() : undefined;
}

/**
 * Queues each delayed message with its delay, then records it as its subject's latest. A
 * failed send throws (nothing was accepted: 503); a pointer that cannot be set once the
 * messages are queued is only logged, since the event is accepted and runs anyway.
 * Ingest stored their records first, so they go by reference where the queue can, as the
 * others do: a send that reached the queue but failed leaves a message whose withdrawn
 * record the worker finds gone (dead-lettered unrun), instead of one it would rebuild the
 * record from and run beside the sender's retry (hunt 13).
 */
export async function sendDebounced(store: DebounceStore, queue: EventQueue, delayed: DelayedMessage[], logger: Logger): Promise<void> {
  const byDelay = new Map<number, DelayedMessage['message'][]>();
  for (const { message, delaySeconds } of delayed) byDelay.set(delaySeconds, [...(byDelay.get(delaySeconds) ?? []), message]);
  for (const [delaySeconds, messages] of byDelay) {
    await (queue.sendRecorded ? queue.sendRecorded(messages, { delaySeconds }) : queue.send(messages, { delaySeconds }));
  }
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

/** The pointers of held events of a debounced subscription (their records carry the subject key). */
export function heldPointers(records: readonly EventRecord[]): LatestPointer[] {
  return records.flatMap((r) => (r.status === 'held' && r.message.subject_key ? [{ subscription: r.subscription, subjectKey: r.message.subject_key, eventId: r.event_id }] : []));
}

/**
 * Records events that have no delayed message of their own as their subjects' latest:
 * - a held event of a debounced subscription (hunt 7): an earlier event of the subject still
 *   waiting out its window in the queue (accepted before the pause) is then superseded by
 *   it, as it would have been without the pause, instead of running after it once `resume`
 *   has released it;
 * - an event accepted while the pointer is kept after a shorter window (hunt 9): the same
 *   for an earlier event accepted under the old window.
 * Written after the event is stored (and queued, unless held), so the pointer never names
 * an event that was not accepted. A failed write is only logged: the event is accepted, and at worst
 * the earlier one runs too.
 */
export async function recordAsLatest(store: DebounceStore, pointers: readonly LatestPointer[], logger: Logger): Promise<void> {
  for (const { subscription, subjectKey, eventId } of pointers) {
    try {
      await store.setLatest(subscription, subjectKey, eventId, DEBOUNCE_TTL_SECONDS);
    } catch (error) {
      logger.warn('could not record an event as the latest of its subject; an earlier queued one may run too', {
        event_id: eventId, subscription, error: describeError(error),
      });
    }
  }
}
