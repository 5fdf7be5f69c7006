/**
 * CounterStore over SQLite: a counter per key, restarted once its expiry has passed. A
 * negative amount gives back what was added (a run that did not happen): it never takes a
 * counter below zero, and never starts one (an absent or expired counter reads 0).
 */
import type { Clock, CounterStore } from '../../core/ports';
import type { StoreDb } from './db';

export class SqliteCounterStore implements CounterStore {
  private readonly add_;
  private readonly giveBack;
  private readonly select;

  constructor(private readonly store: StoreDb, private readonly clock: Clock) {
    this.add_ = store.db.prepare(`INSERT INTO counters (key, value, expires_at) VALUES (@key, @amount, @expires)
      ON CONFLICT (key) DO UPDATE SET
        value = CASE WHEN counters.expires_at <= @now THEN @amount ELSE counters.value + @amount END,
        expires_at = CASE WHEN counters.expires_at <= @now THEN @expires ELSE counters.expires_at END
      RETURNING value`).pluck();
    this.giveBack = store.db.prepare('UPDATE counters SET value = MAX(value + @amount, 0) WHERE key = @key AND expires_at > @now RETURNING value').pluck();
    this.select = store.db.prepare('SELECT value FROM counters WHERE key = ? AND expires_at > ?').pluck();
  }

  add(key: string, amount: number, ttlSeconds: number): Promise<number> {
    return this.store.write(() => {
      const now = this.clock.now();
      if (amount < 0) return (this.giveBack.get({ key, amount, now }) as number | undefined) ?? 0;
      return this.add_.get({ key, amount, expires: now + ttlSeconds * 1000, now }) as number;
    });
  }

  async get(key: string): Promise<number> {
    return this.store.read('The counter store', () => (this.select.get(key, this.clock.now()) as number | undefined) ?? 0);
  }
}
