/**
 * Subscription lifecycle use cases over the ports, shared by the CLI, `serve`, the console
 * and Lambda: pause, resume (releasing held events in arrival order, or discarding them),
 * release (replay is in replay.ts).
 *
 * Held events are never stranded. Ingest reads a subscription as paused, then writes a
 * `held` record; `resume` flips the state to active, then releases what is held. A request
 * whose read came before the flip but whose write lands after resume's scan would stay
 * held for ever, and on AWS ingest reads subscriptions from a 5 s cache, which widens that
 * window. So ingest, after writing held records, reads the subscription again from the
 * store (bypassing any cache) and releases its own records when it is active by then
 * (`releaseIfResumed`). Either resume's scan (after the flip) sees the record or ingest's
 * second read (after the write) sees the flip: whatever the interleaving, one of them
 * releases it. The same second read ends the records of a subscription deleted meanwhile
 * (`settleAfterHold`), which delete's scan may have missed. Both may release, and a
 * release may be cut off (Ctrl-C, kill -9, a full disk):
 * - where the store can (`AtomicRelease`, the local store), a record is set `queued` and its
 *   message queued in one write, only while it is still `held`: a record is released once,
 *   and a crash leaves it held (the next resume releases it) or queued with its message;
 * - otherwise (DynamoDB and SQS) a short release claim (a LeaseStore entry per record) lets
 *   one releaser at a time handle a record; it re-reads the record, sends its message, and
 *   only then sets it `queued`, if it is still `held`. A releaser that died leaves records
 *   held whose claim expires within a minute: the next resume releases them (a message
 *   already sent may then go out twice, which the worker's lease and its finished-record
 *   check absorb). A finished record is never set back to `queued`.
 */
import { randomUUID } from 'node:crypto';
import { HookError } from '../errors';
import type { Clock, DebounceStore, EventLog, EventQueue, LeaseStore, PayloadStore, SubscriptionStore } from '../ports';
import type { EventRecord, QueueMessage, Subscription } from '../types';
import { repointLatest, repointsFor, type RepointingRelease, type RepointingStore } from './held-pointers';
import { acceptedFor, endDeletedHeld, settleHeld } from './held-settle';

