/**
 * `webhook events <name>` also lists the requests that subscription's payload filters
 * turned away: they are not events (nothing was stored or queued), so they come from the
 * request log (7 days), where each candidate's verdict says which filter failed. The stores
 * index them by subscription when the entry is written (RequestLog.listFiltered): looking
 * for them among the newest entries of the whole log lost them behind other traffic.
 */
import type { FilteredRequests, RequestLog } from '../../functions/core/ports';
import { filterRefusal } from '../../functions/core/request-filtered';
import type { Stores } from '../context';
import { clip } from '../output';

export interface FilteredEvent {
  request_id: string;
  received_at: string;
  event?: string;
  action?: string;
  delivery_id?: string;
  reason: string;
}

/** How far back in the request log a store without `listFiltered` (a test's wrapper) is searched. */
const SCAN = 1000;

async function filteredRequests(requests: RequestLog, subscription: string, limit: number): Promise<FilteredRequests> {
  if (requests.listFiltered) return requests.listFiltered({ subscription, limit });
  const scanned = await requests.list({ limit: Math.max(SCAN, limit) });
  const entries = scanned.filter((r) => filterRefusal(r, subscription)).slice(0, limit);
  return scanned.length < SCAN || entries.length >= limit ? { entries } : { entries, partial: `Filtered requests were searched among the newest ${SCAN} entries of the request log only.` };
}

/** Newest first, `limit` at most; `warn` hears when some may be missing (FilteredRequests.partial). */
export async function filteredFor(stores: Stores, name: string, limit: number, warn?: (text: string) => void): Promise<FilteredEvent[]> {
  if (!stores.requests) return [];
  const { entries, partial } = await filteredRequests(stores.requests, name, limit);
  if (partial) warn?.(partial);
  return entries.flatMap((r) => {
    const verdict = filterRefusal(r, name);
    if (!verdict) return [];
    return [{
      request_id: r.request_id, received_at: r.received_at, reason: verdict.reason,
      ...(r.event ? { event: r.event } : {}), ...(r.action ? { action: r.action } : {}), ...(r.delivery_id ? { delivery_id: r.delivery_id } : {}),
    }];
  });
}

export function filteredJson(f: FilteredEvent): Record<string, unknown> {
  return {
    event_id: null, request_id: f.request_id, status: 'filtered', event: f.event ?? null, action: f.action ?? null,
    delivery_id: f.delivery_id ?? null, received_at: f.received_at, reason: f.reason,
  };
}

export function filteredRow(f: FilteredEvent): string[] {
  const event = f.event ? (f.action ? `${f.event}.${f.action}` : f.event) : '-';
  return [f.received_at.slice(0, 19).replace('T', ' '), f.request_id, event, 'filtered', '0', clip(f.reason, 160)];
}
