/**
 * The local queue with SQS semantics, in the SQLite store: a received message stays
 * invisible for the visibility timeout and comes back unless deleted (a crash or
 * `kill -9` loses nothing), each receive counts, a message received `maxReceiveCount`
 * times goes to the dead-letter table on its next receive, `delaySeconds` defers a send,
 * and `changeVisibility` re-times a received message (paced retries). Receipt handles
 * are `{id}.{receipt}`: a receipt is stale once the message was received again.
 * Any process may send; serve's consumer is woken by in-process sends and `wake()`. Times
 * on disk are the wall clock's; the consumer keeps its waits through steps of that clock
 * (queue-clock.ts).
 *
 * A message accepted together with its event record (accept.ts) is stored by reference:
 * an empty body, read from event_messages on receive. The payload is then written once
 * per event, not once more in the queue, nor again each time a receive re-times the row.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, DeadLetterSink, EventQueue, SendOptions } from '../../core/ports';
import type { QueueMessage } from '../../core/types';
import { messageJson } from '../../core/message-json';
import type { StoreDb } from './db';
import { GaveUpRecords } from './gave-up';
import { MessageHandoff } from './handoff';
import { QueueClock } from './queue-clock';
import { bodiesOf, delayMs, eventKeyOf, eventOfKey, eventOfRow, parseReceipt, queueUnavailable, Waiters, type QueueRow as Row } from './queue-rows';

export interface SqliteQueueOptions {
  visibilityTimeoutMs: number;
  maxReceiveCount: number;
  clock: Clock;
  /** The monotonic clock beside `clock` (clock-steps.ts: performance.now() for the system clock). */
  monotonic?: () => number;
  /** Called after every send, so a consumer in another process can be woken. */
  onSend?: () => void;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  receiveCount: number;
  sentAt: number;
  /** The message ingest built in this process (handoff.ts), when it was handed over: `body` is its text. */
  message?: QueueMessage;
}

export interface DeadLetter {
  messageId: string;
  body: string;
  receiveCount: number;
  reason?: string;
  deadAt: number;
}

export class SqliteQueue implements EventQueue {
  private readonly waiters = new Waiters();
  private readonly stmts;
  private readonly handoff = new MessageHandoff();
  private readonly gaveUp: GaveUpRecords;
  /** Writes that time rows: on the wall clock, their waits kept through its steps. */
  private readonly times: QueueClock;

  constructor(private readonly store: StoreDb, private readonly options: SqliteQueueOptions) {
    const db = store.db;
    this.stmts = {
      insert: db.prepare('INSERT INTO queue (message_id, body, visible_at, receive_count, receipt, sent_at, event_key) VALUES (?, ?, ?, 0, 0, ?, ?)'),
      queued: db.prepare('SELECT 1 FROM queue WHERE event_key = ?').pluck(),
      visible: db.prepare('SELECT id, message_id, body, event_key, receive_count, receipt, sent_at FROM queue WHERE visible_at <= ? ORDER BY visible_at, id LIMIT ?'),
      eventMessage: db.prepare('SELECT message FROM event_messages WHERE event_id = ? AND subscription = ?').pluck(),
      eventExists: db.prepare('SELECT 1 FROM event_messages WHERE event_id = ? AND subscription = ?').pluck(),
      take: db.prepare('UPDATE queue SET visible_at = ?, receive_count = receive_count + 1, receipt = receipt + 1, in_flight = 1 WHERE id = ?'),
      remove: db.prepare('DELETE FROM queue WHERE id = ? AND receipt = ?'),
      removeAny: db.prepare('DELETE FROM queue WHERE id = ?'),
      retime: db.prepare('UPDATE queue SET visible_at = ?, in_flight = 0 WHERE id = ? AND receipt = ?'),
      rearm: db.prepare(`UPDATE queue SET message_id = ?, visible_at = ?, sent_at = ?, receive_count = 0, receipt = receipt + 1, in_flight = 0
        WHERE id = (SELECT id FROM queue WHERE event_key = ? AND in_flight = 1 ORDER BY id LIMIT 1)
        AND NOT EXISTS (SELECT 1 FROM queue WHERE event_key = ? AND in_flight = 0)`),
      releaseAll: db.prepare('UPDATE queue SET visible_at = ?, in_flight = 0 WHERE in_flight = 1 AND visible_at > ?'),
      nextVisible: db.prepare('SELECT MIN(visible_at) FROM queue').pluck(),
      count: db.prepare('SELECT COUNT(*) FROM queue').pluck(),
      dead: db.prepare('INSERT INTO dead_letters (message_id, body, receive_count, reason, dead_at) VALUES (?, ?, ?, ?, ?)'),
      deadList: db.prepare('SELECT message_id AS messageId, body, receive_count AS receiveCount, reason, dead_at AS deadAt FROM dead_letters ORDER BY id'),
    };
    this.gaveUp = new GaveUpRecords(db);
    this.times = new QueueClock(store, options.clock, options.monotonic);
  }

