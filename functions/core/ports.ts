/**
 * Ports: what the domain needs from the outside world. AWS adapters (functions/aws) and
 * local adapters implement them; the domain never imports an SDK.
 */
import type { EventRecord, EventStatus, EventSummary, QueueMessage, RequestOutcome, RequestRecord, Source, Subscription } from './types';

/** What tells one stored version of a subscription from another (SubscriptionStore.putIf). */
export type SubscriptionVersion = Pick<Subscription, 'created_at' | 'updated_at'>;

export interface SubscriptionStore {
  list(): Promise<Subscription[]>;
  get(name: string): Promise<Subscription | undefined>;
  /** Conditional create: throws HookError `subscription_exists` when the name is taken. */
  create(subscription: Subscription): Promise<void>;
  /** Replaces an existing subscription: throws HookError `subscription_not_found` when absent. */
  put(subscription: Subscription): Promise<void>;
  /**
   * Replaces the subscription only while it is still the version `expected` was read at
   * (same `created_at` and `updated_at`), checked in the same write; false when it is not
   * (changed, or deleted and maybe created again, since): the caller reads it again. Every
   * change moves `updated_at` on (changeSubscription); a subscription created again under
   * the name has a new `created_at`.
   */
  putIf(subscription: Subscription, expected: SubscriptionVersion): Promise<boolean>;
  /** Throws HookError `subscription_not_found` when absent. */
  delete(name: string): Promise<void>;
}

export interface SendOptions {
  /** Delivers the messages no earlier than this many seconds from now (SQS DelaySeconds, at most 900). */
  delaySeconds?: number;
}

export interface EventQueue {
  /** Sends every message durably, or throws (HookError `unavailable`). */
  send(messages: QueueMessage[], options?: SendOptions): Promise<void>;
  /**
   * Like `send`, for messages whose event records, holding these very messages, are in the
   * event log already (a release of held events, a replay, ingest's debounced messages
   * with their delay): a store that keeps both may queue them by reference instead of
   * writing each message (and its payload) once more.
   */
  sendRecorded?(messages: QueueMessage[], options?: SendOptions): Promise<void>;
}

/** Where a message that failed for good goes at once (the DLQ on AWS, the dead-letter table locally). */
export interface DeadLetterSink {
  /** `receiveCount`: how many times the queue had delivered the message when it failed for good. */
  send(body: string, reason: string, receiveCount?: number): Promise<void>;
}

/**
 * The worker's lease on one (event, subscription), like Powertools Idempotency's
 * in-progress record: a conditional write with an expiry. While a live lease is held by
 * another copy of the message, a copy does nothing and asks to be retried later; an
 * expired lease (its holder died) is taken over.
 */
