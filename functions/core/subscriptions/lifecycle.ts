/**
 * Subscription lifecycle use cases over the ports, shared by the CLI, `serve`, the console
 * and Lambda: pause, resume (releasing held events in arrival order, or discarding them),
 * release, replay.
 *
 * Held events are never stranded. Ingest reads a subscription as paused, then writes a
 * `held` record; `resume` flips the state to active, then releases what is held. A request
 * whose read came before the flip but whose write lands after resume's scan would stay
 * held for ever, and on AWS ingest reads subscriptions from a 5 s cache, which widens that
 * window. So ingest, after writing held records, reads the subscription again from the
 * store (bypassing any cache) and releases its own records when it is active by then
 * (`releaseIfResumed`). Either resume's scan (after the flip) sees the record or ingest's
 * second read (after the write) sees the flip: whatever the interleaving, one of them
 * releases it. Both may: a release claim (a LeaseStore entry per record) lets only the
 * first send it, so a released event never goes out twice and a finished record is never
 * set back to `queued`.
 */
import { HookError } from '../errors';
import { newEventId } from '../ids';
import type { Clock, EventLog, EventQueue, LeaseStore, SubscriptionStore } from '../ports';
import type { EventRecord, QueueMessage, Subscription } from '../types';
import { eventRecord } from '../worker/record';

export interface LifecycleDeps {
  subscriptions: SubscriptionStore;
  events: EventLog;
  queue: EventQueue;
  clock: Clock;
  /** Release claims; without them two releasers of one held record may both queue it. */
  leases?: LeaseStore;
  /** Where the store's status index lags its writes (DynamoDB GSIs): one more release pass after this many ms. */
  indexLagMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** A release claim lasts as long as the dedup window: a record is released once. */
const RELEASE_CLAIM_MS = 24 * 3600 * 1000;
const releaseKey = (subscription: string) => `${subscription}#release`;

export async function requireSubscription(deps: Pick<LifecycleDeps, 'subscriptions'>, name: string): Promise<Subscription> {
  const subscription = await deps.subscriptions.get(name);
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  return subscription;
}

const iso = (deps: Pick<LifecycleDeps, 'clock'>) => new Date(deps.clock.now()).toISOString();

/** Pauses; false when it was already paused. */
export async function pauseSubscription(deps: LifecycleDeps, name: string): Promise<boolean> {
  const subscription = await requireSubscription(deps, name);
  if (subscription.state === 'paused') return false;
  await deps.subscriptions.put({ ...subscription, state: 'paused', updated_at: iso(deps) });
  return true;
}

/** Messages of records just written (their records hold them): by reference where the queue can. */
export function sendRecorded(queue: EventQueue, messages: QueueMessage[]): Promise<void> {
  return queue.sendRecorded ? queue.sendRecorded(messages) : queue.send(messages);
}

/** Queues the given held records (those this caller wins the release claim for); returns them. */
export async function releaseRecords(deps: LifecycleDeps, held: EventRecord[]): Promise<EventRecord[]> {
  const mine: EventRecord[] = [];
  for (const record of held) {
    if (record.status !== 'held') continue;
    const won = deps.leases
      ? await deps.leases.acquire(record.event_id, releaseKey(record.subscription), `release-${deps.clock.now()}-${Math.random()}`, RELEASE_CLAIM_MS)
      : true;
    if (won) mine.push(record);
  }
  if (mine.length === 0) return [];
  const now = iso(deps);
  await deps.events.putAll(mine.map((r) => ({ ...r, status: 'queued', updated_at: now })));
  await sendRecorded(deps.queue, mine.map((r) => r.message));
  return mine;
}

/** Queues a subscription's held records oldest first; returns how many. */
export async function releaseHeld(deps: LifecycleDeps, name: string): Promise<number> {
  return (await releaseRecords(deps, await deps.events.listByStatus(name, 'held'))).length;
}

export type ResumeResult =
  | { kind: 'discarded'; discarded: number }
  | { kind: 'unchanged' }
  | { kind: 'resumed'; released: number };

export async function resumeSubscription(deps: LifecycleDeps, name: string, options: { discardHeld?: boolean } = {}): Promise<ResumeResult> {
  const subscription = await requireSubscription(deps, name);
  if (options.discardHeld) {
    const held = await deps.events.listByStatus(name, 'held');
    await deps.events.deleteAll(held);
    if (subscription.state === 'paused') await deps.subscriptions.put({ ...subscription, state: 'active', updated_at: iso(deps) });
    return { kind: 'discarded', discarded: held.length };
  }
  let released = await releaseHeld(deps, name);
  if (subscription.state === 'active' && released === 0) return { kind: 'unchanged' };
  if (subscription.state === 'paused') await deps.subscriptions.put({ ...subscription, state: 'active', updated_at: iso(deps) });
  // Events held while the state was changing: ingest releases those written after the
  // flip itself; those written before it are found here.
  released += await releaseHeld(deps, name);
  if (deps.indexLagMs && deps.indexLagMs > 0) {
    await (deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))))(deps.indexLagMs);
    released += await releaseHeld(deps, name);
  }
  return { kind: 'resumed', released };
}