  /**
   * Sends event messages. A message for an (event, subscription) that still has one in the
   * queue (waiting or in flight) is not added again: ingest re-sends the message of a
   * resumed claim (its first request died after queueing it), and two copies of one event
   * would otherwise be processed side by side.
   */
  async send(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    const [bodies, keys] = bodiesOf(messages);
    await this.sendBodies(bodies, options, keys);
  }

  /**
   * By reference to the event records (see EventQueue.sendRecorded), and handed to this
   * process's consumer unless delayed (a debounced event: not wanted before its delay).
   */
  async sendRecorded(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    if (messages.length === 0) return;
    const [bodies, keys] = bodiesOf(messages, true);
    const delay = delayMs(options.delaySeconds);
    await this.store.write(() => this.sendNow(bodies, keys, delay, delay > 0 ? undefined : messages)).catch((error: unknown) => {
      this.forget(keys);
      throw queueUnavailable(error);
    });
    this.sent();
  }

  async sendBodies(bodies: string[], options: SendOptions = {}, eventKeys: string[] = []): Promise<void> {
    if (bodies.length === 0) return;
    const delay = delayMs(options.delaySeconds);
    await this.store.write(() => this.sendNow(bodies, eventKeys, delay)).catch((error: unknown) => {
      throw queueUnavailable(error);
    });
    this.sent();
  }

  /**
   * Inserts messages inside the caller's write transaction; call `sent()` once it is
   * committed. An empty body stores the message by reference to its event record, which
   * the caller writes in the same transaction (its event key is required then); given
   * the `messages` themselves, they are handed to this process's consumer as they are.
   * A caller whose transaction fails must `forget` the keys.
   */
  sendNow(bodies: string[], eventKeys: string[] = [], delayMs = 0, messages?: QueueMessage[]): void {
    const now = this.options.clock.now();
    bodies.forEach((body, i) => {
      const key = eventKeys[i] ?? null;
      if (key !== null && this.stmts.queued.get(key) !== undefined) return;
      this.stmts.insert.run(randomUUID(), body, now + delayMs, now, key);
      const message = messages?.[i];
      if (key !== null && message) this.handoff.put(key, message, now);
    });
  }

  /**
   * For a release of held records (release.ts), inside its write transaction, before
   * `sendNow`: where a key's only message is in flight, it becomes a new message (new id,
   * visible now, never received), which `sendNow` then keeps instead of adding another. That
   * message is the one of the worker that held the record: it acknowledges it, and its
   * delete, by a receipt now stale, is ignored. Skipped, the release would leave the record
   * `queued` with no message once that delete landed. A copy that runs while that worker
   * still does is sent back by the worker lease, as on SQS, where a release sends anew.
   */
  rearmNow(eventKeys: string[]): void {
    const now = this.options.clock.now();
    for (const key of eventKeys) this.stmts.rearm.run(randomUUID(), now, now, key, key);
  }

  /** Messages handed over and not yet received. */
  get handedOverCount(): number {
    return this.handoff.size;
  }

  /** Drops what `sendNow` handed over for these keys (their transaction was not committed). */
  forget(eventKeys: string[]): void {
    for (const key of eventKeys) this.handoff.take(key);
  }

  /** Wakes consumers after a committed send. */
  sent(): void {
    this.wake();
    this.options.onSend?.();
  }

  /** The message handed over for a row stored by reference, while its event record is there. */
  private handedOver(row: Pick<Row, 'body' | 'event_key'>): QueueMessage | undefined {
    if (row.body !== '' || row.event_key === null) return undefined;
    const message = this.handoff.take(row.event_key);
    return message && this.stmts.eventExists.get(message.event_id, message.subscription) !== undefined ? message : undefined;
  }

  /** A row's message; undefined when it is stored by reference and its event record is gone. */
  private bodyOf(row: Pick<Row, 'body' | 'event_key'>): string | undefined {
    if (row.body !== '' || row.event_key === null) return row.body;
    const { event_id, subscription } = eventOfKey(row.event_key);
    return (this.stmts.eventMessage.get(event_id, subscription) as string | undefined) ?? undefined;
  }

