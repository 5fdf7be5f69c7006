/**
 * The console's views over the same ports as the CLI: subscriptions, the event log, the
 * payload store and (when an adapter is wired) the request log. Everything returned has
 * been through `scrub`: no secret value reaches the page.
 */
import type { EventLog } from '../../functions/core/ports';
import type { EventRecord, EventStatus, EventSummary, RequestOutcome, RequestRecord } from '../../functions/core/types';
import { usageEstimated } from '../../functions/core/agent/run-record';
import { acceptedFor } from '../../functions/core/subscriptions/held-settle';
import type { Stores } from '../context';
import { subscriptionJson } from '../output';
import { scrub } from './redact';
import { chart, durationMs, endpointOf, listEvents, SEARCH_BUDGET, tokensShown, type EventFilters } from './list-view';
import { bounded, findEventRequest, findRequestEntry } from './shape';
import { codehostEndpoints, receivesCustom, type Endpoint } from '../setup-hints';
import { AbandonedCheck } from './abandoned-check';

/**
 * The stores the console reads, the same members as the CLI's (`Stores`): pause, resume and
 * replay hand them on whole (lifecycle.ts). `requests`: when this build has an adapter for it.
 * `dedup` (AWS): the claims that tell a request that died before its event was queued.
 */
export type SharedStores = Pick<Stores, 'subscriptions' | 'events' | 'queue' | 'payloads' | 'requests' | 'leases' | 'release' | 'dedup' | 'where'>;

export interface ConsoleSources extends SharedStores {
  /** Where the webhook endpoints are reached from outside (`webhooks.public_url`). */
  publicUrl: string;
  /** Secret values to cut out of anything shown (configuration tokens and webhook secrets). */
  secretValues?: () => string[];
}

export type { EventFilters } from './list-view';

export function eventSummary(r: EventRecord) {
  return {
    event_id: r.event_id, delivery_id: r.delivery_id, subscription: r.subscription, received_at: r.received_at, updated_at: r.updated_at,
    endpoint: endpointOf(r), event: r.event, action: r.action ?? null, status: r.status, duration_ms: durationMs(r), attempts: r.attempts ?? 0,
    model: r.usage?.model ?? null, ...tokensShown(r.usage),
    replay_of: r.message.replay_of ?? null, error: r.error ?? null,
  };
}

export class ConsoleData {
  /**
   * `searchBudget`: records one list answer reads at most (list-view.ts). `abandoned`: the
   * handler's check, kept across requests (it checks each subscription once a minute at most).
   */
  constructor(private readonly sources: ConsoleSources, private readonly searchBudget = SEARCH_BUDGET, private readonly abandoned = new AbandonedCheck()) {}

  private async secrets(): Promise<string[]> {
    const subscriptions = await this.sources.subscriptions.list();
    return [...subscriptions.map((s) => s.secret), ...(this.sources.secretValues?.() ?? [])];
  }

  private async clean<T>(value: T): Promise<T> {
    return scrub(value, await this.secrets());
  }

  get hasRequestLog(): boolean {
    return this.sources.requests !== undefined;
  }

  async info() {
    return this.clean({ where: this.sources.where, public_url: this.sources.publicUrl, request_log: this.hasRequestLog });
  }

  /** The whole event log, newest first, filtered in the store (list-view.ts, event-list.ts). */
  async listEvents(filters: EventFilters) {
    const subscriptions = await this.sources.subscriptions.list();
    // As `webhook events` does before it lists: records of requests that died before queueing end `abandoned` (AWS).
    await this.abandoned.subscriptions(this.sources, filters.subscription ? [filters.subscription] : subscriptions.map((s) => s.name));
    return this.clean(await listEvents(this.sources.events, subscriptions, filters, this.searchBudget));
  }

  /** Events per hour for the last 24 h, by outcome. */
  async chart(nowMs: number) {
    return chart(this.sources.events, await this.sources.subscriptions.list(), nowMs);
  }

  private async payloadOf(r: EventRecord): Promise<{ payload: unknown; payload_error?: string }> {
    if (r.message.payload) return { payload: bounded(r.message.payload) };
    if (!r.message.payload_ref) return { payload: null };
    if (!this.sources.payloads) return { payload: null, payload_error: 'the payload is kept in the payload store, which this console cannot read' };
    try {
      // Kept as raw bytes when deeper than a message may carry: cut to what the page can show.
      return { payload: bounded(JSON.parse(await this.sources.payloads.get(r.message.payload_ref))) };
    } catch (error) {
      return { payload: null, payload_error: error instanceof Error ? error.message : String(error) };
    }
  }

  private async transcriptOf(r: EventRecord): Promise<unknown> {
    const ref = r.transcript_ref;
    if (!ref) return null;
    try {
      return bounded(JSON.parse(ref));
    } catch {
      // Not inline: a pointer into the payload store.
    }
    if (!this.sources.payloads) return null;
    try {
      const text = await this.sources.payloads.get(ref);
      try {
        return bounded(JSON.parse(text));
      } catch {
        return text;
      }
    } catch {
      return null;
    }
  }

