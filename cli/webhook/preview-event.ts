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

/** `--event` as given (`name` or `name.action`, optionally `github:`/`gitlab:`), else the payload classified. */
export function previewEvent(subscription: Pick<Subscription, 'events'>, payload: Payload, eventOption?: string): PreviewEvent {
  const filter = eventOption ?? subscription.events[0];
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
