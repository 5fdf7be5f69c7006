/**
 * Which subscriptions take an event, and why each candidate did or did not (issue 17):
 * the event filter (routing), then the payload filters. Paused subscriptions match and
 * hold their events.
 */
import { routeMatches } from '../events/filters';
import { firstFailingFilter } from '../filters/evaluate';
import type { CandidateVerdict, Source, Subscription } from '../types';

export interface Selection {
  matched: Subscription[];
  /** How many candidates the event filters let through (before payload filters). */
  routed: number;
  verdicts: CandidateVerdict[];
}

export function selectSubscriptions(candidates: readonly Subscription[], source: Source, event: string, action: string | undefined, payload: unknown): Selection {
  const matched: Subscription[] = [];
  const verdicts: CandidateVerdict[] = [];
  let routed = 0;
  for (const subscription of candidates) {
    const route = routeMatches(subscription.events, source, event, action);
    if (!route.matched) {
      verdicts.push({ subscription: subscription.name, matched: false, reason: route.reason });
      continue;
    }
    routed += 1;
    const failed = firstFailingFilter(subscription.filters, payload);
    if (failed) {
      verdicts.push({ subscription: subscription.name, matched: false, reason: `filter "${failed.filter}" failed (${failed.detail})` });
      continue;
    }
    matched.push(subscription);
    const filters = subscription.filters?.length ? `; ${subscription.filters.length} payload filter(s) hold` : '';
    verdicts.push({ subscription: subscription.name, matched: true, reason: `${route.reason}${filters}${subscription.state === 'paused' ? '; paused: held' : ''}` });
  }
  return { matched, routed, verdicts };
}
