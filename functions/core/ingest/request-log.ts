/**
 * The request log of DESIGN §2.1 on the ingest path: every inbound request is recorded
 * with its outcome, what was known of it when it was answered (event, delivery id, the
 * candidate subscriptions and why each did or did not match), the source address and
 * the header names (never their values, never a body).
 *
 * Rejections come at the rate a sender (or an attacker) chooses, so they are sampled: at
 * most `REJECTION_SAMPLES` per endpoint per minute are written, and the next one written
 * carries in `count` how many it stands for. Accepted and ignored requests are always
 * written (they already cost an event-log write, or are answers a user looks for).
 * A failing log write never changes the answer: it is reported in the service log.
 */
import { describeError } from '../errors';
import { newEventId } from '../ids';
import type { Logger } from '../log';
import type { Clock, DeferredCommit, RequestLog } from '../ports';
import type { CandidateVerdict, RequestOutcome, RequestRecord } from '../types';
import { keptCandidates } from './request-candidates';
import type { Reply } from './responses';
import { parseRoute } from './routes';

/** Request log entries are kept this long (DESIGN §2.1). */
export const REQUEST_LOG_TTL_SECONDS = 7 * 24 * 3600;
/** Rejected requests written per endpoint per minute; the rest are counted. */
export const REJECTION_SAMPLES = 10;
/** Sampling windows one process keeps for a minute; past it, new keys share one window. */
export const SAMPLED_KEYS = 1000;
const WINDOW_MS = 60_000;
const MAX_HEADER_NAMES = 50;

/** What ingest learnt about a request before answering it. */
export interface RequestTrace {
  endpoint?: string;
  event?: string;
  action?: string;
  deliveryId?: string;
  eventId?: string;
  candidates?: CandidateVerdict[];
  /** Set by ingest when the request log's write is to commit the delivery id too (`RequestLog.recordAndCommit`). */
  commit?: DeferredCommit;
}

const REJECTIONS = new Set<RequestOutcome>([
  'rejected_signature', 'ip_not_allowed', 'payload_too_large', 'invalid_json', 'invalid_event', 'not_found', 'method_not_allowed',
]);

/** The outcome a reply stands for. */
export function outcomeOf(reply: Reply): RequestOutcome {
  const body = reply.body as { status?: string; code?: string; reason?: string };
  switch (reply.status) {
    case 202: return body.status === 'held' ? 'held' : 'accepted';
    case 401: return 'rejected_signature';
    case 403: return 'ip_not_allowed';
    case 413: return 'payload_too_large';
    case 400: return body.code === 'invalid_event' ? 'invalid_event' : 'invalid_json';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 503: return body.code === 'in_progress' ? 'in_progress' : 'unavailable';
  }
  if (body.status === 'duplicate') return 'duplicate';
  if (body.status === 'ok') return 'ping';
  if (body.reason === 'Filtered out') return 'filtered';
  if (body.reason === 'Event caused by hookagent') return 'ignored_loop';
  return 'not_handled';
}

interface Window {
  start: number;
  written: number;
  /** Requests sampled out since the last one written: the next one written stands for them too. */
  skipped: number;
}

/**
 * Per-endpoint sampling of rejections, in one process (one Lambda container, one serve).
 * A window lives its whole minute whatever other keys arrive: only expired windows are
 * evicted, and one whose skipped requests are not yet written is kept until its key's
 * next request carries them. Endpoint names are bounded (ingest names a custom name that
 * is no subscription `custom/?`); past `SAMPLED_KEYS` live windows all new keys share one.
 */
export class RejectionSampler {
  /** Oldest window first: a renewed window moves to the end, so eviction stops at the first live one. */
  private readonly windows = new Map<string, Window>();
  private overflow: Window = { start: -Infinity, written: 0, skipped: 0 };

  constructor(private readonly samples = REJECTION_SAMPLES, private readonly maxKeys = SAMPLED_KEYS) {}

  /** Undefined: skip (counted); a number: write, standing for that many requests. */
  take(key: string, now: number): number | undefined {
    const window = this.windowFor(key, now);
    if (window.written >= this.samples) {
      window.skipped += 1;
      return undefined;
    }
    window.written += 1;
    const count = 1 + window.skipped;
    window.skipped = 0;
    return count;
  }

  private windowFor(key: string, now: number): Window {
    const known = this.windows.get(key);
    if (known && now - known.start < WINDOW_MS) return known;
    if (!known && this.windows.size >= this.maxKeys) {
      this.evictExpired(now);
      if (this.windows.size >= this.maxKeys) {
        if (now - this.overflow.start >= WINDOW_MS) this.overflow = renewed(this.overflow, now);
        return this.overflow;
      }
    }
    const window = renewed(known, now);
    this.windows.delete(key);
    this.windows.set(key, window);
    return window;
  }

