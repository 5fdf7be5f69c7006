/**
 * In-memory adapters of every port: for benchmarks that measure ingest's own CPU cost and
 * for fuzzing at volume. Not durable; `serve` uses the on-disk store.
 */
import { HookError } from '../../functions/core/errors';
import type { Claim, ClaimOptions, Clock, DedupStore, EventLog, EventQueue, PayloadStore, SubscriptionStore, SubscriptionVersion, UpdateOptions } from '../../functions/core/ports';
import { RecordGone } from '../../functions/core/worker/record';
import type { EventRecord, EventStatus, QueueMessage, Subscription } from '../../functions/core/types';

export class MemorySubscriptionStore implements SubscriptionStore {
  private readonly items = new Map<string, Subscription>();

  async list(): Promise<Subscription[]> {
    return [...this.items.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
  async get(name: string): Promise<Subscription | undefined> {
    return this.items.get(name);
  }
  async create(subscription: Subscription): Promise<void> {
    if (this.items.has(subscription.name)) throw new HookError('subscription_exists', `A subscription named '${subscription.name}' already exists`);
    this.items.set(subscription.name, structuredClone(subscription));
  }
  async put(subscription: Subscription): Promise<void> {
    if (!this.items.has(subscription.name)) throw new HookError('subscription_not_found', `No subscription named '${subscription.name}'`);
    this.items.set(subscription.name, structuredClone(subscription));
  }
  async putIf(subscription: Subscription, expected: SubscriptionVersion): Promise<boolean> {
    const stored = this.items.get(subscription.name);
    if (stored?.created_at !== expected.created_at || stored.updated_at !== expected.updated_at) return false;
    this.items.set(subscription.name, structuredClone(subscription));
    return true;
  }
  async delete(name: string): Promise<void> {
    if (!this.items.delete(name)) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  }
}

export class MemoryDedupStore implements DedupStore {
  private readonly claims = new Map<string, { expires: number; eventId: string; claimedAt: number; committed: boolean }>();
  constructor(private readonly clock: Clock) {}

  async claim(key: string, options: ClaimOptions): Promise<Claim> {
    const now = this.clock.now();
    const held = this.claims.get(key);
    const fresh = { expires: now + options.ttlSeconds * 1000, claimedAt: now, committed: false };
    if (held === undefined || held.expires <= now) {
      this.claims.set(key, { ...fresh, eventId: options.eventId });
      return { kind: 'new' };
    }
    if (held.committed) return { kind: 'duplicate', eventId: held.eventId };
    if (held.claimedAt >= options.staleBefore) return { kind: 'in_progress' };
    this.claims.set(key, { ...fresh, eventId: held.eventId });
    return { kind: 'resumed', eventId: held.eventId };
  }
  async commit(key: string): Promise<void> {
    const held = this.claims.get(key);
    if (held) held.committed = true;
  }
  async release(key: string): Promise<void> {
    const held = this.claims.get(key);
    if (held && !held.committed) held.claimedAt = 0;
  }
}

export class MemoryEventLog implements EventLog {
  private readonly records = new Map<string, EventRecord>();
  private key = (eventId: string, subscription: string) => `${eventId}\u0000${subscription}`;

  async putAll(records: EventRecord[]): Promise<void> {
    // Kept by reference: callers hand over records they no longer change; reads return copies.
    for (const record of records) this.records.set(this.key(record.event_id, record.subscription), record);
  }
  async get(eventId: string, subscription: string): Promise<EventRecord | undefined> {
    const record = this.records.get(this.key(eventId, subscription));
    return record && structuredClone(record);
  }
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>, options: UpdateOptions = {}): Promise<void> {
    const key = this.key(eventId, subscription);
    const record = this.records.get(key);
    if (!record && options.existing) throw new RecordGone(eventId, subscription);
    if (!record) return;
    const next: Record<string, unknown> = { ...record, ...changes, event_id: eventId, subscription, message: record.message };
    for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
    this.records.set(key, next as unknown as EventRecord);
  }
  async getEvent(eventId: string): Promise<EventRecord[]> {
    return [...this.records.values()].filter((r) => r.event_id === eventId).map((r) => structuredClone(r));
  }
  async listBySubscription(subscription: string, limit: number, before?: Pick<EventRecord, 'event_id' | 'received_at'>): Promise<EventRecord[]> {
    const key = (r: Pick<EventRecord, 'event_id' | 'received_at'>) => `${r.received_at}#${r.event_id}`;
    return this.arrival(subscription).filter((r) => !before || key(r) < key(before)).reverse().slice(0, limit);
  }
  async listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]> {
    return this.arrival(subscription).filter((r) => r.status === status);
  }
  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    for (const k of keys) this.records.delete(this.key(k.event_id, k.subscription));
  }
  async deleteHeld(keys: Array<{ event_id: string; subscription: string }>): Promise<number> {
    const held = keys.filter((k) => this.records.get(this.key(k.event_id, k.subscription))?.status === 'held');
    await this.deleteAll(held);
    return held.length;
  }
  async deleteUnstarted(keys: Array<{ event_id: string; subscription: string }>): Promise<Array<{ event_id: string; subscription: string }>> {
    const started = (k: { event_id: string; subscription: string }) => {
      const record = this.records.get(this.key(k.event_id, k.subscription));
      return record !== undefined && (record.status !== 'queued' || (record.attempts ?? 0) > 0);
    };
    const kept = keys.filter(started);
    await this.deleteAll(keys.filter((k) => !kept.includes(k)));
    return kept;
  }
  private arrival(subscription: string): EventRecord[] {
    return [...this.records.values()]
      .filter((r) => r.subscription === subscription)
      .sort((a, b) => `${a.received_at}#${a.event_id}`.localeCompare(`${b.received_at}#${b.event_id}`))
      .map((r) => structuredClone(r));
  }
}

export class MemoryPayloadStore implements PayloadStore {
  private readonly bodies = new Map<string, string>();
  async put(key: string, body: string): Promise<string> {
    this.bodies.set(key, body);
    return `memory://${key}`;
  }
  async get(pointer: string): Promise<string> {
    const body = this.bodies.get(pointer.replace(/^memory:\/\//, ''));
    if (body === undefined) throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
    return body;
  }
}

export class MemoryQueue implements EventQueue {
  readonly messages: QueueMessage[] = [];
  async send(messages: QueueMessage[]): Promise<void> {
    this.messages.push(...messages);
  }
}
