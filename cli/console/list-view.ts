/**
 * What the console's list and chart answer, over the whole event log (event-list.ts):
 * each record's summary, marked when the subscription it was accepted for has been
 * deleted (or deleted and created again: the one of that name now is another one).
 */
import { usageEstimated } from '../../functions/core/agent/run-record';
import type { EventLog, ListedEvent } from '../../functions/core/ports';
import type { AgentUsage, EventStatus, Source, Subscription } from '../../functions/core/types';
import { tokensOf } from '../../functions/core/worker/budget';
import { encodeCursor, searchLog, type Position } from './event-list';
import { recordedNames } from '../recorded-names';

export interface EventFilters {
  subscription?: string;
  status?: string;
  endpoint?: string;
  /** Epoch ms: only events received at or after it. */
  since?: number;
  /** Free text matched against the event id and the delivery id. */
  q?: string;
  limit: number;
  /** Where this page starts (the `next` of an earlier answer, decoded). */
  cursor?: Position;
}

/** Records one list answer reads at most (a rarely matching filter stops there and says so). */
export const SEARCH_BUDGET = 5_000;
/** Records the 24 h chart counts at most (hours past them are marked partial). */
const CHART_RECORDS = 5_000;

type Summarised = Pick<ListedEvent, 'source' | 'subscription' | 'timings' | 'status' | 'updated_at' | 'received_at'>;

export const endpointOf = (r: Pick<ListedEvent, 'source' | 'subscription'>): string => (r.source === 'custom' ? `custom/${r.subscription}` : r.source);

export function durationMs(r: Summarised): number | null {
  if (typeof r.timings?.total_ms === 'number') return r.timings.total_ms;
  if (['delivered', 'suppressed', 'failed'].includes(r.status)) return Math.max(0, Date.parse(r.updated_at) - Date.parse(r.received_at));
  return null;
}

/**
 * Whether `r` was accepted for the subscription of its name defined now: by the stamp its
 * message carries where the store has it at hand, else by time (a record that arrived
 * before the subscription was created was accepted for an earlier one).
 */
function acceptedByCurrent(r: ListedEvent, current: Subscription | undefined): boolean {
  if (!current) return false;
  return r.subscription_created_at !== undefined ? r.subscription_created_at === current.created_at : r.received_at >= current.created_at;
}

/** An event's tokens as `webhook usage` and the daily budgets count them (cache reads and writes included), and whether they are estimated. */
export function tokensShown(usage: AgentUsage | undefined): { tokens: number | null; tokens_estimated?: true } {
  if (!usage) return { tokens: null };
  return { tokens: tokensOf(usage), ...(usageEstimated(usage) ? { tokens_estimated: true as const } : {}) };
}

export function listedSummary(r: ListedEvent, current: Subscription | undefined) {
  return {
    event_id: r.event_id, delivery_id: r.delivery_id, subscription: r.subscription, subscription_deleted: !acceptedByCurrent(r, current),
    received_at: r.received_at, updated_at: r.updated_at, endpoint: endpointOf(r), event: r.event, action: r.action ?? null, status: r.status,
    duration_ms: durationMs(r), attempts: r.attempts ?? 0, model: r.usage?.model ?? null, ...tokensShown(r.usage),
    error: r.error ?? null,
  };
}

const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

export async function listEvents(events: EventLog, subscriptions: Subscription[], filters: EventFilters, budget = SEARCH_BUDGET) {
  const current = new Map(subscriptions.map((s) => [s.name, s]));
  const recorded = await recordedNames(events, [...current.keys()]);
  let names = filters.subscription ? [filters.subscription] : recorded.names;
  let source: Source | undefined;
  if (filters.endpoint) {
    const custom = /^custom\/(.+)$/.exec(filters.endpoint)?.[1];
    if (custom) [source, names] = ['custom', names.filter((n) => n === custom)];
    else if (filters.endpoint === 'github' || filters.endpoint === 'gitlab') source = filters.endpoint;
    else names = []; // no such endpoint: nothing came in on it
  }
  const q = filters.q?.trim();
  const page = await searchLog(events, names, {
    limit: filters.limit, ...(filters.since !== undefined ? { since: new Date(filters.since).toISOString() } : {}),
    ...(filters.status ? { status: filters.status as EventStatus } : {}), ...(source ? { source } : {}), ...(q ? { text: q } : {}),
    ...(filters.cursor ? { after: filters.cursor } : {}),
  }, budget);
  return {
    events: page.records.map((r) => listedSummary(r, current.get(r.subscription))),
    next: page.next ? encodeCursor(page.next) : null,
    searched: page.stoppedAt ? {
      examined: page.examined, until: page.stoppedAt.received_at,
      note: `Searched ${page.examined} records, back to ${utc(page.stoppedAt.received_at)}, without finding ${filters.limit} that match: older ones were not searched yet ('next' goes on from there)`,
    } : null,
    // Only an answer over every subscription can miss a deleted one's events.
    note: filters.subscription ? null : recorded.note ?? null,
    deleted_subscriptions: recorded.names.filter((n) => !current.has(n)).sort(),
  };
}

/** Events per hour for the last 24 h, by outcome; `partial` marks hours the chart could not count whole. */
export async function chart(events: EventLog, subscriptions: Subscription[], nowMs: number) {
  const hour = 3600_000;
  const end = Math.floor(nowMs / hour) * hour + hour;
  const start = end - 24 * hour;
  const buckets = Array.from({ length: 24 }, (_, i) => ({ hour: new Date(start + i * hour).toISOString(), delivered: 0, suppressed: 0, failed: 0, other: 0, partial: false }));
  const { names } = await recordedNames(events, subscriptions.map((s) => s.name));
  const page = await searchLog(events, names, { limit: CHART_RECORDS, since: new Date(start).toISOString() }, 2 * CHART_RECORDS);
  for (const r of page.records) {
    const at = Date.parse(r.received_at);
    if (at < start || at >= end) continue;
    const bucket = buckets[Math.floor((at - start) / hour)]!;
    const key = r.status === 'delivered' || r.status === 'suppressed' || r.status === 'failed' ? r.status : 'other';
    bucket[key] += 1;
  }
  // Records at or below `next` were not counted: the hours from there back are short.
  if (page.next) {
    const upTo = Date.parse(page.next.received_at);
    for (const bucket of buckets) if (Date.parse(bucket.hour) <= upTo) bucket.partial = true;
  }
  return buckets;
}