export interface LeaseStore {
  /** True when `holder` now holds the lease for `leaseMs`; false while another holder's lease is live. */
  acquire(eventId: string, subscription: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Gives the lease up, only if `holder` still holds it. */
  release(eventId: string, subscription: string, holder: string): Promise<void>;
}

/**
 * Counters in time windows: agent runs per subscription per hour (max_runs_per_hour),
 * tokens per day (budgets). The caller puts the window in the key (e.g. `runs#pr-review#2026-11-23T15`).
 */
export interface CounterStore {
  /** Adds `amount` (may be 0) and returns the new total; the counter expires after `ttlSeconds`. */
  add(key: string, amount: number, ttlSeconds: number): Promise<number>;
  get(key: string): Promise<number>;
}

/** Debounce: the latest event per (subscription, subject key). */
export interface DebounceStore {
  /** Records `eventId` as the latest of its subject (replacing the previous one). */
  setLatest(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): Promise<void>;
  getLatest(subscription: string, subjectKey: string): Promise<string | undefined>;
}

export interface RequestQuery {
  /** `github`, `gitlab` or `custom/<name>`. */
  endpoint?: string;
  outcome?: RequestOutcome;
  /** Epoch ms: only requests received at or after it. */
  since?: number;
  /** Epoch ms: only requests received at or before it (a lookup around a known time reads that window only). */
  until?: number;
  limit: number;
}

/** `RequestLog.listFiltered`: the requests one subscription's payload filters turned away. */
export interface FilteredQuery {
  subscription: string;
  /** Epoch ms: only requests received at or before it (the next page of a listing starts at its oldest row). */
  until?: number;
  limit: number;
}

export interface FilteredRequests {
  /** Most recent first. */
  entries: RequestRecord[];
  /** Set when some may be missing (entries written before the store indexed them were searched in a bounded scan that stopped short): says so. */
  partial?: string;
}

/** A delivery id's commit (DedupStore.commit), deferred so it can share a write with the request log (issue 16). */
export interface DeferredCommit {
  key: string;
  eventId: string;
  ttlSeconds: number;
}

/** The request log of DESIGN §2.1: every inbound request and its outcome, kept 7 days. */
export interface RequestLog {
  record(entry: RequestRecord): Promise<void>;
  /**
   * Optional: writes the entry and commits the delivery id's claim (what DedupStore.commit
   * does) in one call. Where it exists, ingest leaves the commit of an accepted request to
   * the request log's write, which comes after the queue send and before the answer.
   */
  recordAndCommit?(entry: RequestRecord, commit: DeferredCommit): Promise<void>;
  /** Most recent first. */
  list(query: RequestQuery): Promise<RequestRecord[]>;
  /**
   * The requests `query.subscription`'s payload filters turned away (core/request-filtered.ts),
   * most recent first, from an index by subscription written with each entry: not a scan
   * of the whole log, which other endpoints' traffic fills (hunt 11 D3). Optional, for
   * wrappers in tests; `webhook events` falls back to a bounded scan without it.
   */
  listFiltered?(query: FilteredQuery): Promise<FilteredRequests>;
}

/**
 * What claiming a delivery id found. A claim is pending while the request that made it
 * runs and committed once its event is stored and queued; a pending claim older than the
 * lease belongs to a request that died (a crash, a timeout) and is taken over with its
 * event id, so the sender's retry finishes that event instead of being called a duplicate.
 */
export type Claim =
  | { kind: 'new' }
  | { kind: 'resumed'; eventId: string }
  /** `eventId`: the event the committed claim names (absent in items older than claims), for the log line. */
  | { kind: 'duplicate'; eventId?: string }
  | { kind: 'in_progress' };

export interface ClaimOptions {
  /** The event this request would create. */
  eventId: string;
  ttlSeconds: number;
  /** Epoch ms: a pending claim made before this is abandoned and taken over. */
  staleBefore: number;
}

export interface DedupStore {
  claim(key: string, options: ClaimOptions): Promise<Claim>;
  /**
   * Optional (issue 16): a new claim of `key` and the event's `records` in one atomic write,
   * both or neither. True: done (the claim is pending, as after `claim` answered `new`, and
   * the records are stored). False: nothing was written (the key is claimed already, or the
   * records are too many or too large for one write): the caller asks `claim` and writes
   * the records itself. Throws (HookError `unavailable`) when the store failed; the write
   * may then have happened or not, so the caller must not release the claim.
   */
  claimWithRecords?(key: string, options: ClaimOptions, records: EventRecord[]): Promise<boolean>;
  /** The event is stored and queued: from now on the key answers "duplicate". */
  commit(key: string): Promise<void>;
  /** Gives a pending claim up after a failure: the sender's retry takes it over at once. */
  release(key: string): Promise<void>;
  /** What a key's claim says now, without changing it (finding events never accepted); undefined: no claim. */
  inspect?(key: string): Promise<{ eventId: string; committed: boolean; claimedAt: number } | undefined>;
}

/**
 * A store that can accept a new event in ONE atomic, durable write (the local SQLite
 * store): the delivery id's claim, already committed, with the event's records and queue
 * messages. There is no pending claim to commit afterwards and no partial state to undo.
 */
export interface AtomicAccept {
  /**
   * With no claim on `dedupKey` (or none given), writes the claim (committed), `records`
   * and `messages`, and answers `new` once that is on disk. Any other claim is answered as
   * `DedupStore.claim` would (a stale pending claim is taken over: `resumed`) and nothing
   * else is written.
   */
  acceptNew(input: { dedupKey?: string; claim: ClaimOptions; records: EventRecord[]; messages: QueueMessage[]; delayed?: DelayedMessage[] }): Promise<Claim>;
}

/**
 * A debounced message: queued with its delay and recorded as its subject's latest event. An
 * AtomicAccept writes both in its one write, so the latest event of a subject always has
 * its message queued (a crash between the two would let it supersede the earlier ones
 * without ever running itself).
 */
export interface DelayedMessage {
  message: QueueMessage;
  delaySeconds: number;
}

/**
 * A store that can release held records atomically (the local store): each record is set
 * `queued` and its message queued in one write, and only while it is still `held` there,
 * so two releasers never both queue it and a crash leaves it either held (the next resume
 * releases it) or queued with its message.
 */
export interface AtomicRelease {
  /** Releases those of `records` that are still held; returns them as now stored (`queued`, `updated_at` = `at`). */
  releaseHeld(records: EventRecord[], at: string): Promise<EventRecord[]>;
}

export interface UpdateOptions {
  /**
   * The change records something done outside that must not be done again (a chat post,
   * which carries no marker to find it by): store it before any other work, not batched
   * with later writes. The local store commits it at once, so it survives a kill of the
   * process from then on (its fsync follows as for any write); DynamoDB writes every update
   * at once anyway.
   */
  immediately?: boolean;
  /**
   * Only while the record is there, checked in the same write (the worker's first write of
   * an attempt): when it is gone (ingest withdrew it after a failed queue send) nothing is
   * written and `update` throws HookError `event_not_found`. Either that delete or this
   * write happens, never both.
   */
  existing?: boolean;
}

export interface EventLog {
  /** Writes new records (replacing any with the same event id and subscription). */
  putAll(records: EventRecord[]): Promise<void>;
  /**
   * `known`: the caller's copy of the record's message (the worker has just read it from the
   * queue); an adapter may return the record with it instead of reading the stored one.
   */
  get(eventId: string, subscription: string, known?: QueueMessage): Promise<EventRecord | undefined>;
  /**
   * Changes only the given fields of an existing record (a field given as undefined is
   * removed); the stored message is not rewritten. An absent record is left absent (and
   * reported with `options.existing`).
   */
  update(eventId: string, subscription: string, changes: Partial<EventRecord>, options?: UpdateOptions): Promise<void>;
  /**
   * Optional (DynamoDB has it): writes `record` as `putAll` does, only while the stored
   * record's status is `status`. False when it is not (or the record is gone): someone
   * else (a worker) moved it on meanwhile, and it is left as it is.
   */
  putIfStatus?(record: EventRecord, status: EventStatus): Promise<boolean>;
  /** Every record of one event (one per subscription). */
  getEvent(eventId: string): Promise<EventRecord[]>;
  /** Most recent first; with `before`, only records that arrived before that one (paging). */
  listBySubscription(subscription: string, limit: number, before?: Pick<EventRecord, 'event_id' | 'received_at'>): Promise<EventRecord[]>;
  /** Records of one subscription in one status, oldest first (arrival order). */
  listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]>;
  /**
   * Optional (the local store has it): records of one subscription in one status that
   * arrived before `receivedBefore` (ISO 8601, compared as stored), oldest first, at most
   * `limit` of them after `after` (paging), without their message, prompt and reply. For
   * sweeps over what may be a large backlog: listByStatus reads and parses every record's
   * whole message (its payload) at once.
   */
  listSummariesByStatus?(subscription: string, status: EventStatus, page: { receivedBefore: string; limit: number; after?: Pick<EventRecord, 'event_id' | 'received_at'> }): Promise<EventSummary[]>;
  deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void>;
  /**
   * Deletes those of `keys` whose record is still `held`, each checked in the same write as
   * its delete (`resume --discard-held`): one released meanwhile, its message queued, is
   * left as it is. Returns how many it deleted.
   */
  deleteHeld(keys: Array<{ event_id: string; subscription: string }>): Promise<number>;
  /**
   * Optional (DynamoDB has it; the local store expires nothing held): removes the expiry
   * from every record of `subscription` still `held` that carries one (written by an
   * earlier version) and from its message, each written only while the record is still
   * held, so one released meanwhile keeps the expiry its release wrote. Returns how many
   * records it kept.
   */
  keepHeld?(subscription: string): Promise<number>;
  /**
   * Deletes those of `keys` whose record no worker has started (`queued`, no attempt), each
   * checked in the same write as its delete (ingest, after a queue send that failed but may
   * have reached the queue): one a worker has moved on is left as it is. An absent record
   * counts as deleted. Returns the keys it left.
   */
  deleteUnstarted(keys: Array<{ event_id: string; subscription: string }>): Promise<Array<{ event_id: string; subscription: string }>>;
  /**
   * Optional (both stores have it): one subscription's records newest first, as
   * listBySubscription orders them, filtered in the store, without their message, prompt
   * and reply, reading at most `search.examine` records. The console merges these per
   * subscription into one list of the whole log.
   */
  searchSubscription?(subscription: string, search: EventSearch): Promise<EventSearchPage>;
  /**
   * Optional: the subscription names the log holds records under, deleted subscriptions'
   * too (their records stay until they expire). `known`: the names defined now.
   */
  recordedSubscriptions?(known: string[]): Promise<RecordedSubscriptions>;
}