export interface LifecycleDeps {
  subscriptions: SubscriptionStore;
  events: EventLog;
  queue: EventQueue;
  clock: Clock;
  /** Release claims; without them (or `release`) two releasers of one held record may both queue it. */
  leases?: LeaseStore;
  /** Atomic release (the local store): no claims needed, nothing left half done by a crash; it moves debounce pointers in the same write. */
  release?: RepointingRelease;
  /** Without `release`: debounce pointers moved off the held events a release ended (held-pointers.ts). */
  debounce?: DebounceStore & Partial<RepointingStore>;
  /** Payloads kept apart (`payload_ref`), read to check a held event against the subscription's filters as they are now. */
  payloads?: PayloadStore;
  /** Where the store's status index lags its writes (DynamoDB GSIs): one more release pass after this many ms. */
  indexLagMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A live releaser claims, re-reads, sends and marks one chunk well within this; a claim
 * whose releaser died expires after it, so its records are released by the next resume.
 */
export const RELEASE_CLAIM_MS = 60_000;
/** Records claimed, sent (one SQS batch) and marked together. */
const RELEASE_CHUNK = 10;
const releaseKey = (subscription: string) => `${subscription}#release`;

export async function requireSubscription(deps: Pick<LifecycleDeps, 'subscriptions'>, name: string): Promise<Subscription> {
  const subscription = await deps.subscriptions.get(name);
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  return subscription;
}

const iso = (deps: Pick<LifecycleDeps, 'clock'>) => new Date(deps.clock.now()).toISOString();

/** A change that lost this many races in a row to other writers gives up and says so. */
const CHANGE_ATTEMPTS = 5;

/** Now, but always after the version it replaces: putIf tells versions apart by `updated_at`. */
function nextUpdatedAt(nowMs: number, previous: string): string {
  const after = Date.parse(previous) + 1;
  return new Date(Number.isNaN(after) ? nowMs : Math.max(nowMs, after)).toISOString();
}

/**
 * Read-modify-write of one subscription that loses no other change (the CLI, the console
 * and serve may change one at the same moment): reads it, applies `change` (undefined:
 * nothing to change) and writes the result only while the store still holds the version
 * read; when another change landed in between, reads again and applies `change` to that.
 * `at` is the new `updated_at`. Returns the version the change was applied to, and the
 * one written.
 */
export async function changeSubscription(
  deps: Pick<LifecycleDeps, 'subscriptions' | 'clock'>, name: string, change: (current: Subscription, at: string) => Subscription | undefined,
): Promise<{ before: Subscription; after?: Subscription }> {
  for (let attempt = 1; ; attempt++) {
    const before = await requireSubscription(deps, name);
    const at = nextUpdatedAt(deps.clock.now(), before.updated_at);
    const next = change(before, at);
    if (!next) return { before };
    const after: Subscription = { ...next, updated_at: at };
    if (await deps.subscriptions.putIf(after, before)) return { before, after };
    if (attempt === CHANGE_ATTEMPTS) {
      throw new HookError('store_busy', `Subscription '${name}' was changed by others ${CHANGE_ATTEMPTS} times while this command ran, so this command changed nothing: run it again`);
    }
  }
}

export interface PauseResult {
  /** False when it was already paused. */
  paused: boolean;
  /** Held records that still carried an expiry (written on AWS by an earlier version), now kept until resume. */
  kept: number;
}

/**
 * Pauses, and keeps what the subscription holds: held records written on AWS by an earlier
 * version carry the events table's TTL (14 days after arrival), which would delete them
 * during a longer pause. Also when it was paused already: pausing again keeps those of a
 * pause begun before the upgrade.
 */
export async function pauseAndKeepHeld(deps: LifecycleDeps, name: string): Promise<PauseResult> {
  const { after } = await changeSubscription(deps, name, (s) => (s.state === 'paused' ? undefined : { ...s, state: 'paused' }));
  return { paused: after !== undefined, kept: (await deps.events.keepHeld?.(name)) ?? 0 };
}

/** As pauseAndKeepHeld; false when it was already paused. */
export async function pauseSubscription(deps: LifecycleDeps, name: string): Promise<boolean> {
  return (await pauseAndKeepHeld(deps, name)).paused;
}

const activate = (s: Subscription): Subscription | undefined => (s.state === 'active' ? undefined : { ...s, state: 'active' });

/** Messages of records just written (their records hold them): by reference where the queue can. */
export function sendRecorded(queue: EventQueue, messages: QueueMessage[]): Promise<void> {
  return queue.sendRecorded ? queue.sendRecorded(messages) : queue.send(messages);
}

interface Release {
  /** The records this caller queued, as now stored. */
  released: EventRecord[];
  /** Held records another releaser holds the claim for (it is running, or died less than a minute ago). */
  claimedElsewhere: number;
  /** Held records ended `suppressed`: the subscription, updated while they were held, no longer takes them. */
  notTaken: number;
}

/** Queues the given held records (those still held, and this caller wins the release claim for); returns them. */
export async function releaseRecords(deps: LifecycleDeps, held: EventRecord[]): Promise<EventRecord[]> {
  return (await release(deps, held)).released;
}

/** `holder`: one per resume, so its later passes do not count its own claims as another's. */
async function release(deps: LifecycleDeps, held: EventRecord[], holder = `release-${randomUUID()}`): Promise<Release> {
  const at = iso(deps);
  const { release: candidates, notTaken, repoint } = await settleHeld(deps, held.filter((r) => r.status === 'held'), at);
  if (candidates.length === 0) return { released: [], claimedElsewhere: 0, notTaken };
  if (deps.release) return { released: await deps.release.releaseHeld(candidates, at, repoint), claimedElsewhere: 0, notTaken };
  const result: Release = { released: [], claimedElsewhere: 0, notTaken };
  for (let i = 0; i < candidates.length; i += RELEASE_CHUNK) {
    const mine: EventRecord[] = [];
    for (const record of candidates.slice(i, i + RELEASE_CHUNK)) {
      if (deps.leases && !(await deps.leases.acquire(record.event_id, releaseKey(record.subscription), holder, RELEASE_CLAIM_MS))) {
        result.claimedElsewhere += 1;
        continue;
      }
      // As it is now: the status index may trail, and an earlier releaser may have finished with it.
      const current = await deps.events.get(record.event_id, record.subscription);
      if (current?.status === 'held') mine.push(current);
    }
    if (mine.length === 0) continue;
    try {
      await repointLatest(deps.debounce, repointsFor(repoint, mine));
      await sendRecorded(deps.queue, mine.map((r) => r.message));
    } catch (error) {
      // Nothing of this chunk went out (a pointer moved names a record still held, as ingest's do): a resume run again at once may take it.
      if (deps.leases) await Promise.allSettled(mine.map((r) => deps.leases?.release(r.event_id, releaseKey(r.subscription), holder)));
      throw error;
    }
    const queued = mine.map((r): EventRecord => ({ ...r, status: 'queued', updated_at: at }));
    for (const record of queued) await markQueued(deps.events, record);
    result.released.push(...queued);
  }
  return result;
}

/**
 * After its message was sent: only while still held, where the store can tell, since the
 * worker may have received it and moved the record on already.
 */
async function markQueued(events: EventLog, record: EventRecord): Promise<void> {
  if (events.putIfStatus) await events.putIfStatus(record, 'held');
  else await events.update(record.event_id, record.subscription, { status: record.status, updated_at: record.updated_at });
}

/** Queues a subscription's held records oldest first; returns how many. */
export async function releaseHeld(deps: LifecycleDeps, name: string): Promise<number> {
  return (await releaseRecords(deps, await deps.events.listByStatus(name, 'held'))).length;
}

const afterIndexLag = (deps: LifecycleDeps): Promise<void> =>
  (deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))))(deps.indexLagMs ?? 0);