  /**
   * Receives up to `max` visible messages, oldest first, each invisible for the
   * visibility timeout. A message already received `maxReceiveCount` times goes to the
   * dead-letter table instead, and its event record, unless finished, is set `failed` in the
   * same transaction: the worker's own give-up never ran if its last attempt was cut off.
   */
  receive(max: number): Promise<ReceivedMessage[]> {
    return this.times.write(true, (now) => {
      const until = now + this.options.visibilityTimeoutMs;
      const received: ReceivedMessage[] = [];
      for (const row of this.stmts.visible.all(now, max * 2) as Row[]) {
        if (received.length >= max) break;
        const handed = this.handedOver(row);
        const body = handed ? messageJson(handed) : this.bodyOf(row);
        if (body === undefined) {
          this.stmts.dead.run(row.message_id, JSON.stringify(eventOfKey(row.event_key)), row.receive_count, 'the event record of this message was deleted', now);
          this.stmts.removeAny.run(row.id);
          continue;
        }
        if (row.receive_count >= this.options.maxReceiveCount) {
          this.stmts.dead.run(row.message_id, body, row.receive_count, `received ${row.receive_count} times without success`, now);
          this.stmts.removeAny.run(row.id);
          const event = eventOfRow(row, body);
          if (event) this.gaveUp.markNow(event, row.receive_count, new Date(now).toISOString());
          continue;
        }
        this.stmts.take.run(until, row.id);
        received.push({
          messageId: row.message_id, receiptHandle: `${row.id}.${row.receipt + 1}`, body,
          receiveCount: row.receive_count + 1, sentAt: row.sent_at, ...(handed ? { message: handed } : {}),
        });
      }
      return received;
      // A receive lost in a crash only means the message was not received: it is visible at once.
    }, { durable: false });
  }

  /** Deletes a received message; a stale receipt (the message was received again since) is ignored. */
  async delete(receiptHandle: string): Promise<void> {
    const [id, receipt] = parseReceipt(receiptHandle);
    // Deleting a handled message: lost in a crash, the worker sees the finished record and acknowledges it.
    await this.store.write(() => this.stmts.remove.run(id, receipt), { durable: false });
  }

  /** ChangeMessageVisibility: the message becomes visible again `seconds` from now (0 = at once); no longer in flight. */
  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    const [id, receipt] = parseReceipt(receiptHandle);
    const delay = Math.min(Math.max(0, seconds), 12 * 3600) * 1000;
    await this.times.write(false, (now) => this.stmts.retime.run(now + delay, id, receipt));
    this.wake();
  }

  /**
   * Makes every message in flight visible now. Only for serve at start-up, which holds the
   * data dir's serve lock: a message received and neither deleted nor re-timed belonged to
   * a process that is gone. A message waiting out a delay keeps it: a paced retry (the
   * retry schedule, or a `Retry-After` the other side asked for) and a delayed send (a
   * debounce window) are not in flight, and a restart used to run them at once.
   */
  releaseAll(): Promise<number> {
    return this.store.write(() => {
      const now = this.options.clock.now();
      return this.stmts.releaseAll.run(now, now).changes;
    });
  }

  /** Milliseconds until the earliest message becomes visible; undefined when the queue is empty. */
  async nextVisibleIn(): Promise<number | undefined> {
    const next = this.store.read('The local queue', () => this.stmts.nextVisible.get() as number | null);
    return next === null ? undefined : Math.max(0, next - this.options.clock.now());
  }

  async size(): Promise<number> {
    return this.store.read('The local queue', () => this.stmts.count.get() as number);
  }

  /** `event_id` + NUL + `subscription` of every message the queue holds, visible or in flight (the abandoned-records sweep). */
  async heldEvents(): Promise<Set<string>> {
    const held = new Set<string>();
    for (const row of this.store.db.prepare('SELECT body, event_key FROM queue').iterate() as Iterable<Pick<Row, 'body' | 'event_key'>>) {
      const event = eventOfRow(row, row.body);
      if (event) held.add(eventKeyOf(event));
    }
    return held;
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return this.store.read('The local dead-letter queue', () => (this.stmts.deadList.all() as Array<DeadLetter & { reason: string | null }>)
      .map(({ reason, ...rest }) => (reason === null ? rest : { ...rest, reason })));
  }

  /** The DeadLetterSink of the local runtime: a message that failed for good goes to the dead-letter table at once. */
  deadLetterSink(): DeadLetterSink {
    // The message's own receive count when the worker knows it (not the maximum).
    return { send: (body, reason, receiveCount) => this.sendToDeadLetters(body, receiveCount ?? this.options.maxReceiveCount, reason) };
  }

  async sendToDeadLetters(body: string, receiveCount: number, reason?: string): Promise<void> {
    await this.store.write(() => this.stmts.dead.run(randomUUID(), body, receiveCount, reason ?? null, this.options.clock.now()));
  }

  /** Resolves at the next in-process send or `wake()`. */
  waitForMessages(): Promise<void> {
    return new Promise((resolve) => this.onNextMessages(resolve));
  }

  /**
   * Calls `wake` once, at the next in-process send or `wake()`; returns what cancels it. A
   * consumer that stops waiting for another reason (its idle check timed out) cancels, or
   * the callbacks of an idle process would pile up until the next send.
   */
  onNextMessages(wake: () => void): () => void {
    return this.waiters.add(wake);
  }

  /** Wake callbacks registered and neither run nor cancelled (a consumer holds one at most). */
  get waitingCount(): number {
    return this.waiters.size;
  }

  wake(): void {
    this.waiters.wake();
  }
}