  private evictExpired(now: number): void {
    for (const [key, window] of this.windows) {
      if (now - window.start < WINDOW_MS) return;
      if (window.skipped === 0) this.windows.delete(key);
    }
  }
}

/** A new window from `now`, carrying the skipped requests of the one it replaces. */
const renewed = (previous: Window | undefined, now: number): Window => ({ start: now, written: 0, skipped: previous?.skipped ?? 0 });

export interface RequestLogInput {
  method: string;
  /** The request path: requests to `/health` are not recorded, whatever their method. */
  path?: string;
  headers: Record<string, string | undefined>;
  sourceIp: string | undefined;
}

/** `/health` is for uptime probes, not a webhook: never recorded, answered 200 or 405 alike. */
function isHealth(request: RequestLogInput, reply: Reply, trace: RequestTrace): boolean {
  if (request.path !== undefined) return parseRoute(request.path).kind === 'health';
  return reply.status === 200 && (reply.body as { status?: string }).status === 'ok' && trace.endpoint === undefined;
}

/**
 * Request ids: time, then a per-process sequence (requests answered in the same millisecond
 * by one process sort in the order they were answered), then a tag drawn once per process
 * (two containers never collide). No random draw per request: this runs on every request.
 */
let sequence = 0;
const PROCESS_TAG = newEventId(Date.now()).slice(-8);

function headerNames(headers: Record<string, string | undefined>): string[] {
  const names: string[] = [];
  for (const name in headers) {
    if (names.length === MAX_HEADER_NAMES) break;
    names.push(name.length > 100 ? name.slice(0, 100).toLowerCase() : name.toLowerCase());
  }
  return names;
}

export function buildRecord(request: RequestLogInput, reply: Reply, trace: RequestTrace, now: number, count: number): RequestRecord {
  const outcome = outcomeOf(reply);
  const body = reply.body as { message?: string; event_id?: string };
  const record: RequestRecord = {
    request_id: `req_${now.toString(36).padStart(9, '0')}${(sequence++ % 1_679_616).toString(36).padStart(4, '0')}${PROCESS_TAG}`,
    received_at: new Date(now).toISOString(),
    endpoint: trace.endpoint ?? 'unknown',
    method: request.method.toUpperCase().slice(0, 10),
    status: reply.status,
    outcome,
    header_names: headerNames(request.headers),
  };
  if (trace.event) record.event = trace.event;
  if (trace.action) record.action = trace.action;
  if (trace.deliveryId) record.delivery_id = trace.deliveryId;
  const eventId = trace.eventId ?? body.event_id;
  if (eventId) record.event_id = eventId;
  if (request.sourceIp) record.source_ip = request.sourceIp.slice(0, 64);
  if (trace.candidates) {
    // The subscriptions the event reached first, all kept; only event-filter misses are cut (request-candidates.ts).
    const { candidates, omitted } = keptCandidates(trace.candidates);
    record.candidates = candidates;
    if (omitted > 0) record.candidates_omitted = omitted;
  }
  if (reply.status >= 400 && body.message) record.message = body.message.slice(0, 300);
  if (count > 1) record.count = count;
  return record;
}

export type TracedIngest<R> = (request: R & RequestLogInput, trace: RequestTrace) => Promise<Reply>;

/** Wraps an ingest function so every answered request is recorded. */
export function withRequestLog<R>(ingest: TracedIngest<R>, log: RequestLog, clock: Clock, logger: Logger, sampler = new RejectionSampler()) {
  return async (request: R & RequestLogInput): Promise<Reply> => {
    const trace: RequestTrace = {};
    const reply = await ingest(request, trace);
    if (isHealth(request, reply, trace)) return reply;
    const now = clock.now();
    const outcome = outcomeOf(reply);
    // Only accepted and held requests carry a commit, and they are never sampled out.
    const count = REJECTIONS.has(outcome) && !trace.commit ? sampler.take(trace.endpoint ?? 'unknown', now) : 1;
    if (count === undefined) return reply;
    try {
      const entry = buildRecord(request, reply, trace, now, count);
      if (trace.commit && log.recordAndCommit) await log.recordAndCommit(entry, trace.commit);
      else await log.record(entry);
    } catch (error) {
      // The event is stored and queued: the answer stays 202 (see commitClaim in service.ts).
      const message = trace.commit ? 'the request log could not be written nor the delivery id marked done' : 'the request log could not be written';
      logger.warn(message, { outcome, endpoint: trace.endpoint, delivery_id: trace.deliveryId, error: describeError(error) });
    }
    return reply;
  };
}