  /**
   * The request that stored the event: searched in a window around the event's own time,
   * at its endpoint, among the outcomes that store events (a later duplicate delivery
   * carries the id too). The newest 1,000 entries of every kind lost it after a burst of
   * pushes (hunt 8 D6); what came after the window is not read at all. A replay came from
   * no request.
   */
  private async requestOf(first: EventRecord): Promise<RequestRecord | null> {
    return (await findEventRequest(this.sources.requests, first)) ?? null;
  }

  /** Every record of one event (one per subscription) with its payload, prompt, transcript and targets. */
  async event(eventId: string) {
    const read = await this.sources.events.getEvent(eventId);
    if (read.length === 0) return undefined;
    const records = await this.abandoned.shown(this.sources, read);
    const first = records[0]!;
    const { payload, payload_error } = await this.payloadOf(first);
    const request = await this.requestOf(first);
    const current = new Map((await this.sources.subscriptions.list()).map((s) => [s.name, s]));
    const subscriptions = await Promise.all(records.map(async (r) => {
      // A record accepted for an earlier subscription of the same name (deleted, then created
      // again) is not the current one's: its filters are not that record's filters.
      const now = current.get(r.subscription);
      const mine: boolean = acceptedFor(r, now);
      return {
        event_filters: mine && now ? now.events : null, filters: mine && now ? now.filters ?? [] : null,
        subscription_created_at: r.message.subscription_created_at ?? null,
        earlier_subscription: mine ? null : now
          ? `Accepted for an earlier subscription named '${r.subscription}'${r.message.subscription_created_at ? ` (created ${r.message.subscription_created_at})` : ''}, since deleted: the '${r.subscription}' created at ${now.created_at} is another one, and its filters and targets are not this event's`
          : `The subscription '${r.subscription}' has been deleted since this event arrived`,
        ...eventSummary(r), prompt: r.prompt ?? null, reply: r.reply ?? null, warnings: r.warnings ?? [],
        targets: r.targets ?? {}, timings: r.timings ?? {}, usage: r.usage ?? null, superseded_by: r.superseded_by ?? null,
        transcript: await this.transcriptOf(r),
      };
    }));
    return this.clean({
      event_id: eventId, delivery_id: first.delivery_id, source: first.source, event: first.event, action: first.action ?? null,
      received_at: first.received_at, subject_key: first.message.subject_key ?? null, replay_of: first.message.replay_of ?? null,
      payload, payload_error: payload_error ?? null,
      request: request && { ...request, headers: request.header_names.map((name) => ({ name, value: null })) },
      records: subscriptions,
    });
  }

  /** The request-log entry behind a `req_…` id (a request the payload filters turned away), or undefined. */
  async requestEntry(requestId: string) {
    const entry = await findRequestEntry(this.sources.requests, requestId);
    return entry && this.clean(entry);
  }

  async listRequests(query: { endpoint?: string; outcome?: string; since?: number; limit: number }) {
    if (!this.sources.requests) return null;
    const entries = await this.sources.requests.list({
      limit: query.limit,
      ...(query.endpoint ? { endpoint: query.endpoint } : {}),
      ...(query.outcome ? { outcome: query.outcome as RequestOutcome } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
    });
    return this.clean(entries);
  }

  /** `fallbackBase`: where this page was reached, for URLs when no `webhooks.public_url` is set. */
  async listSubscriptions(fallbackBase = 'http://127.0.0.1:8644') {
    const base = (this.sources.publicUrl || fallbackBase).replace(/\/+$/, '');
    const subscriptions = await this.sources.subscriptions.list();
    const counts = await Promise.all(subscriptions.map((s) => countHeld(this.sources.events, s.name)));
    return this.clean(subscriptions.map((s, i) => ({
      ...subscriptionJson(s), held: counts[i],
      // Only the endpoints it really receives, as `webhook subscribe`/`show` print them (hunt 5 D8).
      urls: Object.fromEntries([
        ...codehostEndpoints(s.events).map((e) => [e, `${base}/webhooks/${e}`]),
        ...(receivesCustom(s.events) ? [['custom', `${base}/webhooks/custom/${s.name}`]] : []),
      ]) as Partial<Record<Endpoint, string>>,
    })));
  }
}

const COUNT_PAGE = 500;

/** How many records a subscription holds; where the store can, a page of small summaries at a time (no payloads read). */
async function countHeld(events: EventLog, subscription: string): Promise<number> {
  if (!events.listSummariesByStatus) return (await events.listByStatus(subscription, 'held' as EventStatus)).length;
  let count = 0;
  let after: EventSummary | undefined;
  for (;;) {
    const page = await events.listSummariesByStatus(subscription, 'held' as EventStatus, { receivedBefore: '\uffff', limit: COUNT_PAGE, ...(after ? { after } : {}) });
    count += page.length;
    if (page.length < COUNT_PAGE) return count;
    after = page[page.length - 1];
  }
}
