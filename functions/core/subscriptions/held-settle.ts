/**
 * What a release does with held records before it queues them (`resume`, serve's and
 * ingest's release after a raced resume):
 * - A record accepted for an earlier subscription of the same name (deleted, then created
 *   again) is not the current subscription's: it ends `failed`, and the new subscription,
 *   with its own events, prompt and targets, never delivers it. Records carry the
 *   `created_at` of the subscription they were accepted for (`subscription_created_at`).
 * - A record the subscription no longer takes (`update` changed its events or filters after
 *   the event arrived: `routing_changed_at`) ends `suppressed`, with a warning naming the
 *   event filter or payload filter that now refuses it: a resume runs what the subscription
 *   means now. A record held after that change (a replay) is the subscription's as it is.
 * - Of a debounced burst held while paused (records with the same subject key), only the
 *   latest is released; the others end `superseded` by it, as they would have without the
 *   pause. A replay (`replay_of`) is never part of a burst: it is released, and supersedes
 *   nothing (copies held before replays dropped their subject key still carry it).
 * - Where a later record of a burst ended (suppressed or failed) and an earlier one is
 *   released, the subject's latest-event pointer, which names the ended one, is moved to the
 *   released one by the release (held-pointers.ts): otherwise the worker would record it
 *   `superseded` by an event that never runs.
 * Records stored before `subscription_created_at` existed carry none and are taken as the
 * current subscription's.
 */
import type { EventLog, PayloadStore, SubscriptionStore } from '../ports';
import type { EventRecord, Subscription } from '../types';
import { selectSubscriptions } from '../ingest/select';
import type { Repoint } from './held-pointers';

/** The reason a held or queued record of a deleted subscription ends failed with. */
export function notThisSubscription(name: string, record: Pick<EventRecord, 'message'>, current: Subscription | undefined): string {
  const was = record.message.subscription_created_at;
  return current
    ? `Accepted for an earlier subscription named '${name}'${was ? ` (created ${was})` : ''}, which was deleted; the '${name}' created at ${current.created_at} is another one and does not take its events`
    : `No subscription named '${name}' (deleted after the event arrived)`;
}

/** True when `record` was accepted for `current` (or carries no stamp to tell). */
export function acceptedFor(record: Pick<EventRecord, 'message'>, current: Subscription | undefined): current is Subscription {
  const stamp = record.message.subscription_created_at;
  return current !== undefined && (stamp === undefined || stamp === current.created_at);
}

/** Writes a held record's end state, unless something else moved it on meanwhile (where the store can tell: false). */
async function endHeld(events: EventLog, record: EventRecord, changes: Partial<EventRecord>): Promise<boolean> {
  if (events.putIfStatus) return events.putIfStatus({ ...record, ...changes }, 'held');
  await events.update(record.event_id, record.subscription, changes);
  return true;
}

/**
 * Why `subscription` as it is now would not take the held `record`, or undefined when it
 * would. A payload kept apart (`payload_ref`) is read when `payloads` is given; otherwise
 * only the event filter is checked for it.
 */
async function noLongerTaken(record: EventRecord, subscription: Subscription, payloads: PayloadStore | undefined): Promise<string | undefined> {
  // Only what `update` changed after the event arrived: a replay held after the change was made for the subscription as it is.
  if (!subscription.routing_changed_at || subscription.routing_changed_at <= record.received_at) return undefined;
  const { message } = record;
  let payload: unknown = message.payload;
  // Read back only when a payload filter needs it.
  if (payload === undefined && message.payload_ref && payloads && subscription.filters?.length) {
    try {
      payload = JSON.parse(await payloads.get(message.payload_ref));
    } catch {
      payload = undefined;
    }
  }
  const filtersOf = payload === undefined ? { ...subscription, filters: [] } : subscription;
  const [verdict] = selectSubscriptions([filtersOf], message.source, message.event, message.action, payload ?? {}).verdicts;
  if (!verdict || verdict.matched) return undefined;
  return `${notTakenPrefix(subscription.name)} (${verdict.reason})`;
}

const notTakenPrefix = (name: string) => `Not run: the subscription '${name}' was updated while the event was held and no longer takes it`;

/** The reason in a warning of a record a release did not run (the filter that refuses it); undefined for other warnings. */
export function notTakenReason(warning: string): string | undefined {
  const match = /^Not run: the subscription '.*' was updated while the event was held and no longer takes it \((.*)\)$/s.exec(warning);
  return match?.[1];
}

