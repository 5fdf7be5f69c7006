/**
 * Accepting a request that passed every check (DESIGN §2.1 steps 7–9): claim its delivery
 * id, record the event once per matched subscription (held for paused ones), queue it,
 * answer 202. Three ways, by what the stores can do:
 * - `AtomicAccept` (the local store): a new delivery id's claim, committed, with the
 *   records and messages (and debounced ones' latest-event pointers) in one durable
 *   write; no pending claim ever exists. (The pointers of events that are not delayed,
 *   held ones and those of debounce.ts's kept pointer, are written after it: `finish`.)
 * - `DedupStore.claimWithRecords` (DynamoDB's TransactWriteItems): claim and records in one
 *   write, then the queue send, then the commit, which the request log writes with its
 *   entry where it can (`RequestLog.recordAndCommit`): three calls instead of five.
 * - Otherwise: claim, records, queue send, commit.
 * What a crash leaves between any two writes (the README's "Crash windows"):
 * - before the claim: nothing; the sender's retry is a new request;
 * - claim and records written, not queued: the claim is pending; a retry within the lease
 *   answers 503 `in_progress`, after it takes the claim over (`resumed`) and queues the
 *   recorded messages; without a retry the event ends `abandoned`, never answered 2xx;
 * - queued, not committed: the same, but the retry queues a second copy, which the worker's
 *   lease and finished records absorb (one delivery);
 * - committed, not answered: the retry answers 200 `duplicate`.
 * A claim write that failed may still have happened (a timeout), so it is never released:
 * that is the second case. A failed write of a large payload (before any record) releases
 * the claim (503). A failed queue send withdraws the records no worker has started
 * and releases the claim (503), or finds a worker has them and accepts (`withdraw`): if the
 * process dies before that, the second case again.
 */
import type { RawBody } from '../auth/signatures';
import { describeError } from '../errors';
import type { Payload } from '../events/classify';
import { newEventId } from '../ids';
import type { Claim } from '../ports';
import { sendRecorded, settleAfterHold } from '../subscriptions/lifecycle';
import type { EventRecord, Source, Subscription } from '../types';
import { heldPointers, recordAsLatest, sendDebounced } from './debounce';
import { planFor, type Ids, type Plan } from './plan';
import { fitsIn, inlineSafe } from './raw-payload';
import { MESSAGES, errors, reply, type Reply } from './responses';
import type { RequestTrace } from './request-log';
import type { IngestDeps } from './service';

/** Delivery ids are remembered this long (DESIGN §2.1). */
export const DEDUP_TTL_SECONDS = 24 * 3600;
/**
 * A delivery id's claim key: per endpoint, and a custom endpoint's per subscription (its
 * `created_at`), so one created again under the name claims afresh what the deleted one
 * took. Claims are read back by this key too (abandoned.ts).
 */
export function dedupKeyFor(source: Source, name: string | undefined, createdAt: string | undefined, deliveryId: string): string {
  return `${source === 'custom' ? `custom/${name}${createdAt ? `@${createdAt}` : ''}` : source}#${deliveryId}`;
}
/** See IngestDeps.claimLeaseMs. */
export const DEFAULT_CLAIM_LEASE_MS = 60_000;
/** Payloads above this travel through the PayloadStore, not inside the SQS message. */
export const INLINE_PAYLOAD_LIMIT = 200 * 1024;

export interface Accepted {
  source: Source;
  name: string | undefined;
  event: string;
  action: string | undefined;
  deliveryId: string | undefined;
  payload: Payload;
  body: RawBody;
  /** The body as text: the JSON `payload` was parsed from. */
  text: string;
}

