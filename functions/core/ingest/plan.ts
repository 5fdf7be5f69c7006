/**
 * What one accepted request writes, per matched subscription: its event record (held for a
 * paused subscription), its queue message (by the body as received, or a payload reference
 * for a large one), debounced ones' delays and latest-event pointers. A resumed claim's
 * dead request's records are reused: queued again only while they may never have been.
 */
import type { DelayedMessage } from '../ports';
import { rememberMessageJson } from '../message-json';
import type { EventRecord, QueueMessage, Subscription } from '../types';
import { eventRecord } from '../worker/record';
import type { Accepted } from './accept';
import { debouncePlan, type LatestPointer } from './debounce';
import type { IngestDeps } from './service';

/** What one request writes: records, messages to queue now or with a debounce delay, and the answer's lists. */
export interface Plan {
  records: EventRecord[];
  messages: QueueMessage[];
  delayed: DelayedMessage[];
  /** Events not delayed but recorded as their subject's latest: a shorter window's pointer is kept (debounce.ts). */
  latest: LatestPointer[];
  queued: string[];
  held: string[];
}

export interface Ids {
  eventId: string;
  deliveryId: string;
  receivedAt: string;
}

/** The records and messages of this request; `earlier`: records of a resumed claim's dead request. */
export function planFor(deps: IngestDeps, input: Accepted, matched: Subscription[], ids: Ids, earlier: Map<string, EventRecord>, payloadRef: string | undefined): Plan {
  const plan: Plan = { records: [], messages: [], delayed: [], latest: [], queued: [], held: [] };
  for (const subscription of matched) {
    const prior = earlier.get(subscription.name);
    if (prior) {
      // Recorded by the dead request: queue it again only while it may never have been
      // queued. The worker is idempotent, so a second copy of a message that did go out
      // is harmless.
      (prior.status === 'held' ? plan.held : plan.queued).push(subscription.name);
      if (prior.status === 'queued' || prior.status === 'abandoned') plan.messages.push(prior.message);
      if (prior.status === 'abandoned') {
        // Marked abandoned while its sender waited longer than the lease: it is accepted now.
        const { error: _abandonedBecause, ...rest } = prior;
        plan.records.push({ ...rest, status: 'queued', updated_at: ids.receivedAt });
      }
      continue;
    }
    const message: QueueMessage = {
      v: 1, event_id: ids.eventId, subscription: subscription.name, source: input.source, event: input.event,
      delivery_id: ids.deliveryId, received_at: ids.receivedAt, subscription_created_at: subscription.created_at,
    };
    if (input.action) message.action = input.action;
    if (payloadRef) message.payload_ref = payloadRef;
    else message.payload = input.payload;
    const paused = subscription.state === 'paused';
    // Held events keep their subject too: a resume releases only the latest of a burst (held-settle.ts).
    const found = deps.debounce ? debouncePlan(subscription, input.source, input.event, input.payload, ids.eventId, Date.parse(ids.receivedAt)) : undefined;
    const debounce = found && found.delaySeconds > 0 ? found : undefined;
    if (debounce) message.subject_key = debounce.subjectKey;
    // Not debounced, but an earlier event may wait for it (debounce.ts): its latest, with no subject key for the gate to judge it by.
    else if (found) plan.latest.push({ subscription: subscription.name, subjectKey: found.subjectKey, eventId: ids.eventId });
    // Complete now: its text embeds the body as received instead of re-serialising the payload.
    if (!payloadRef) rememberMessageJson(message, input.text);
    plan.records.push(eventRecord(message, paused ? 'held' : 'queued', ids.receivedAt));
    if (paused) plan.held.push(subscription.name);
    else {
      if (debounce) plan.delayed.push({ message, delaySeconds: debounce.delaySeconds });
      else plan.messages.push(message);
      plan.queued.push(subscription.name);
    }
  }
  return plan;
}
