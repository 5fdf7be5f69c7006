/**
 * Subscription event filters (DESIGN §2.4): `pull_request` matches every action,
 * `pull_request.opened` one; `*` every event. A filter may name its source
 * (`github:push`, `gitlab:merge_request.open`, `custom:alert`); an unqualified filter
 * matches on every endpoint that reaches the subscription.
 *
 * Routing: `/webhooks/github` and `/webhooks/gitlab` fan out only to subscriptions whose
 * events name the event (or `*`); a subscription with no events is reached only through
 * its own custom endpoint, where it takes every event.
 */
import type { Source } from '../types';

const SOURCES: readonly Source[] = ['github', 'gitlab', 'custom'];

/** A filter split into its optional source and the event filter proper. */
export function splitSource(filter: string): { source?: Source; rest: string } {
  const colon = filter.indexOf(':');
  if (colon > 0) {
    const prefix = filter.slice(0, colon) as Source;
    if (SOURCES.includes(prefix)) return { source: prefix, rest: filter.slice(colon + 1) };
  }
  return { rest: filter };
}

/** Whether one filter matches an event; `source` undefined ignores source qualifiers. */
/**
 * The event and action of a filter's type for a sample or a preview: split at the first dot,
 * the action keeping the rest (`incident.responder.added` → `incident`, `responder.added`).
 * `filterMatches` takes that pair, as it takes `deploy.finished` + `ok`.
 */
export function splitType(rest: string): [event: string, action: string | undefined] {
  const dot = rest.indexOf('.');
  return dot < 0 ? [rest, undefined] : [rest.slice(0, dot), rest.slice(dot + 1) || undefined];
}

export function filterMatches(filter: string, event: string, action: string | undefined, source?: Source): boolean {
  const split = splitSource(filter);
  if (split.source && source && split.source !== source) return false;
  const rest = split.rest;
  if (rest === '*' || rest === event) return true;
  // `<event>.<action>`, where the event may hold dots itself (a custom `deploy.finished`).
  return action !== undefined && rest.length === event.length + 1 + action.length && rest.startsWith(event) && rest[event.length] === '.' && rest.endsWith(action);
}

/** An empty filter list matches every event (on the subscription's own custom endpoint). */
export function eventMatches(filters: readonly string[], event: string, action: string | undefined, source?: Source): boolean {
  return filters.length === 0 || filters.some((filter) => filterMatches(filter, event, action, source));
}

export interface RouteVerdict {
  matched: boolean;
  /** Why, for the request log. */
  reason: string;
}

/** Whether a request on `source`'s endpoint reaches `events` (a subscription's filters). */
export function routeMatches(events: readonly string[], source: Source, event: string, action: string | undefined): RouteVerdict {
  const shown = action ? `${event}.${action}` : event;
  if (events.length === 0) {
    return source === 'custom'
      ? { matched: true, reason: 'no events: takes every event of its custom endpoint' }
      : { matched: false, reason: 'no events: reached only through its custom endpoint' };
  }
  const hit = events.find((filter) => filterMatches(filter, event, action, source));
  if (hit !== undefined) return { matched: true, reason: `event filter ${hit} matches ${source}:${shown}` };
  return { matched: false, reason: `event filters ${events.join(', ')} do not match ${source}:${shown}` };
}