/**
 * Ingest's half of the race: after writing `held` records, reads each subscription again
 * (from the store, not a cache) and releases the records of those active by now.
 * Returns the names of the subscriptions whose records were queued.
 */
export async function releaseIfResumed(deps: LifecycleDeps, held: EventRecord[]): Promise<string[]> {
  const names = [...new Set(held.map((r) => r.subscription))];
  const active = new Set<string>();
  for (const name of names) if ((await deps.subscriptions.get(name))?.state === 'active') active.add(name);
  if (active.size === 0) return [];
  const candidates = held.filter((r) => active.has(r.subscription));
  await releaseRecords(deps, candidates);
  // Released here or by the resume that raced us: either way the record is queued.
  return [...active];
}

/** A new attempt of an event: a new event id (so dedup and idempotency do not stop it), `replay_of` set. */
export function replayRecord(original: EventRecord, nowMs: number, status: 'queued' | 'held' = 'queued'): EventRecord {
  const eventId = newEventId(nowMs);
  const at = new Date(nowMs).toISOString();
  return eventRecord({ ...original.message, event_id: eventId, received_at: at, replay_of: original.event_id }, status, at);
}

export interface ReplayResult {
  /** The new attempts: `queued`, or `held` where the subscription is paused (resume releases them with its other held events). */
  copies: EventRecord[];
  /** Subscriptions whose record of the event is itself still held: not copied, resume delivers it (a copy would go out twice). */
  stillHeld: string[];
}

/**
 * A new attempt of each record of an event (or of one subscription's). A paused
 * subscription holds its copy, as it holds what arrives while paused; a record still
 * held is not copied at all. Throws when that leaves nothing to replay.
 */
export async function replayEvent(deps: LifecycleDeps, eventId: string, only?: string): Promise<ReplayResult> {
  const records = (await deps.events.getEvent(eventId)).filter((r) => !only || r.subscription === only);
  if (records.length === 0) throw new HookError('event_not_found', `No event '${eventId}'${only ? ` for '${only}'` : ''} in the event log (it keeps 14 days)`);
  const stillHeld = records.filter((r) => r.status === 'held').map((r) => r.subscription);
  const replayed = records.filter((r) => r.status !== 'held');
  if (replayed.length === 0) {
    const names = stillHeld.map((n) => `'${n}'`).join(', ');
    throw new HookError('event_held', `Event '${eventId}' is still held for ${names} (paused): it is delivered when you resume (hookagent webhook resume ${stillHeld[0]}); replaying it too would deliver it twice`);
  }
  const paused = new Set<string>();
  for (const record of replayed) if ((await requireSubscription(deps, record.subscription)).state === 'paused') paused.add(record.subscription);
  const now = deps.clock.now();
  let copies = replayed.map((r) => replayRecord(r, now, paused.has(r.subscription) ? 'held' : 'queued'));
  await deps.events.putAll(copies);
  const queued = copies.filter((c) => c.status === 'queued');
  if (queued.length > 0) await sendRecorded(deps.queue, queued.map((r) => r.message));
  const held = copies.filter((c) => c.status === 'held');
  if (held.length > 0) {
    // As ingest does: a resume that ran meanwhile may have missed these; release them then.
    const released = new Set(await releaseIfResumed(deps, held));
    copies = copies.map((c) => (c.status === 'held' && released.has(c.subscription) ? { ...c, status: 'queued' } : c));
  }
  return { copies, stillHeld };
}
