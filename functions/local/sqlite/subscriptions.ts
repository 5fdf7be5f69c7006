/**
 * SubscriptionStore over SQLite. `list()` keeps the parsed list while the table's change
 * counter (bumped by triggers on every write, from any process: serve or the CLI) stays
 * the same, so serve reads one counter row per request, and a `hookagent webhook …`
 * change applies to the very next request without a restart.
 */
import { HookError } from '../../core/errors';
import type { SubscriptionStore, SubscriptionVersion } from '../../core/ports';
import type { Subscription } from '../../core/types';
import type { StoreDb } from './db';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

const notFound = (name: string) => new HookError('subscription_not_found', `No subscription named '${name}'`);

export class SqliteSubscriptionStore implements SubscriptionStore {
  private cached: { version: number; list: Subscription[] } | undefined;
  private readonly version;
  private readonly all;
  private readonly one;
  private readonly insert;
  private readonly update;
  private readonly updateIf;
  private readonly remove;

  constructor(private readonly store: StoreDb) {
    const db = store.db;
    this.version = db.prepare("SELECT version FROM versions WHERE name = 'subscriptions'").pluck();
    this.all = db.prepare('SELECT body FROM subscriptions ORDER BY name').pluck();
    this.one = db.prepare('SELECT body FROM subscriptions WHERE name = ?').pluck();
    this.insert = db.prepare('INSERT OR IGNORE INTO subscriptions (name, body) VALUES (?, ?)');
    this.update = db.prepare('UPDATE subscriptions SET body = ? WHERE name = ?');
    this.updateIf = db.prepare("UPDATE subscriptions SET body = ? WHERE name = ? AND json_extract(body, '$.created_at') = ? AND json_extract(body, '$.updated_at') = ?");
    this.remove = db.prepare('DELETE FROM subscriptions WHERE name = ?');
  }

  /** The list and its subscriptions are frozen and shared between calls (ingest reads it on every request): copy to change. */
  async list(): Promise<Subscription[]> {
    return this.store.read('The subscription store', () => {
      const version = this.version.get() as number;
      if (this.cached?.version !== version) {
        this.cached = { version, list: deepFreeze((this.all.all() as string[]).map((body) => JSON.parse(body) as Subscription)) };
      }
      return this.cached.list;
    });
  }

  async get(name: string): Promise<Subscription | undefined> {
    const body = this.store.read('The subscription store', () => this.one.get(name) as string | undefined);
    return body === undefined ? undefined : (JSON.parse(body) as Subscription);
  }

  async create(subscription: Subscription): Promise<void> {
    const inserted = await this.store.write(() => this.insert.run(subscription.name, JSON.stringify(subscription)).changes);
    if (inserted === 0) {
      throw new HookError('subscription_exists', `A subscription named '${subscription.name}' already exists; use 'hookagent webhook update ${subscription.name}' to change it`);
    }
  }

  async put(subscription: Subscription): Promise<void> {
    const updated = await this.store.write(() => this.update.run(JSON.stringify(subscription), subscription.name).changes);
    if (updated === 0) throw notFound(subscription.name);
  }

  /** The version is checked by the UPDATE itself, inside the write transaction (no other process writes in between). */
  async putIf(subscription: Subscription, expected: SubscriptionVersion): Promise<boolean> {
    const updated = await this.store.write(() => this.updateIf.run(JSON.stringify(subscription), subscription.name, expected.created_at, expected.updated_at).changes);
    return updated > 0;
  }

  async delete(name: string): Promise<void> {
    const deleted = await this.store.write(() => this.remove.run(name).changes);
    if (deleted === 0) throw notFound(name);
  }
}
