/**
 * The console runs the check `webhook events` runs before it lists a subscription: on AWS,
 * records of requests that died before their event was queued are marked `abandoned` by
 * their dedup claims (functions/core/ingest/abandoned.ts). The list polls every 2 s and the
 * check reads every `queued` record of a subscription, so each subscription is checked at
 * most once a minute; the event page checks the records it shows. A check that fails (a
 * throttled table, credentials that may read but not write) is logged and the page is
 * answered with the records as they are.
 */
import { settleAbandoned, settleShown, type AbandonedReads } from '../../functions/core/ingest/abandoned';
import type { Logger } from '../../functions/core/log';
import type { EventRecord } from '../../functions/core/types';

/** How often one subscription is checked at most. */
export const ABANDONED_CHECK_MS = 60_000;

export class AbandonedCheck {
  private readonly checkedAt = new Map<string, number>();

  constructor(private readonly options: { everyMs?: number; now?: () => number; logger?: Logger } = {}) {}

  /** Checks those of `names` not checked in the last minute (nothing where the claims cannot be read: locally serve's sweep does it). */
  async subscriptions(stores: AbandonedReads, names: string[]): Promise<void> {
    if (!stores.dedup?.inspect) return;
    const now = (this.options.now ?? Date.now)();
    const every = this.options.everyMs ?? ABANDONED_CHECK_MS;
    const due = [...new Set(names)].filter((name) => now - (this.checkedAt.get(name) ?? -Infinity) >= every);
    // Taken before the reads: polls that arrive meanwhile do not start the same check again.
    for (const name of due) this.checkedAt.set(name, now);
    for (const name of due) {
      try {
        await settleAbandoned(stores, name, now);
      } catch (error) {
        this.failed(error, { subscription: name });
      }
    }
  }

  /** One event's records, those never accepted marked `abandoned`. */
  async shown(stores: AbandonedReads, records: EventRecord[]): Promise<EventRecord[]> {
    try {
      return await settleShown(stores, records, (this.options.now ?? Date.now)());
    } catch (error) {
      this.failed(error, { event_id: records[0]?.event_id });
      return records;
    }
  }

  private failed(error: unknown, where: Record<string, unknown>): void {
    this.options.logger?.warn('console: could not check for abandoned events', { ...where, error: error instanceof Error ? error.message : String(error) });
  }
}
