/** An in-memory CounterStore for tests, with expiry by the given clock. */
import type { Clock, CounterStore } from '../../functions/core/ports';

export class MemoryCounterStore implements CounterStore {
  readonly items = new Map<string, { count: number; expiresAt: number }>();
  constructor(private readonly clock: Clock = { now: () => Date.now() }) {}

  async add(key: string, amount: number, ttlSeconds: number): Promise<number> {
    const now = this.clock.now();
    const item = this.items.get(key);
    const live = item && item.expiresAt > now ? item : { count: 0, expiresAt: now + ttlSeconds * 1000 };
    live.count += amount;
    this.items.set(key, live);
    return live.count;
  }

  async get(key: string): Promise<number> {
    const item = this.items.get(key);
    return item && item.expiresAt > this.clock.now() ? item.count : 0;
  }
}
