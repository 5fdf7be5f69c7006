/**
 * The ingest path of DESIGN §2.1, transport-free: checks a request in the contract's
 * order, each check answering at once, then holds or enqueues it. Adapters (the Lambda
 * handler, the local server) turn their requests into `InboundRequest`s.
 */
import type { Config } from '../config/types';
import { authenticate } from '../auth/authenticate';
import type { RawBody } from '../auth/signatures';
import { describeError, isHookError } from '../errors';
import { classifyEvent, missingEventMessage, type Payload } from '../events/classify';
import { causedByHookagent } from '../events/loop-guard';
import { newEventId } from '../ids';
import type { Logger } from '../log';
import type { Clock, DebounceStore, DedupStore, EventLog, EventQueue, LeaseStore, PayloadStore, RequestLog } from '../ports';
import { releaseIfResumed } from '../subscriptions/lifecycle';
import { SUBSCRIPTION_NAME_PATTERN, type EventRecord, type QueueMessage, type Source, type Subscription } from '../types';
import { compileAllowList, isAllowed } from './ip-allowlist';
import { debouncePlan, sendDebounced } from './debounce';
import { withRequestLog, type RequestTrace } from './request-log';
import { MESSAGES, errors, reply, type Reply } from './responses';
import { allowedMethod, parseRoute } from './routes';
import { selectSubscriptions } from './select';
import type { SubscriptionCache } from './subscription-cache';
import { inlineSafe } from './raw-payload';
import { eventRecord } from '../worker/record';
import { rememberMessageJson } from '../message-json';

export interface InboundRequest {
  method: string;
  path: string;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  body: string | undefined;
  isBase64Encoded: boolean;
  /** The connection's peer address; never taken from X-Forwarded-For. */
  sourceIp: string | undefined;
}

export interface IngestDeps {
  /** Only `webhooks` is read; its secrets must be resolved. */
  config: Pick<Config, 'webhooks'>;
  subscriptions: SubscriptionCache;
  queue: EventQueue;
  dedup: DedupStore;
  events: EventLog;
  payloads: PayloadStore;
  clock: Clock;
  logger: Logger;
  /** A pending dedup claim older than this belongs to a request that died (default: 60 s, six ingest timeouts). */
  claimLeaseMs?: number;
  /** Epoch ms: claims made before it are abandoned (serve owns its store: earlier ones belong to a process that is gone). */
  claimsAbandonedBefore?: number;
  /** Release claims: held events written after a resume are released here, once (issue 14 item 4). */
  leases?: LeaseStore;
  /** The request log (issue 17): every request and its outcome; absent = not recorded. */
  requests?: RequestLog;
  /** Debounce per subject (issue 17); absent = subscriptions' debounce is not applied. */
  debounce?: DebounceStore;
}

/** Delivery ids are remembered this long (DESIGN §2.1). */
export const DEDUP_TTL_SECONDS = 24 * 3600;
/** See IngestDeps.claimLeaseMs. */
export const DEFAULT_CLAIM_LEASE_MS = 60_000;
/** Payloads above this travel through the PayloadStore, not inside the SQS message. */
export const INLINE_PAYLOAD_LIMIT = 200 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type Ingest = (request: InboundRequest) => Promise<Reply>;

