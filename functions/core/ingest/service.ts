/**
 * The ingest path of DESIGN §2.1, transport-free: checks a request in the contract's
 * order, each check answering at once, then holds or enqueues it. Adapters (the Lambda
 * handler, the local server) turn their requests into `InboundRequest`s.
 */
import type { Config } from '../config/types';
import { authenticate } from '../auth/authenticate';
import type { RawBody } from '../auth/signatures';
import { describeError, isHookError } from '../errors';
import { classifyEvent, missingEventMessage, statedDeliveryId } from '../events/classify';
import { causedByHookagent } from '../events/loop-guard';
import type { Logger } from '../log';
import type { AtomicAccept, AtomicRelease, Clock, DebounceStore, DedupStore, EventLog, EventQueue, LeaseStore, PayloadStore, RequestLog } from '../ports';
import { SUBSCRIPTION_NAME_PATTERN, type Subscription } from '../types';
import { accept } from './accept';
import { compileAllowList, isAllowed } from './ip-allowlist';
import { withRequestLog, type RequestTrace } from './request-log';
import { MESSAGES, errors, reply, type Reply } from './responses';
import { allowedMethod, methodAllowed, parseRoute } from './routes';
import { selectSubscriptions } from './select';
import type { SubscriptionCache } from './subscription-cache';
import { fitsIn } from './raw-payload';
import { parsePayload } from './payload-body';

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
  /** A store that accepts a new event in one atomic write (the local store); absent = claim, write, commit. */
  atomic?: AtomicAccept;
  /** A store that releases held records atomically (the local store); absent = release claims (`leases`). */
  release?: AtomicRelease;
}

export { DEDUP_TTL_SECONDS, DEFAULT_CLAIM_LEASE_MS, INLINE_PAYLOAD_LIMIT } from './accept';

export type Ingest = (request: InboundRequest) => Promise<Reply>;

export function createIngest(deps: IngestDeps): Ingest {
  const { config, logger } = deps;
  const allowList = config.webhooks.allowed_ips ? compileAllowList(config.webhooks.allowed_ips) : undefined;
  const maxSize = config.webhooks.max_payload_size;

  const ingest = async function ingest(request: InboundRequest, trace: RequestTrace = {}): Promise<Reply> {
    const route = parseRoute(request.path);
    const method = allowedMethod(route);
    if (route.kind === 'not-found' || route.kind === 'custom-unnamed' || method === undefined) return errors.notFound();
    // The subscription a custom endpoint names, looked up once: it names the endpoint in the request log
    // whatever the answer, and routes the request (step 3).
    const named = route.kind === 'webhook' && route.source === 'custom' ? deps.subscriptions.byName(route.name ?? '') : undefined;
    // Known before the method is checked: a GET to /webhooks/github is logged under github, not unknown.
    if (route.kind === 'webhook') trace.endpoint = named ? await customEndpoint(named, route.name) : route.source;
    if (!methodAllowed(method, request.method)) return errors.methodNotAllowed(method);
    if (route.kind === 'health') return reply(200, { status: 'ok' });
    const { source, name } = route;

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
        custom = await named;
        if (!custom) return errors.subscriptionNotFound(name && SUBSCRIPTION_NAME_PATTERN.test(name) ? name : undefined);
      }

      // 4. Authentication, over the raw bytes.
      const secrets = custom ? [custom.secret] : (config.webhooks[source as 'github' | 'gitlab']?.secret ?? []);
      const auth = authenticate(source, body, request.headers, secrets, deps.clock.now());
      if (!auth.ok) {
        logger.warn('refused: signature invalid', { source, subscription: custom?.name, reason: auth.reason, delivery_id: statedDeliveryId(source, request.headers) });
        return errors.signatureInvalid();
      }

      // 5. A JSON object, as valid UTF-8 (or GitHub's form: payload=<JSON>).
      const parsed = parsePayload(body, request.headers['content-type']);
      if ('error' in parsed) return errors.invalidJson(parsed.error);
      const payload = parsed.payload;

      // 6. Event type.
      const identity = classifyEvent(source, request.headers, payload, auth.scheme === 'standard-webhooks');
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
        logger.info('ignored: no subscription handles the event', { source, event, action, delivery_id: identity.deliveryId, subscription: custom?.name });
        return reply(200, { status: 'ignored', reason: MESSAGES.eventNotHandled, event });
      }

      // 7. Paused subscriptions hold their events; 8. dedup; 9. enqueue.
      return await accept(deps, { source, name, event, action, deliveryId: identity.deliveryId, payload, body, text: parsed.text }, matched, trace);
    } catch (error) {
      // Whatever failed, nothing was accepted and the sender may retry: answer 503, never 500.
      const expected = isHookError(error) && error.code === 'unavailable';
      logger.error(expected ? 'unavailable: a store or the queue failed' : 'unexpected failure', {
        source, delivery_id: trace.deliveryId ?? statedDeliveryId(source, request.headers), error: describeError(error),
      });
      return errors.unavailable();
    }
  };
  return deps.requests ? withRequestLog(ingest, deps.requests, deps.clock, logger) : (request: InboundRequest) => ingest(request);
}

/**
 * A custom name is an endpoint of its own in the request log only when it names a
 * subscription: any other name is `custom/?`, so a scanner's made-up names share one
 * sampling window (README "Request log"). A store that cannot answer leaves a valid name
 * as it is (step 3 answers 503; the sampler bounds its windows anyway).
 */
async function customEndpoint(named: Promise<Subscription | undefined>, name: string | undefined): Promise<string> {
  try {
    return (await named) ? `custom/${name}` : 'custom/?';
  } catch {
    return name !== undefined && SUBSCRIPTION_NAME_PATTERN.test(name) ? `custom/${name}` : 'custom/?';
  }
}
