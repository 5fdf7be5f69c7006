/**
 * Subscriptions as ingest sees them: the whole list, kept per container for a few
 * seconds so that a burst of events does not read the store on every request.
 */
import type { Clock, SubscriptionStore } from '../ports';
import type { Subscription } from '../types';

export class SubscriptionCache {
  private cached: { at: number; list: Promise<Subscription[]> } | undefined;

  /** `store` is read directly where a cached answer is not good enough (held events after a resume). */
  constructor(readonly store: SubscriptionStore, private readonly ttlMs: number, private readonly clock: Clock) {}

  all(): Promise<Subscription[]> {
    const now = this.clock.now();
    // A wall clock stepped back makes the age negative: that list is not young, it is of unknown age.
    const age = this.cached ? now - this.cached.at : -1;
    if (this.cached && age >= 0 && age < this.ttlMs) return this.cached.list;
    const list = this.store.list();
    this.cached = { at: now, list };
    // A failed read is not cached: the next request tries the store again.
    list.catch(() => {
      if (this.cached?.list === list) this.cached = undefined;
    });
    return list;
  }

  async byName(name: string): Promise<Subscription | undefined> {
    return (await this.all()).find((s) => s.name === name);
  }
}
