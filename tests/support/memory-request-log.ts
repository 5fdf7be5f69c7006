/** In-memory RequestLog, DebounceStore and CounterStore for unit tests (the real ones are DynamoDB/SQLite). */
import type { Clock, CounterStore, DebounceStore, FilteredQuery, FilteredRequests, RequestLog, RequestQuery } from '../../functions/core/ports';
import { filterRefusal } from '../../functions/core/request-filtered';
import type { RequestRecord } from '../../functions/core/types';

export class MemoryRequestLog implements RequestLog {
  /** Serialised as the DynamoDB adapter does (one JSON string per entry). */
  readonly stored: string[] = [];
  failing = false;

  get entries(): RequestRecord[] {
    return this.stored.map((s) => JSON.parse(s) as RequestRecord);
  }

  async record(entry: RequestRecord): Promise<void> {
    if (this.failing) throw new Error('request log down (test)');
    this.stored.push(JSON.stringify(entry));
  }

  async list(query: RequestQuery): Promise<RequestRecord[]> {
    return this.entries
      .filter((e) => (!query.endpoint || e.endpoint === query.endpoint) && (!query.outcome || e.outcome === query.outcome) && (!query.since || Date.parse(e.received_at) >= query.since) && (query.until === undefined || Date.parse(e.received_at) <= query.until))
      .sort((a, b) => (`${a.received_at}#${a.request_id}` < `${b.received_at}#${b.request_id}` ? 1 : -1))
      .slice(0, query.limit);
  }

  async listFiltered(query: FilteredQuery): Promise<FilteredRequests> {
    const all = await this.list({ limit: this.stored.length, ...(query.until !== undefined ? { until: query.until } : {}) });
    return { entries: all.filter((e) => filterRefusal(e, query.subscription)).slice(0, query.limit) };
  }
}

export class MemoryDebounceStore implements DebounceStore {
  private readonly latest = new Map<string, { eventId: string; expires: number }>();
  constructor(private readonly clock: Clock) {}
  async setLatest(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): Promise<void> {
    this.latest.set(`${subscription}#${subjectKey}`, { eventId, expires: this.clock.now() + ttlSeconds * 1000 });
  }
  async getLatest(subscription: string, subjectKey: string): Promise<string | undefined> {
    const hit = this.latest.get(`${subscription}#${subjectKey}`);
    return hit && hit.expires > this.clock.now() ? hit.eventId : undefined;
  }
}

export class MemoryCounterStore implements CounterStore {
  private readonly counts = new Map<string, number>();
  async add(key: string, amount: number): Promise<number> {
    const total = (this.counts.get(key) ?? 0) + amount;
    this.counts.set(key, total);
    return total;
  }
  async get(key: string): Promise<number> {
    return this.counts.get(key) ?? 0;
  }
}