const later = (a: EventRecord, b: EventRecord) => a.received_at > b.received_at || (a.received_at === b.received_at && a.event_id > b.event_id);

export interface Settled {
  /** The held records to release now. */
  release: EventRecord[];
  /** How many ended `suppressed`: the subscription no longer takes them. */
  notTaken: number;
  /** Subjects to point at a released record, while they name a record ended here (held-pointers.ts). */
  repoint: Repoint[];
}

/** The held records to release now; the others are ended here (failed, suppressed, or superseded). */
export async function settleHeld(deps: { subscriptions: SubscriptionStore; events: EventLog; payloads?: PayloadStore }, held: EventRecord[], at: string): Promise<Settled> {
  const subscriptions = new Map<string, Subscription | undefined>();
  for (const name of new Set(held.map((r) => r.subscription))) subscriptions.set(name, await deps.subscriptions.get(name));
  const subjectOf = (r: EventRecord) => (r.message.subject_key && !r.message.replay_of ? `${r.subscription}\u0000${r.message.subject_key}` : undefined);
  const current: EventRecord[] = [];
  /** The records ended here, by subject: ingest may have recorded one of them as its subject's latest. */
  const ended = new Map<string, string[]>();
  const end = async (record: EventRecord, changes: Partial<EventRecord>) => {
    const key = subjectOf(record);
    // One moved on meanwhile (released by another releaser) may run: the pointer may keep naming it.
    if ((await endHeld(deps.events, record, changes)) && key) ended.set(key, [...(ended.get(key) ?? []), record.event_id]);
  };
  let notTaken = 0;
  for (const record of held) {
    const subscription = subscriptions.get(record.subscription);
    if (acceptedFor(record, subscription)) {
      const refused = await noLongerTaken(record, subscription, deps.payloads);
      if (!refused) current.push(record);
      else {
        await end(record, { status: 'suppressed', updated_at: at, warnings: [...(record.warnings ?? []), refused] });
        notTaken += 1;
      }
    } else await end(record, { status: 'failed', updated_at: at, error: { code: 'subscription_not_found', message: notThisSubscription(record.subscription, record, subscription) } });
  }
  const latest = new Map<string, EventRecord>();
  for (const record of current) {
    const key = subjectOf(record);
    const known = key && latest.get(key);
    if (key && (!known || later(record, known))) latest.set(key, record);
  }
  const release: EventRecord[] = [];
  for (const record of current) {
    const key = subjectOf(record);
    const last = key ? latest.get(key) : undefined;
    if (last && last !== record) await endHeld(deps.events, record, { status: 'superseded', superseded_by: last.event_id, updated_at: at });
    else release.push(record);
  }
  const repoint = [...latest].flatMap(([key, record]): Repoint[] => {
    const endedIds = ended.get(key);
    return endedIds ? [{ subscription: record.subscription, subjectKey: record.message.subject_key as string, eventId: record.event_id, ended: endedIds }] : [];
  });
  return { release, notTaken, repoint };
}

/** Why a held record of a deleted subscription ended failed (`subscription_not_found`). */
export const deletedWhileHeld = (name: string) => `The subscription '${name}' was deleted while the event was held`;

/**
 * Ends `records` (held, of a deleted subscription) `failed`, each only while still held:
 * nothing will release them. Returns those this call ended (not those another writer moved on).
 */
export async function endDeletedHeld(events: EventLog, records: EventRecord[], at: string): Promise<EventRecord[]> {
  const ended: EventRecord[] = [];
  for (const record of records) {
    const changes: Partial<EventRecord> = { status: 'failed', updated_at: at, error: { code: 'subscription_not_found', message: deletedWhileHeld(record.subscription) } };
    if (await endHeld(events, record, changes)) ended.push({ ...record, ...changes });
  }
  return ended;
}

/**
 * Deletes a subscription. Its held records end `failed` at once: nothing would release
 * them (a subscription created again under the name is another one). Queued ones are
 * failed by the worker when it receives them, for the same reason. A record held by a
 * request (or a worker) that read the subscription before the delete and wrote it after
 * this scan is ended by that holder's own second read (lifecycle.ts settleAfterHold,
 * worker/process.ts). Returns how many held records ended.
 */
export async function deleteSubscription(deps: { subscriptions: SubscriptionStore; events: EventLog }, name: string, at: string): Promise<number> {
  await deps.subscriptions.delete(name);
  const held = await deps.events.listByStatus(name, 'held');
  await endDeletedHeld(deps.events, held, at);
  return held.length;
}
