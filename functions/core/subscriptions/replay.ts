/** Replaying an event: a new attempt of each of its records, held where the subscription is paused. */
import { HookError } from '../errors';
import { newEventId } from '../ids';
import type { EventRecord, Subscription } from '../types';
import { eventRecord } from '../worker/record';
import { releaseIfResumed, requireSubscription, sendRecorded, type LifecycleDeps } from './lifecycle';

/**
 * A new attempt of an event: a new event id (so dedup and idempotency do not stop it),
 * `replay_of` set, and no debounce subject: a replay is never debounced, neither by the
 * worker's gate nor by a resume's settling of held events (held-settle.ts).
 */
export function replayRecord(original: EventRecord, nowMs: number, status: 'queued' | 'held' = 'queued', subscriptionCreatedAt?: string): EventRecord {
  const eventId = newEventId(nowMs);
  const at = new Date(nowMs).toISOString();
  // A replay is for the subscription as it is now (one created again under the name takes it).
  const stamp = subscriptionCreatedAt ? { subscription_created_at: subscriptionCreatedAt } : {};
  const { subject_key: _subject, ...message } = original.message;
  return eventRecord({ ...message, event_id: eventId, received_at: at, replay_of: original.event_id, ...stamp }, status, at);
}

export interface ReplayResult {
  /** The new attempts: `queued`, or `held` where the subscription is paused (resume releases them with its other held events). */
  copies: EventRecord[];
  /** Subscriptions whose record of the event is itself still held: not copied, resume delivers it (a copy would go out twice). */
  stillHeld: string[];
}

/** `original`'s new attempt for `subscription` as it is now: held while it is paused. */
export function copyFor(original: EventRecord, subscription: Subscription, nowMs: number): EventRecord {
  return replayRecord(original, nowMs, subscription.state === 'paused' ? 'held' : 'queued', subscription.created_at);
}

/**
 * Writes new attempts and queues those not held. A held one is released at once when its
 * subscription was resumed meanwhile (a resume that ran before the write missed it), as
 * ingest does. Returns the copies as they now are.
 */
export async function startCopies(deps: LifecycleDeps, copies: EventRecord[]): Promise<EventRecord[]> {
  await deps.events.putAll(copies);
  const queued = copies.filter((c) => c.status === 'queued');
  if (queued.length > 0) {
    try {
      await sendRecorded(deps.queue, queued.map((r) => r.message));
    } catch (error) {
      await withdraw(deps, copies);
      throw error;
    }
  }
  const held = copies.filter((c) => c.status === 'held');
  if (held.length === 0) return copies;
  const released = new Set(await releaseIfResumed(deps, held));
  return copies.map((c) => (c.status === 'held' && released.has(c.subscription) ? { ...c, status: 'queued' } : c));
}

/**
 * A replay whose queue send failed is no replay (the user is told to run it again): its
 * copies go, as ingest withdraws records whose send failed. Otherwise each would show
 * `queued` for 14 days with nothing to run it, and each retry would add one. A copy a
 * worker already started (a batch the queue partly took) stays; the held ones were written
 * just now and nothing has released them. Best effort: the send's error is what is said.
 */
async function withdraw(deps: LifecycleDeps, copies: EventRecord[]): Promise<void> {
  const key = (c: EventRecord) => ({ event_id: c.event_id, subscription: c.subscription });
  await Promise.all([
    deps.events.deleteUnstarted(copies.filter((c) => c.status === 'queued').map(key)),
    deps.events.deleteAll(copies.filter((c) => c.status === 'held').map(key)),
  ]).catch(() => undefined);
}

/**
 * What runs the event for `only` when only other subscriptions took it (`stored`: one of
 * their records): the request that stored it, run for `only` as `replay req_…` runs it
 * (replay-request.ts). Undefined when that request is not found: the refusal stands.
 */
export type NotTakenReplay = (stored: EventRecord, only: string) => Promise<ReplayResult | undefined>;

/**
 * A new attempt of each record of an event (or of one subscription's). A paused
 * subscription holds its copy, as it holds what arrives while paused; a record still
 * held is not copied at all. Throws when that leaves nothing to replay.
 */
export async function replayEvent(deps: LifecycleDeps, eventId: string, only?: string, notTaken?: NotTakenReplay): Promise<ReplayResult> {
  const all = await deps.events.getEvent(eventId);
  const records = all.filter((r) => !only || r.subscription === only);
  if (records.length === 0) {
    const instead = only !== undefined && all[0] && notTaken ? await notTaken(all[0], only) : undefined;
    if (instead) return instead;
    throw noRecord(eventId, only, all.length > 0);
  }
  const stillHeld = records.filter((r) => r.status === 'held').map((r) => r.subscription);
  const replayed = records.filter((r) => r.status !== 'held');
  if (replayed.length === 0) {
    const names = stillHeld.map((n) => `'${n}'`).join(', ');
    throw new HookError('event_held', `Event '${eventId}' is still held for ${names} (paused): it is delivered when you resume (hookagent webhook resume ${stillHeld[0]}); replaying it too would deliver it twice`);
  }
  const current = new Map<string, Subscription>();
  for (const record of replayed) current.set(record.subscription, await requireSubscription(deps, record.subscription));
  const now = deps.clock.now();
  const copies = await startCopies(deps, replayed.map((r) => copyFor(r, current.get(r.subscription) as Subscription, now)));
  return { copies, stillHeld };
}

/** Nothing to replay; `taken`: the event is stored for other subscriptions (`only` did not take it). */
function noRecord(eventId: string, only: string | undefined, taken: boolean): HookError {
  if (!only || !taken) return new HookError('event_not_found', `No event '${eventId}'${only ? ` for '${only}'` : ''} in the event log (it keeps 14 days)`);
  return new HookError('event_not_found', `'${only}' did not take event '${eventId}' (other subscriptions did), so it has no record of it to replay. If its filters turned the request away, 'hookagent webhook events ${only} --status filtered' lists that request's req_… id, and 'hookagent webhook replay req_… --subscription ${only}' runs it for '${only}' once its filters take it`);
}