export function createIngest(deps: IngestDeps): Ingest {
  const { config, logger } = deps;
  const allowList = config.webhooks.allowed_ips ? compileAllowList(config.webhooks.allowed_ips) : undefined;
  const maxSize = config.webhooks.max_payload_size;

  const ingest = async function ingest(request: InboundRequest, trace: RequestTrace = {}): Promise<Reply> {
    const route = parseRoute(request.path);
    const method = allowedMethod(route);
    if (route.kind === 'not-found' || route.kind === 'custom-unnamed' || method === undefined) return errors.notFound();
    if (request.method.toUpperCase() !== method) return errors.methodNotAllowed(method);
    if (route.kind === 'health') return reply(200, { status: 'ok' });
    const { source, name } = route;
    trace.endpoint = source === 'custom' ? `custom/${name && /^[a-z0-9_-]{1,63}$/.test(name) ? name : '?'}` : source;

    // 1. Source address.
    if (allowList && !isAllowed(allowList, request.sourceIp)) {
      logger.warn('refused: source address not allowed', { source, source_ip: request.sourceIp });
      return errors.ipNotAllowed();
    }

    // 2. Size, counted on the decoded bytes whatever Content-Length claims.
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxSize && !request.isBase64Encoded) return errors.payloadTooLarge(maxSize);
    const raw = request.body ?? '';
    if (request.isBase64Encoded && Math.floor((raw.length * 3) / 4) - 2 > maxSize) return errors.payloadTooLarge(maxSize);
    // Text API Gateway already decoded stays a string: no copy into bytes and back.
    const body: RawBody = request.isBase64Encoded ? Buffer.from(raw, 'base64') : raw;
    if (!fitsIn(body, maxSize)) return errors.payloadTooLarge(maxSize);

    try {
      // 3. Route: a custom endpoint names a subscription.
      let custom: Subscription | undefined;
      if (source === 'custom') {
        custom = name === undefined ? undefined : await deps.subscriptions.byName(name);
        if (!custom) return errors.subscriptionNotFound(name && SUBSCRIPTION_NAME_PATTERN.test(name) ? name : undefined);
      }

      // 4. Authentication, over the raw bytes.
      const secrets = custom ? [custom.secret] : (config.webhooks[source as 'github' | 'gitlab']?.secret ?? []);
      const auth = authenticate(source, body, request.headers, secrets, deps.clock.now());
      if (!auth.ok) {
        logger.warn('refused: signature invalid', { source, subscription: custom?.name, reason: auth.reason });
        return errors.signatureInvalid();
      }

      // 5. A JSON object, as valid UTF-8.
      const parsed = parsePayload(body);
      if ('error' in parsed) return errors.invalidJson(parsed.error);
      const payload = parsed.payload;

      // 6. Event type.
      const identity = classifyEvent(source, request.headers, payload);
      if (!identity) {
        return errors.invalidEvent(missingEventMessage(source));
      }
      const { event, action } = identity;
      Object.assign(trace, { event, action, deliveryId: identity.deliveryId });
      if (source === 'github' && event === 'ping') return reply(200, { status: 'ok', event: 'ping' });
      if (causedByHookagent(payload)) {
        logger.info('ignored: event caused by a hookagent comment', { source, event, delivery_id: identity.deliveryId });
        return reply(200, { status: 'ignored', reason: 'Event caused by hookagent', event });
      }
      const candidates = custom ? [custom] : await deps.subscriptions.all();
      const { matched, routed, verdicts } = selectSubscriptions(candidates, source, event, action, payload);
      trace.candidates = verdicts;
      if (matched.length === 0 && routed > 0) {
        logger.info('ignored: filtered out by payload filters', { source, event, action, delivery_id: identity.deliveryId, subscription: custom?.name });
        return reply(200, { status: 'ignored', reason: MESSAGES.filteredOut, event });
      }
      if (matched.length === 0) {
        logger.info('ignored: no subscription handles the event', { source, event, action, subscription: custom?.name });
        return reply(200, { status: 'ignored', reason: MESSAGES.eventNotHandled, event });
      }

      // 7. Paused subscriptions hold their events; 8. dedup; 9. enqueue.
      return await accept(deps, { source, name, event, action, deliveryId: identity.deliveryId, payload, body, text: parsed.text }, matched, trace);
    } catch (error) {
      // Whatever failed, nothing was accepted and the sender may retry: answer 503, never 500.
      const expected = isHookError(error) && error.code === 'unavailable';
      logger.error(expected ? 'unavailable: a store or the queue failed' : 'unexpected failure', { source, error: describeError(error) });
      return errors.unavailable();
    }
  };
  return deps.requests ? withRequestLog(ingest, deps.requests, deps.clock, logger) : (request: InboundRequest) => ingest(request);
}

/** Whether the body is at most `limit` bytes; text is only measured when its length leaves doubt. */
function fitsIn(body: RawBody, limit: number): boolean {
  if (typeof body !== 'string') return body.length <= limit;
  // A UTF-16 code unit takes 1 to 3 bytes in UTF-8.
  if (body.length > limit) return false;
  return body.length * 3 <= limit || Buffer.byteLength(body, 'utf8') <= limit;
}

function parsePayload(body: RawBody): { payload: Payload; text: string } | { error: string } {
  let text: string;
  try {
    text = typeof body === 'string' ? body : utf8.decode(body);
  } catch {
    return { error: 'not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'malformed JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: `a JSON ${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value}, not an object` };
  }
  return { payload: value as Payload, text };
}

