/** RequestLog in memory, as the port says: most recent first, filtered by endpoint, outcome and time. */
import type { RequestLog, RequestQuery } from '../../functions/core/ports';
import type { RequestRecord } from '../../functions/core/types';

export class MemoryRequestLog implements RequestLog {
  readonly entries: RequestRecord[] = [];

  async record(entry: RequestRecord): Promise<void> {
    this.entries.push(structuredClone(entry));
  }

  async list(query: RequestQuery): Promise<RequestRecord[]> {
    return this.entries
      .filter((e) => (!query.endpoint || e.endpoint === query.endpoint) && (!query.outcome || e.outcome === query.outcome)
        && (query.since === undefined || Date.parse(e.received_at) >= query.since))
      .sort((a, b) => b.received_at.localeCompare(a.received_at))
      .slice(0, query.limit)
      .map((e) => structuredClone(e));
  }
}
