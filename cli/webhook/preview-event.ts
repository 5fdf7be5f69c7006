/**
 * The event type `webhook test` and `test --dry-run` render with: what the service would
 * classify the payload as on the endpoint the subscription is reached through (DESIGN
 * §2.1 "Event type"), so a preview without `--event` shows the `Event: deploy.done` or
 * `issues.opened` that a delivered reply shows, not the first filter's bare name.
 */
import { classifyEvent, gitlabHeaderFor, type Payload } from '../../functions/core/events/classify';
import { splitSource, splitType } from '../../functions/core/events/filters';
import { eventOrigin } from '../../functions/core/events/known';
import type { Source, Subscription } from '../../functions/core/types';
import { githubEventKeys, githubEventOf, holdsKeys } from './github-event-keys';

export interface PreviewEvent {
  source: Source;
  event: string;
  action?: string;
}

/** Whether a filter can match on `host`'s endpoint (`github:x`, `*`, or an unqualified name that host sends). */
function reaches(filter: string, host: 'github' | 'gitlab'): boolean {
  const { source, rest } = splitSource(filter);
  if (source) return source === host;
  if (rest === '*') return true;
  const origin = eventOrigin(rest.split('.')[0] ?? rest);
  return origin === host || origin === 'both';
}

/**
 * The event filter a payload given without `--event` is judged by (hunt 7): not simply the
 * first one, which would send a GitLab merge request to `/webhooks/github` as `issues` when
 * the subscription's events are `issues.opened,merge_request`. A GitLab payload (it names
 * its `object_kind`) goes by the first filter GitLab's endpoint can match; a GitHub one by
 * the filter whose event the payload's keys show (the most specific: a review payload
 * holds `pull_request` too), else by a `*` or `github:*` filter when its keys show a GitHub
 * event (hunt 8 D1: `concreteFilter` names it); otherwise the first filter, as before.
 */
export function filterForPayload(events: readonly string[], payload: Payload): string | undefined {
  if (typeof payload.object_kind === 'string') {
    const gitlab = events.find((filter) => reaches(filter, 'gitlab'));
    if (gitlab !== undefined) return gitlab;
  }
  let best: { filter: string; keys: number } | undefined;
  for (const filter of events) {
    const { rest } = splitSource(filter);
    if (rest === '*' || !reaches(filter, 'github')) continue;
    const name = rest.split('.')[0] ?? rest;
    const keys = githubEventKeys(name);
    if (holdsKeys(payload, keys) && (!best || keys.length > best.keys)) best = { filter, keys: keys.length };
  }
  const wildcard = best ? undefined : events.find((filter) => splitSource(filter).rest === '*' && reaches(filter, 'github'));
  if (wildcard !== undefined && concreteFilter(wildcard, payload) !== wildcard) return wildcard;
  return best?.filter ?? events[0];
}

/**
 * A `*`, `github:*` or `gitlab:*` filter made concrete by the payload it judges, as the
 * endpoint the payload's sender posts to would classify it: a GitLab payload as
 * `gitlab:<object_kind>`; a GitHub one as `github:<event>` its keys show (GitHub names the
 * event only in a header). Any other filter, or a payload that shows neither, as it is: a
 * payload naming its own type (`event_type`, …) is a custom sender's.
 */
export function concreteFilter(filter: string, payload: Payload): string {
  if (splitSource(filter).rest !== '*') return filter;
  if (typeof payload.object_kind === 'string' && reaches(filter, 'gitlab')) {
    const identity = classifyEvent('gitlab', {}, payload);
    if (identity) return `gitlab:${identity.event}`;
  }
  if (!reaches(filter, 'github') || classifyEvent('custom', {}, payload)?.event !== 'custom') return filter;
  const event = githubEventOf(payload);
  return event === undefined ? filter : `github:${event}`;
}

/** `--event` as given (`name` or `name.action`, optionally `github:`/`gitlab:`), else the payload classified. */
export function previewEvent(subscription: Pick<Subscription, 'events'>, payload: Payload, eventOption?: string): PreviewEvent {
  const fitting = eventOption ?? filterForPayload(subscription.events, payload);
  // A wildcard shows no event: the one the payload is, on the endpoint its sender posts to.
  const filter = fitting === undefined ? undefined : concreteFilter(fitting, payload);
  const { source, rest } = filter === undefined ? { source: 'custom' as const, rest: '*' } : splitSource(filter);
  const [name = '*', filterAction] = splitType(rest);
  const origin = eventOrigin(name);
  const endpoint: Source = source ?? (typeof payload.object_kind === 'string' && origin !== 'github' ? 'gitlab' : origin === 'github' || origin === 'both' ? 'github' : origin === 'gitlab' ? 'gitlab' : 'custom');
  // `--event` naming its event decides; a wildcard made concrete is classified below, with its action.
  if (eventOption !== undefined && filter === eventOption && name !== '*') return { source: endpoint, event: name, ...(filterAction ? { action: filterAction } : {}) };
  // GitHub names the event in a header only, and so does GitLab for a hook without
  // `object_kind` (member, project, subgroup hooks): the filter's name stands in for it.
  const gitlabHeader = endpoint === 'gitlab' && name !== '*' && typeof payload.object_kind !== 'string' ? gitlabHeaderFor(name) : undefined;
  const headers = endpoint === 'github' && name !== '*' ? { 'x-github-event': name } : gitlabHeader ? { 'x-gitlab-event': gitlabHeader } : {};
  const identity = classifyEvent(endpoint, headers, payload);
  // On a custom endpoint a payload naming no event is `custom`, as the service classifies it (hunt 5 D2):
  // the filter's own name would hide that the filters do not take it.
  if (identity) return { source: endpoint, event: identity.event, ...(identity.action ? { action: identity.action } : {}) };
  return { source: endpoint, event: name === '*' ? 'custom' : name, ...(filterAction ? { action: filterAction } : {}) };
}

/** `event.action`, as prompts and the event log name it. */
export const previewType = (preview: PreviewEvent): string => (preview.action ? `${preview.event}.${preview.action}` : preview.event);
