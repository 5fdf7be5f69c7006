/** `pause`, `resume`, `delete` and `replay`: the lifecycle use cases (functions/core/subscriptions/lifecycle.ts) with CLI messages. */
import { systemClock } from '../../functions/core/ports';
import { pauseAndKeepHeld, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { replayEvent, type NotTakenReplay, type ReplayResult } from '../../functions/core/subscriptions/replay';
import { replayRequest } from '../../functions/core/subscriptions/replay-request';
import { deleteSubscription } from '../../functions/core/subscriptions/held-settle';
import { withStores, type CliContext, type Stores } from '../context';
import { asInvoked } from '../invocation';
import { findEventRequest, findRequest, isRequestId, refuseRequestReplay, requestNotFound } from './request-entry';

export { replayRecord } from '../../functions/core/subscriptions/replay';

/** On AWS the event log's status index trails its writes by a moment: resume makes one more pass after it. */
const AWS_INDEX_LAG_MS = 2_000;

const lifecycle = (stores: Stores): LifecycleDeps => ({
  subscriptions: stores.subscriptions, events: stores.events, queue: stores.queue, clock: systemClock,
  ...(stores.leases ? { leases: stores.leases } : {}), ...(stores.release ? { release: stores.release } : {}),
  ...(stores.payloads ? { payloads: stores.payloads } : {}), ...(stores.debounce ? { debounce: stores.debounce } : {}),
  ...(stores.where.startsWith('the AWS') ? { indexLagMs: AWS_INDEX_LAG_MS } : {}),
});

/** Held events whose release claim another releaser holds: running now, or cut off less than a minute ago (its claims then expire). */
function claimedNote(name: string, count: number | undefined): string {
  return count ? `\n${count} held event(s) are being released by another resume, or by one interrupted less than a minute ago; if they are still held in a minute, run 'hookagent webhook resume ${name}' again.` : '';
}

export async function pause(ctx: CliContext, name: string): Promise<void> {
  await withStores(ctx, async (stores) => {
    const { paused, kept } = await pauseAndKeepHeld(lifecycle(stores), name);
    // Held records written on AWS by an earlier version carried a 14-day expiry: said, so the change is seen.
    const keptNote = kept > 0 ? `\nKept ${kept} held event(s) from an earlier version that would have expired; they stay held until resume.` : '';
    if (!paused) return ctx.out(`'${name}' is already paused${kept > 0 ? '' : '; nothing changed'}.${keptNote}`);
    ctx.out(asInvoked(`Paused '${name}'. Its events are accepted and held; 'hookagent webhook resume ${name}' releases them in arrival order.${keptNote}`));
  });
}

export async function resume(ctx: CliContext, name: string, discardHeld: boolean): Promise<void> {
  await withStores(ctx, async (stores) => {
    const result = await resumeSubscription(lifecycle(stores), name, { discardHeld });
    if (result.kind === 'discarded') return ctx.out(`Resumed '${name}'; discarded ${result.discarded} held event(s).`);
    if (result.kind === 'unchanged') return ctx.out(asInvoked(`'${name}' is already active; nothing changed.${claimedNote(name, result.claimedElsewhere)}`));
    const notTaken = result.notTaken
      ? `\n${result.notTaken} held event(s) were not run: the subscription, updated while they were held, no longer takes them ('hookagent webhook events ${name} --status suppressed' lists them).`
      : '';
    ctx.out(asInvoked(`Resumed '${name}'; released ${result.released} held event(s) in arrival order.${notTaken}${claimedNote(name, result.claimedElsewhere)}`));
  });
}

export async function remove(ctx: CliContext, name: string): Promise<void> {
  const ended = await withStores(ctx, (stores) => deleteSubscription(stores, name, new Date(systemClock.now()).toISOString()));
  const held = ended > 0 ? ` ${ended} held event(s) ended failed (a subscription created again as '${name}' does not take them).` : '';
  ctx.out(`Deleted subscription '${name}'. Its event log stays for 14 days.${held}`);
}

/** `replay req_…`: the request-log entry's request, for a subscription whose filters turned it away (replay-request.ts). */
async function replayRequestEntry(stores: Stores, id: string, only: string | undefined): Promise<ReplayResult> {
  const entry = await findRequest(stores, id);
  if (!entry) throw requestNotFound(id);
  if (!entry.event_id) throw refuseRequestReplay(entry);
  return replayRequest(lifecycle(stores), entry, only);
}

/** `replay evt_… --subscription X` for an X that did not take the event: the request that stored it, run for X as `replay req_…` runs it. */
const eventRequestReplay = (stores: Stores, deps: LifecycleDeps): NotTakenReplay => async (stored, only) => {
  const entry = await findEventRequest(stores.requests, stored);
  return entry ? replayRequest(deps, entry, only) : undefined;
};

/** `id`: an event id, or a request-log id (`req_…`); the console's replay runs this too. */
export async function replay(ctx: CliContext, id: string, only: string | undefined): Promise<void> {
  await withStores(ctx, async (stores) => {
    const deps = lifecycle(stores);
    const { copies, stillHeld } = isRequestId(id) ? await replayRequestEntry(stores, id, only) : await replayEvent(deps, id, only, eventRequestReplay(stores, deps));
    for (const copy of copies) {
      const of = copy.message.replay_of === id ? id : `${id}, from its stored event ${copy.message.replay_of}`;
      ctx.out(asInvoked(copy.status === 'held'
        ? `Held ${copy.event_id} for '${copy.subscription}' (a replay of ${of}): '${copy.subscription}' is paused; 'hookagent webhook resume ${copy.subscription}' releases it.`
        : `Queued ${copy.event_id} for '${copy.subscription}' (a replay of ${of}).`));
    }
    for (const name of stillHeld) ctx.out(asInvoked(`Not replayed for '${name}': the event is still held there (paused); 'hookagent webhook resume ${name}' delivers it.`));
  });
}