/**
 * Deletes those of `held` still held. Where a release is not one atomic write (DynamoDB),
 * each record is deleted under its release claim, as a releaser handles it: a releaser that
 * read the record held and is sending its message keeps it.
 */
async function discard(deps: LifecycleDeps, held: EventRecord[]): Promise<number> {
  const leases = deps.release ? undefined : deps.leases;
  if (!leases) return deps.events.deleteHeld(held);
  const holder = `discard-${randomUUID()}`;
  let deleted = 0;
  for (let i = 0; i < held.length; i += RELEASE_CHUNK) {
    const mine: EventRecord[] = [];
    for (const record of held.slice(i, i + RELEASE_CHUNK)) {
      if (await leases.acquire(record.event_id, releaseKey(record.subscription), holder, RELEASE_CLAIM_MS)) mine.push(record);
    }
    deleted += await deps.events.deleteHeld(mine);
    // Deleted, or moved on by a releaser before the claim: nothing left to guard.
    await Promise.allSettled(mine.map((r) => leases.release(r.event_id, releaseKey(r.subscription), holder)));
  }
  return deleted;
}

export type ResumeResult =
  | { kind: 'discarded'; discarded: number }
  | { kind: 'unchanged'; claimedElsewhere?: number }
  | { kind: 'resumed'; released: number; claimedElsewhere?: number; notTaken?: number };

export async function resumeSubscription(deps: LifecycleDeps, name: string, options: { discardHeld?: boolean } = {}): Promise<ResumeResult> {
  // Active first, then released (or discarded): released while still paused, a record would
  // be held again by the worker (which holds what it receives for a paused subscription).
  // Held records written before the flip are found by the pass after it; ingest releases
  // those written after it (releaseIfResumed), and a discard deletes only what is still held.
  if (options.discardHeld) {
    await changeSubscription(deps, name, activate);
    const pass = async () => discard(deps, await deps.events.listByStatus(name, 'held'));
    let discarded = await pass();
    if (deps.indexLagMs && deps.indexLagMs > 0) {
      await afterIndexLag(deps);
      discarded += await pass();
    }
    return { kind: 'discarded', discarded };
  }
  const holder = `resume-${randomUUID()}`;
  const pass = async () => release(deps, await deps.events.listByStatus(name, 'held'), holder);
  const wasActive = (await changeSubscription(deps, name, activate)).after === undefined;
  // Counted once each, over the passes.
  const releasedIds = new Set<string>();
  let notTaken = 0;
  const count = (result: Release) => {
    for (const record of result.released) releasedIds.add(record.event_id);
    notTaken += result.notTaken;
    return result;
  };
  let last = count(await pass());
  const released = () => releasedIds.size;
  // Held records claimed by another releaser (one interrupted less than a minute ago): said, so "unchanged" is not misread.
  const claimed = () => (last.claimedElsewhere > 0 ? { claimedElsewhere: last.claimedElsewhere } : {});
  if (wasActive && released() === 0) return { kind: 'unchanged', ...claimed() };
  if (deps.indexLagMs && deps.indexLagMs > 0) {
    await afterIndexLag(deps);
    last = count(await pass());
  }
  return { kind: 'resumed', released: released(), ...claimed(), ...(notTaken > 0 ? { notTaken } : {}) };
}

/** What a holder's second read did with the records it had just written `held`, by subscription. */
export interface AfterHold {
  /** Active by now: their records were queued (here, or by the resume that raced the hold). */
  released: string[];
  /** Deleted meanwhile (gone, or another subscription under the name): their records ended `failed`. */
  ended: string[];
}

/**
 * Ingest's half of the races with `resume` and `delete`: after writing `held` records,
 * reads each subscription again (from the store, not a cache). Records of one active by
 * now are released. Records of one deleted since the first read (gone, or created again:
 * `acceptedFor` is false) end `failed` as `delete` ends held records: its scan may have run
 * before they were written, and nothing would ever release them. Either delete's scan
 * (after the removal) sees a record or this read (after the write) sees the removal.
 */
export async function settleAfterHold(deps: LifecycleDeps, held: EventRecord[]): Promise<AfterHold> {
  const current = new Map<string, Subscription | undefined>();
  for (const name of new Set(held.map((r) => r.subscription))) current.set(name, await deps.subscriptions.get(name));
  const gone = held.filter((r) => !acceptedFor(r, current.get(r.subscription)));
  const kept = held.filter((r) => !gone.includes(r));
  if (gone.length > 0) await endDeletedHeld(deps.events, gone, iso(deps));
  const candidates = kept.filter((r) => current.get(r.subscription)?.state === 'active');
  if (candidates.length > 0) await releaseRecords(deps, candidates);
  const names = (records: EventRecord[]) => [...new Set(records.map((r) => r.subscription))];
  // Released here or by the resume that raced us: either way the record is queued.
  return { released: names(candidates), ended: names(gone) };
}

/** settleAfterHold; returns the names of the subscriptions whose records were queued. */
export async function releaseIfResumed(deps: LifecycleDeps, held: EventRecord[]): Promise<string[]> {
  return (await settleAfterHold(deps, held)).released;
}