interface Accepted {
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

/** What one request writes and sends: its records, and the messages of those not held. */
interface Outgoing {
  records: EventRecord[];
  messages: QueueMessage[];
  delayed: Array<{ message: QueueMessage; delaySeconds: number }>;
  queued: string[];
  held: string[];
}

/**
 * Dedup, records, queue. Where the dedup store can (`claimWithRecords`, DynamoDB's
 * TransactWriteItems), a new claim and the event's records are one write, and where the
 * request log can (`recordAndCommit`), the commit shares its write: an accepted event then
 * costs three calls (claim + records, queue send, commit + request log) instead of five.
 * What a crash leaves between any two of them (the README's "Crash windows"):
 * - before the claim: nothing; the sender's retry is a new request;
 * - claim and records written, not queued: the claim is pending; a retry within the lease
 *   answers 503 `in_progress`, after it takes the claim over (`resumed`) and queues the
 *   recorded messages; without a retry the event ends `abandoned`, never answered 2xx;
 * - queued, not committed: the same, but the retry queues a second copy, which the worker's
 *   lease and finished records absorb (one delivery);
 * - committed, not answered: the retry answers 200 `duplicate`.
 * A claim write that failed may still have happened (a timeout), so it is never released:
 * that is the second case. A failed queue send releases the claim and deletes the records
 * (503): if the process dies before that, the second case again.
 */
async function accept(deps: IngestDeps, input: Accepted, matched: Subscription[], trace: RequestTrace): Promise<Reply> {
  const { logger } = deps;
  const now = deps.clock.now();
  let eventId = newEventId(now);
  const deliveryId = input.deliveryId ?? eventId;
  const dedupKey = input.deliveryId === undefined ? undefined : `${input.source === 'custom' ? `custom/${input.name}` : input.source}#${input.deliveryId}`;
  const receivedAt = new Date(now).toISOString();
  // Bodies that cannot be re-serialised safely travel as the sender's raw bytes (raw-payload.ts).
  const inline = fitsIn(input.body, INLINE_PAYLOAD_LIMIT) && inlineSafe(input.payload, input.body);

  // Records an earlier request for this delivery id made before it died, by subscription.
  let earlier = new Map<string, EventRecord>();
  let out: Outgoing | undefined;
  let recorded = false;
  if (dedupKey) {
    const staleBefore = Math.max(now - (deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS), deps.claimsAbandonedBefore ?? 0);
    const options = { eventId, ttlSeconds: DEDUP_TTL_SECONDS, staleBefore };
    if (inline && deps.dedup.claimWithRecords) {
      out = outgoing(deps, input, matched, eventId, deliveryId, receivedAt, undefined, earlier);
      recorded = await deps.dedup.claimWithRecords(dedupKey, options, out.records);
    }
    // Not written together: the key was claimed before (or the store cannot): ask what the claim says.
    const claim = recorded ? { kind: 'new' as const } : await deps.dedup.claim(dedupKey, options);
    if (claim.kind === 'duplicate') {
      logger.info('duplicate delivery', { source: input.source, event: input.event, delivery_id: deliveryId });
      return reply(200, { status: 'duplicate', delivery_id: deliveryId });
    }
    if (claim.kind === 'in_progress') {
      logger.info('delivery id in progress in another request', { source: input.source, event: input.event, delivery_id: deliveryId });
      return errors.inProgress();
    }
    if (claim.kind === 'resumed') {
      eventId = claim.eventId;
      out = undefined;
      earlier = new Map((await deps.events.getEvent(eventId)).map((r) => [r.subscription, r]));
      logger.warn('resuming an event whose first request died before it was queued', { event_id: eventId, delivery_id: deliveryId });
    }
  }

  let records: EventRecord[] = out?.records ?? [];
  try {
    if (!out) {
      const payloadRef = inline ? undefined : await deps.payloads.put(eventId, input.text);
      out = outgoing(deps, input, matched, eventId, deliveryId, receivedAt, payloadRef, earlier);
      records = out.records;
    }
    if (!recorded && records.length > 0) await deps.events.putAll(records);
    if (out.messages.length > 0) await deps.queue.send(out.messages);
    if (out.delayed.length > 0 && deps.debounce) await sendDebounced(deps.debounce, deps.queue, out.delayed);
  } catch (error) {
    // Nothing was accepted: forget what this request wrote and give the delivery id up,
    // so the sender's retry is processed.
    await Promise.allSettled([
      records.length > 0 ? deps.events.deleteAll(records) : Promise.resolve(),
      dedupKey ? deps.dedup.release(dedupKey) : Promise.resolve(),
    ]);
    throw error;
  }
  const { queued, held } = out;
  if (dedupKey) {
    // The request log writes the commit with its entry when it can (withRequestLog, right after this returns).
    if (deps.requests?.recordAndCommit) trace.commit = { key: dedupKey, eventId, ttlSeconds: DEDUP_TTL_SECONDS };
    else await commitClaim(deps, dedupKey, eventId, deliveryId);
  }
  if (held.length > 0 && deps.leases) await releaseHeldIfResumed(deps, records, held, queued);

  for (const record of records) {
    logger.info(record.status === 'held' ? 'held for a paused subscription' : 'queued', {
      event_id: eventId, subscription: record.subscription, source: input.source, event: input.event,
      action: input.action, delivery_id: deliveryId,
    });
  }
  const base = { event: input.event, delivery_id: deliveryId, event_id: eventId };
  if (queued.length === 0) return reply(202, { status: 'held', ...base, subscriptions: held });
  return reply(202, { status: 'accepted', ...base, subscriptions: queued, ...(held.length > 0 ? { held } : {}) });
}

/** The records and messages of one event for its matched subscriptions (`earlier`: what a dead request recorded). */
function outgoing(
  deps: IngestDeps, input: Accepted, matched: Subscription[], eventId: string, deliveryId: string, receivedAt: string,
  payloadRef: string | undefined, earlier: Map<string, EventRecord>,
): Outgoing {
  const out: Outgoing = { records: [], messages: [], delayed: [], queued: [], held: [] };
  for (const subscription of matched) {
    const prior = earlier.get(subscription.name);
    if (prior) {
      // Recorded by the dead request: queue it again only while it may never have been
      // queued. The worker is idempotent, so a second copy of a message that did go out
      // is harmless.
      (prior.status === 'held' ? out.held : out.queued).push(subscription.name);
      if (prior.status === 'queued' || prior.status === 'abandoned') out.messages.push(prior.message);
      if (prior.status === 'abandoned') {
        // Marked abandoned while its sender waited longer than the lease: it is accepted now.
        const { error: _abandonedBecause, ...rest } = prior;
        out.records.push({ ...rest, status: 'queued', updated_at: receivedAt });
      }
      continue;
    }
    const message: QueueMessage = {
      v: 1, event_id: eventId, subscription: subscription.name, source: input.source, event: input.event,
      delivery_id: deliveryId, received_at: receivedAt,
    };
    if (input.action) message.action = input.action;
    if (payloadRef) message.payload_ref = payloadRef;
    else message.payload = input.payload;
    const paused = subscription.state === 'paused';
    const plan = deps.debounce && !paused ? debouncePlan(subscription, input.source, input.event, input.payload, eventId) : undefined;
    if (plan) message.subject_key = plan.subjectKey;
    // Complete now: its text embeds the body as received instead of re-serialising the payload.
    if (!payloadRef) rememberMessageJson(message, input.text);
    out.records.push(eventRecord(message, paused ? 'held' : 'queued', receivedAt));
    if (paused) out.held.push(subscription.name);
    else {
      if (plan) out.delayed.push({ message, delaySeconds: plan.delaySeconds });
      else out.messages.push(message);
      out.queued.push(subscription.name);
    }
  }
  return out;
}

/**
 * The event is stored and queued, so the answer is 202 even if the commit fails: a retry
 * after the lease then queues it again at worst, which the worker's idempotence absorbs.
 */
async function commitClaim(deps: IngestDeps, key: string, eventId: string, deliveryId: string): Promise<void> {
  try {
    await deps.dedup.commit(key);
  } catch (error) {
    deps.logger.warn('the delivery id could not be marked done', { event_id: eventId, delivery_id: deliveryId, error: describeError(error) });
  }
}

/** The subscription may have been resumed since it was read as paused: then its records are released now, not stranded. */
async function releaseHeldIfResumed(deps: IngestDeps, records: EventRecord[], held: string[], queued: string[]): Promise<void> {
  try {
    const lifecycle = { subscriptions: deps.subscriptions.store, events: deps.events, queue: deps.queue, clock: deps.clock, ...(deps.leases ? { leases: deps.leases } : {}) };
    for (const name of await releaseIfResumed(lifecycle, records.filter((r) => r.status === 'held'))) {
      held.splice(held.indexOf(name), 1);
      queued.push(name);
      deps.logger.info('released at once: the subscription was resumed meanwhile', { event_id: records[0]?.event_id, subscription: name });
    }
  } catch (error) {
    // Stored as held: the next resume (or `webhook resume` again) releases it.
    deps.logger.warn('could not check for a resume after holding', { event_id: records[0]?.event_id, error: describeError(error) });
  }
}
