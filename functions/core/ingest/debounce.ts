/**
 * Debounce at ingest (issue 17): an event for a subscription with `debounce_seconds` is
 * keyed by its subject (the PR/MR/issue/commit/alert group, `subjectOf`), recorded as the
 * subject's latest event, and queued with that delay. When the worker receives it, a later
 * event of the same subject has replaced it (→ `superseded`) or it is the latest (→ runs).
 */
import type { Payload } from '../events/classify';
import { subjectOf } from '../events/subject';
import type { DebounceStore, EventQueue } from '../ports';
import type { QueueMessage, Source, Subscription } from '../types';
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

/** Records each delayed message as its subject's latest, then queues it with its delay. */
export async function sendDebounced(store: DebounceStore, queue: EventQueue, delayed: Array<{ message: QueueMessage; delaySeconds: number }>): Promise<void> {
  for (const { message } of delayed) {
    await store.setLatest(message.subscription, message.subject_key as string, message.event_id, DEBOUNCE_TTL_SECONDS);
  }
  const byDelay = new Map<number, QueueMessage[]>();
  for (const { message, delaySeconds } of delayed) byDelay.set(delaySeconds, [...(byDelay.get(delaySeconds) ?? []), message]);
  for (const [delaySeconds, messages] of byDelay) await queue.send(messages, { delaySeconds });
}