export async function accept(deps: IngestDeps, input: Accepted, matched: Subscription[], trace: RequestTrace): Promise<Reply> {
  const { logger } = deps;
  const now = deps.clock.now();
  const fresh = newEventId(now);
  const ids: Ids = { eventId: fresh, deliveryId: input.deliveryId ?? fresh, receivedAt: new Date(now).toISOString() };
  const { deliveryId } = ids;
  // A custom endpoint reaches one subscription: `matched` is it.
  const dedupKey = input.deliveryId === undefined ? undefined : dedupKeyFor(input.source, input.name, matched[0]?.created_at, input.deliveryId);
  const staleBefore = Math.max(now - (deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS), deps.claimsAbandonedBefore ?? 0);
  const claimOptions = { eventId: ids.eventId, ttlSeconds: DEDUP_TTL_SECONDS, staleBefore };
  // Bodies that cannot be re-serialised safely travel as the sender's raw bytes (raw-payload.ts).
  const inline = fitsIn(input.body, INLINE_PAYLOAD_LIMIT) && inlineSafe(input.payload, input.text);

  let claim: Claim | undefined;
  let plan: Plan | undefined;
  /** The records are written (with the claim). */
  let recorded = false;
  if (inline && (deps.atomic || (dedupKey && deps.dedup.claimWithRecords))) {
    plan = planFor(deps, input, matched, ids, new Map(), undefined);
    if (deps.atomic) {
      claim = await deps.atomic.acceptNew({ ...(dedupKey ? { dedupKey } : {}), claim: claimOptions, records: plan.records, messages: plan.messages, delayed: plan.delayed });
      if (claim.kind === 'new') return finish(deps, input, plan, ids, trace);
    } else if (dedupKey && deps.dedup.claimWithRecords) {
      recorded = await deps.dedup.claimWithRecords(dedupKey, claimOptions, plan.records);
      if (recorded) claim = { kind: 'new' };
    }
  }
  // Not written together: the key was claimed before (or the store cannot): ask what the claim says.
  if (dedupKey && !claim) claim = await deps.dedup.claim(dedupKey, claimOptions);
  if (claim?.kind === 'duplicate') {
    logger.info('duplicate delivery', { ...(claim.eventId ? { event_id: claim.eventId } : {}), source: input.source, event: input.event, delivery_id: deliveryId });
    return reply(200, { status: 'duplicate', delivery_id: deliveryId });
  }
  if (claim?.kind === 'in_progress') {
    logger.info('delivery id in progress in another request', { source: input.source, event: input.event, delivery_id: deliveryId });
    return errors.inProgress();
  }
  // Records an earlier request for this delivery id made before it died, by subscription.
  let earlier = new Map<string, EventRecord>();
  if (claim?.kind === 'resumed') {
    ids.eventId = claim.eventId;
    plan = undefined;
    earlier = new Map((await deps.events.getEvent(ids.eventId)).map((r) => [r.subscription, r]));
    logger.warn('resuming an event whose first request died before it was queued', { event_id: ids.eventId, delivery_id: deliveryId });
  }

  try {
    if (!plan) {
      const payloadRef = inline ? undefined : await deps.payloads.put(ids.eventId, input.text);
      plan = planFor(deps, input, matched, ids, earlier, payloadRef);
    }
    if (!recorded && plan.records.length > 0) await deps.events.putAll(plan.records);
    // Every message is a stored record's (this request's, or the dead request's it resumes): by reference where the queue can.
    if (plan.messages.length > 0) await sendRecorded(deps.queue, plan.messages);
    if (plan.delayed.length > 0 && deps.debounce) await sendDebounced(deps.debounce, deps.queue, plan.delayed, logger);
  } catch (error) {
    // The payload's write (or the plan) failed: nothing was written or queued under the claim, so it is given up for the retry.
    if (!plan) await releaseClaim(deps, dedupKey);
    if (!plan || !(await withdraw(deps, plan.records, dedupKey))) throw error;
    logger.warn('the queue send failed, but it reached the queue: a worker has the event already', { event_id: ids.eventId, delivery_id: deliveryId, error: describeError(error) });
  }
  if (dedupKey) {
    // The request log writes the commit with its entry when it can (withRequestLog, right after this returns).
    if (deps.requests?.recordAndCommit) trace.commit = { key: dedupKey, eventId: ids.eventId, ttlSeconds: DEDUP_TTL_SECONDS };
    else await commitClaim(deps, dedupKey, ids);
  }
  return finish(deps, input, plan, ids, trace);
}

/**
 * After a failed write or queue send, which may have reached the queue all the same (an
 * answer lost or failed after SQS stored the message, or one entry of a batch accepted),
 * so that a worker may have the message already: only records no worker has started are
 * deleted, each checked in its delete as the worker's first write is checked for the record
 * (worker/record.ts), so never both; held ones only while still held. True when a worker
 * has every record: the event is queued, and accepted. Otherwise the claim is released
 * (503), and the sender's retry takes it over at once, queueing again only the records not
 * in a worker's hands; a message of a deleted record finds it gone and is dead-lettered.
 */
