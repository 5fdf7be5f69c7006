/** `pause`, `resume`, `delete` and `replay`: state changes and re-queueing. */
import { HookError } from '../../functions/core/errors';
import { newEventId } from '../../functions/core/ids';
import type { EventRecord } from '../../functions/core/types';
import { withStores, type CliContext, type Stores } from '../context';

async function requireSubscription(stores: Stores, name: string) {
  const subscription = await stores.subscriptions.get(name);
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  return subscription;
}

export async function pause(ctx: CliContext, name: string): Promise<void> {
  await withStores(ctx, async (stores) => {
    const subscription = await requireSubscription(stores, name);
    if (subscription.state === 'paused') return ctx.out(`'${name}' is already paused; nothing changed.`);
    await stores.subscriptions.put({ ...subscription, state: 'paused', updated_at: new Date().toISOString() });
    ctx.out(`Paused '${name}'. Its events are accepted and held; 'hookagent webhook resume ${name}' releases them in arrival order.`);
  });
}

/** Queues held records oldest first; returns how many. */
async function releaseHeld(stores: Stores, name: string): Promise<number> {
  const held = await stores.events.listByStatus(name, 'held');
  if (held.length === 0) return 0;
  const now = new Date().toISOString();
  await stores.events.putAll(held.map((r) => ({ ...r, status: 'queued', updated_at: now })));
  await stores.queue.send(held.map((r) => r.message));
  return held.length;
}

export async function resume(ctx: CliContext, name: string, discardHeld: boolean): Promise<void> {
  await withStores(ctx, async (stores) => {
    const subscription = await requireSubscription(stores, name);
    if (discardHeld) {
      const held = await stores.events.listByStatus(name, 'held');
      await stores.events.deleteAll(held);
      if (subscription.state === 'paused') await stores.subscriptions.put({ ...subscription, state: 'active', updated_at: new Date().toISOString() });
      return ctx.out(`Resumed '${name}'; discarded ${held.length} held event(s).`);
    }
    let released = await releaseHeld(stores, name);
    if (subscription.state === 'active' && released === 0) return ctx.out(`'${name}' is already active; nothing changed.`);
    if (subscription.state === 'paused') await stores.subscriptions.put({ ...subscription, state: 'active', updated_at: new Date().toISOString() });
    // Events that arrived while the state was changing were held too: release them as well.
    released += await releaseHeld(stores, name);
    ctx.out(`Resumed '${name}'; released ${released} held event(s) in arrival order.`);
  });
}

export async function remove(ctx: CliContext, name: string): Promise<void> {
  await withStores(ctx, (stores) => stores.subscriptions.delete(name));
  ctx.out(`Deleted subscription '${name}'. Its event log stays for 14 days.`);
}

/** A new attempt of an event: a new event id (so dedup and idempotency do not stop it), `replay_of` set. */
export function replayRecord(original: EventRecord, nowMs: number): EventRecord {
  const eventId = newEventId(nowMs);
  const at = new Date(nowMs).toISOString();
  const message = { ...original.message, event_id: eventId, received_at: at, replay_of: original.event_id };
  return {
    event_id: eventId, subscription: original.subscription, status: 'queued', source: original.source, event: original.event,
    ...(original.action ? { action: original.action } : {}), delivery_id: original.delivery_id, received_at: at, updated_at: at,
    message, attempts: 0,
  };
}

export async function replay(ctx: CliContext, eventId: string, only: string | undefined): Promise<void> {
  await withStores(ctx, async (stores) => {
    const records = (await stores.events.getEvent(eventId)).filter((r) => !only || r.subscription === only);
    if (records.length === 0) throw new HookError('event_not_found', `No event '${eventId}'${only ? ` for '${only}'` : ''} in the event log (it keeps 14 days)`);
    for (const record of records) await requireSubscription(stores, record.subscription);
    const now = Date.now();
    const copies = records.map((r) => replayRecord(r, now));
    await stores.events.putAll(copies);
    await stores.queue.send(copies.map((r) => r.message));
    for (const copy of copies) ctx.out(`Queued ${copy.event_id} for '${copy.subscription}' (a replay of ${eventId}).`);
  });
}
