/** An in-memory LeaseStore with the same semantics as the DynamoDB one (live, expired, own). */
import type { Clock, LeaseStore } from '../../functions/core/ports';

export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, { holder: string; until: number }>();
  /** How many times a copy found a live lease held by another. */
  refused = 0;

  constructor(private readonly clock: Clock = { now: () => Date.now() }) {}

  async acquire(eventId: string, subscription: string, holder: string, leaseMs: number): Promise<boolean> {
    const key = `${eventId}#${subscription}`;
    const now = this.clock.now();
    const held = this.leases.get(key);
    if (held && held.until > now && held.holder !== holder) {
      this.refused += 1;
      return false;
    }
    this.leases.set(key, { holder, until: now + leaseMs });
    return true;
  }

  async release(eventId: string, subscription: string, holder: string): Promise<void> {
    const key = `${eventId}#${subscription}`;
    if (this.leases.get(key)?.holder === holder) this.leases.delete(key);
  }
}