async function withdraw(deps: IngestDeps, records: EventRecord[], dedupKey: string | undefined): Promise<boolean> {
  const unstarted = records.filter((r) => r.status !== 'held');
  const held = records.filter((r) => r.status === 'held');
  const [started, heldDeleted] = await Promise.allSettled([
    unstarted.length > 0 ? deps.events.deleteUnstarted(unstarted) : Promise.resolve([]),
    held.length > 0 ? deps.events.deleteHeld(held) : Promise.resolve(0),
  ]);
  const taken = started.status === 'fulfilled' && started.value.length > 0 && started.value.length === unstarted.length;
  if (taken && heldDeleted.status === 'fulfilled' && heldDeleted.value === 0) return true;
  await releaseClaim(deps, dedupKey);
  return false;
}

/** A pending claim given up (503): the sender's retry takes it over at once, with the same event id. A failed release only leaves it to its lease. */
async function releaseClaim(deps: IngestDeps, dedupKey: string | undefined): Promise<void> {
  if (dedupKey) await deps.dedup.release(dedupKey).catch(() => undefined);
}

/**
 * After the event is stored: held records released if their subscription was resumed
 * meanwhile, or ended if it was deleted meanwhile; the log lines, the answer. An event
 * whose every subscription was deleted before its held record was written is answered as
 * one for no subscription (a custom endpoint's 404, otherwise `ignored`), never `202 held`:
 * nothing would release it.
 */
async function finish(deps: IngestDeps, input: Accepted, plan: Plan, ids: Ids, trace: RequestTrace): Promise<Reply> {
  const { records, held, queued } = plan;
  // Before a release: a held event released at once must already be its subject's latest.
  const latest = [...heldPointers(records), ...plan.latest];
  if (latest.length > 0 && deps.debounce) await recordAsLatest(deps.debounce, latest, deps.logger);
  const ended = held.length > 0 && (deps.leases || deps.release) ? await settleHeldNow(deps, records, held, queued) : new Set<string>();
  for (const record of records) {
    const fields = { event_id: ids.eventId, subscription: record.subscription, source: input.source, event: input.event, action: input.action, delivery_id: ids.deliveryId };
    if (ended.has(record.subscription)) deps.logger.warn('ended failed: the subscription was deleted while the event was held', fields);
    else deps.logger.info(record.status === 'held' ? 'held for a paused subscription' : 'queued', fields);
  }
  const base = { event: input.event, delivery_id: ids.deliveryId, event_id: ids.eventId };
  if (queued.length === 0 && held.length === 0) {
    // The event's records stay in the log (failed): the request log links to them.
    trace.eventId = ids.eventId;
    return input.source === 'custom' ? errors.subscriptionNotFound(input.name) : reply(200, { status: 'ignored', reason: MESSAGES.eventNotHandled, event: input.event });
  }
  if (queued.length === 0) return reply(202, { status: 'held', ...base, subscriptions: held });
  return reply(202, { status: 'accepted', ...base, subscriptions: queued, ...(held.length > 0 ? { held } : {}) });
}

/**
 * The event is stored and queued, so the answer is 202 even if the commit fails: a retry
 * after the lease then queues it again at worst, which the worker's idempotence absorbs.
 */
async function commitClaim(deps: IngestDeps, key: string, ids: Ids): Promise<void> {
  try {
    await deps.dedup.commit(key);
  } catch (error) {
    deps.logger.warn('the delivery id could not be marked done', { event_id: ids.eventId, delivery_id: ids.deliveryId, error: describeError(error) });
  }
}

/**
 * The subscription may have been resumed or deleted since it was read as paused: then its
 * records are released now, or ended `failed` (lifecycle.ts settleAfterHold), not stranded.
 * Moves the names in `held` and `queued` to match; returns those of the deleted ones.
 */
async function settleHeldNow(deps: IngestDeps, records: EventRecord[], held: string[], queued: string[]): Promise<Set<string>> {
  try {
    const lifecycle = {
      subscriptions: deps.subscriptions.store, events: deps.events, queue: deps.queue, clock: deps.clock, payloads: deps.payloads,
      ...(deps.leases ? { leases: deps.leases } : {}), ...(deps.release ? { release: deps.release } : {}),
      ...(deps.debounce ? { debounce: deps.debounce } : {}),
    };
    const { released, ended } = await settleAfterHold(lifecycle, records.filter((r) => r.status === 'held'));
    for (const name of [...released, ...ended]) held.splice(held.indexOf(name), 1);
    for (const name of released) {
      queued.push(name);
      deps.logger.info('released at once: the subscription was resumed meanwhile', { event_id: records[0]?.event_id, subscription: name });
    }
    return new Set(ended);
  } catch (error) {
    // Stored as held: the next resume (or `webhook resume` again) releases it.
    deps.logger.warn('could not check for a resume or delete after holding', { event_id: records[0]?.event_id, error: describeError(error) });
    return new Set();
  }
}
