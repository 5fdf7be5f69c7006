/**
 * `webhook events <name>` also lists the requests that subscription's payload filters
 * turned away: they are not events (nothing was stored or queued), so they come from the
 * request log (7 days), where each candidate's verdict says which filter failed.
 */
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

/** How far back in the request log `events` looks for filtered requests. */
const SCAN = 1000;

export async function filteredFor(stores: Stores, name: string, limit: number): Promise<FilteredEvent[]> {
  if (!stores.requests) return [];
  const requests = await stores.requests.list({ limit: Math.max(SCAN, limit) });
  const out: FilteredEvent[] = [];
  for (const r of requests) {
    const verdict = r.candidates?.find((c) => c.subscription === name && !c.matched && c.reason.startsWith('filter '));
    if (!verdict) continue;
    out.push({
      request_id: r.request_id, received_at: r.received_at, reason: verdict.reason,
      ...(r.event ? { event: r.event } : {}), ...(r.action ? { action: r.action } : {}), ...(r.delivery_id ? { delivery_id: r.delivery_id } : {}),
    });
    if (out.length >= limit) break;
  }
  return out;
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
