/**
 * The event type `webhook test` and `test --dry-run` render with: what the service would
 * classify the payload as on the endpoint the subscription is reached through (DESIGN
 * §2.1 "Event type"), so a preview without `--event` shows the `Event: deploy.done` or
 * `issues.opened` that a delivered reply shows, not the first filter's bare name.
 */
import { classifyEvent, type Payload } from '../../functions/core/events/classify';
import { splitSource } from '../../functions/core/events/filters';
import { eventOrigin } from '../../functions/core/events/known';
import type { Source, Subscription } from '../../functions/core/types';

export interface PreviewEvent {
  source: Source;
  event: string;
  action?: string;
}

/**
 * The payload keys that show a GitHub payload is of an event (GitHub names the event only
 * in a header); an event not listed shows by a key of its own name (`pull_request`,
 * `check_run`, `release`, …).
 */
const GITHUB_EVENT_KEYS: Record<string, readonly string[]> = {
  issues: ['issue'],
  issue_comment: ['issue', 'comment'],
  pull_request_review: ['pull_request', 'review'],
  pull_request_review_comment: ['pull_request', 'comment'],
  pull_request_review_thread: ['pull_request', 'thread'],
  commit_comment: ['comment'],
  discussion_comment: ['discussion', 'comment'],
  push: ['ref', 'commits'],
  status: ['sha', 'state'],
  create: ['ref', 'ref_type'],
  delete: ['ref', 'ref_type'],
};

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
 * holds `pull_request` too); otherwise the first filter, as before.
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
    const keys = GITHUB_EVENT_KEYS[name] ?? [name];
    if (keys.every((key) => Object.hasOwn(payload, key)) && (!best || keys.length > best.keys)) best = { filter, keys: keys.length };
  }
  return best?.filter ?? events[0];
}

/** `--event` as given (`name` or `name.action`, optionally `github:`/`gitlab:`), else the payload classified. */
export function previewEvent(subscription: Pick<Subscription, 'events'>, payload: Payload, eventOption?: string): PreviewEvent {
  const filter = eventOption ?? filterForPayload(subscription.events, payload);
  const { source, rest } = filter === undefined ? { source: 'custom' as const, rest: '*' } : splitSource(filter);
  const [name = '*', filterAction] = rest.split('.');
  const origin = eventOrigin(name);
  const endpoint: Source = source ?? (typeof payload.object_kind === 'string' && origin !== 'github' ? 'gitlab' : origin === 'github' || origin === 'both' ? 'github' : origin === 'gitlab' ? 'gitlab' : 'custom');
  if (eventOption !== undefined && name !== '*') return { source: endpoint, event: name, ...(filterAction ? { action: filterAction } : {}) };
  // GitHub names the event in a header only: the filter's name stands in for it.
  const identity = classifyEvent(endpoint, endpoint === 'github' && name !== '*' ? { 'x-github-event': name } : {}, payload);
  // On a custom endpoint a payload naming no event is `custom`, as the service classifies it (hunt 5 D2):
  // the filter's own name would hide that the filters do not take it.
  if (identity) return { source: endpoint, event: identity.event, ...(identity.action ? { action: identity.action } : {}) };
  return { source: endpoint, event: name === '*' ? 'custom' : name, ...(filterAction ? { action: filterAction } : {}) };
}

/** `event.action`, as prompts and the event log name it. */
export const previewType = (preview: PreviewEvent): string => (preview.action ? `${preview.event}.${preview.action}` : preview.event);
