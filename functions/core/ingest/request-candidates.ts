/**
 * The candidate verdicts a request-log entry keeps (hunt 13 D3). With many subscriptions,
 * most verdicts are event-filter misses (subscriptions that never listened for the event);
 * the ones that matter are those the event reached: matched ones, then payload-filter
 * refusals, which `webhook requests`, `webhook events <name> --status filtered` (the stores
 * index refusals from the entry: request-filtered.ts) and `replay req_…` read. Those come
 * first and are all kept; only misses are cut, and the entry says how many.
 */
import { isEventFilterMiss, isFilterRefusal } from '../request-filtered';
import type { CandidateVerdict } from '../types';

/** Verdicts an entry keeps when the event reached fewer subscriptions: misses fill the room up to it. */
export const MAX_CANDIDATES = 100;
/** Routed verdicts an entry keeps at most, to bound its size (DynamoDB items: 400 KB) whatever the configuration. */
export const MAX_ROUTED_CANDIDATES = 200;

/** Matched first, then payload-filter refusals, then misses; each in the order given (store order: by name; the sort is stable). */
function rank(verdict: CandidateVerdict): number {
  if (verdict.matched) return 0;
  return isFilterRefusal(verdict) ? 1 : isEventFilterMiss(verdict) ? 3 : 2;
}

/** The verdicts to record, routed ones first, and how many were left out. */
export function keptCandidates(verdicts: readonly CandidateVerdict[]): { candidates: CandidateVerdict[]; omitted: number } {
  const ordered = [...verdicts].sort((a, b) => rank(a) - rank(b));
  const routed = ordered.filter((v) => !isEventFilterMiss(v)).length;
  const keep = routed >= MAX_ROUTED_CANDIDATES ? MAX_ROUTED_CANDIDATES : Math.max(routed, MAX_CANDIDATES);
  return { candidates: ordered.slice(0, keep), omitted: Math.max(0, ordered.length - keep) };
}

/** `and 37 others whose event filters do not match`, for an entry that left verdicts out. */
export function omittedNote(candidates: readonly CandidateVerdict[], omitted: number | undefined): string | undefined {
  if (!omitted) return undefined;
  const others = `${omitted} other${omitted === 1 ? '' : 's'}`;
  // Routed verdicts are cut only past MAX_ROUTED_CANDIDATES, and then no miss is kept.
  const routedCut = candidates.length >= MAX_ROUTED_CANDIDATES && !candidates.some(isEventFilterMiss);
  return routedCut ? `and ${others} not listed (the log keeps ${MAX_ROUTED_CANDIDATES} verdicts of subscriptions the event reached)` : `and ${others} whose event filters do not match`;
}
