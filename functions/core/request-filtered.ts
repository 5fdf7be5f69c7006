/**
 * The request log's per-subscription index of payload-filter refusals (hunt 11 D3): a
 * request a subscription's `--filter` turned away is no event, so `webhook events <name>`
 * finds it in the request log. The stores index it by subscription when the entry is
 * written, because its outcome may be `accepted` (for another subscription) as well as
 * `filtered`, so no listing by outcome finds one subscription's refusals.
 */
import type { CandidateVerdict, RequestRecord } from './types';

/** A payload filter's refusal (select.ts: `filter "…" failed (…)`), as against an event-filter miss or a paused subscription. */
export function isFilterRefusal(verdict: CandidateVerdict): boolean {
  return !verdict.matched && verdict.reason.startsWith('filter ');
}

/**
 * A subscription the event type never reached (routing, events/filters.ts: `event filters … do
 * not match …`, `no events: reached only through its custom endpoint`), as against one it
 * reached: matched, held, or refused by its payload filters.
 */
export function isEventFilterMiss(verdict: CandidateVerdict): boolean {
  return !verdict.matched && /^(event filters |no events)/.test(verdict.reason);
}

/** The verdict by which `subscription`'s payload filters turned this request away, if they did. */
export function filterRefusal(entry: RequestRecord, subscription: string): CandidateVerdict | undefined {
  return entry.candidates?.find((c) => c.subscription === subscription && isFilterRefusal(c));
}

/** Every subscription whose payload filters turned this request away, each once: the index entries to write with it. */
export function filteredSubscriptions(entry: RequestRecord): string[] {
  return [...new Set((entry.candidates ?? []).filter(isFilterRefusal).map((c) => c.subscription))];
}