/** A record as a list shows it; `subscription_created_at` (the message's stamp) where the store has it at hand. */
export type ListedEvent = EventSummary & { subscription_created_at?: string };

export interface EventSearch {
  /** Start below this record (newest first); `inclusive`: at it. */
  before?: { received_at: string; event_id: string; inclusive?: boolean };
  /** ISO 8601: only records received at or after it. */
  since?: string;
  status?: EventStatus;
  source?: Source;
  /** Text the event id or the delivery id contains, any case. */
  text?: string;
  /** At most this many matching records. */
  limit: number;
  /** At most this many records read, matching or not (at least one). */
  examine: number;
}

export interface EventSearchPage {
  /** The matching records, newest first. */
  records: ListedEvent[];
  /** Records read, matching or not. */
  examined: number;
  /**
   * The last record read when the search stopped before the end of the subscription's
   * records (at `limit` matches or `examine` records): the next search starts below it.
   * Absent when nothing older is left to read.
   */
  last?: { received_at: string; event_id: string };
}

export interface RecordedSubscriptions {
  names: string[];
  /** Set while `names` may still lack some (a store still looking for them), saying so. */
  incomplete?: string;
}

export interface PayloadStore {
  /** Stores a raw payload; returns a pointer to put in the queue message. */
  put(key: string, body: string): Promise<string>;
  get(pointer: string): Promise<string>;
}

export interface SecretSource {
  /** The value of a `${NAME}` reference, or undefined when it is not set anywhere. */
  get(name: string): Promise<string | undefined>;
  /** Where a missing value should be set, for error messages (e.g. the SSM parameter name). */
  where?(name: string): string;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
