/**
 * Realistic sample payloads the CLI ships for `webhook test` and `test --send`: GitLab's
 * and the alert senders' examples from their documentation (copies under cli/samples/),
 * GitHub's from @octokit/webhooks-examples. A subscription is tested against the sample of
 * its first event filter, so placeholders resolve as they will for real events.
 */
import { HookError } from '../../functions/core/errors';
import { eventOrigin } from '../../functions/core/events/known';
import { splitType } from '../../functions/core/events/filters';
import alertmanager from './alerts/alertmanager.json';
import grafana from './alerts/grafana.json';
import pagerduty from './alerts/pagerduty_v3.json';
import gitlabIssue from './gitlab/issue.json';
import gitlabMergeRequest from './gitlab/merge_request.json';
import gitlabNote from './gitlab/note_merge_request.json';
import gitlabPipeline from './gitlab/pipeline.json';
import gitlabPush from './gitlab/push.json';
import gitlabRelease from './gitlab/release.json';
import gitlabTagPush from './gitlab/tag_push.json';

type Payload = Record<string, unknown>;

/** GitLab samples by object_kind, with the X-Gitlab-Event header GitLab sends. */
export const GITLAB_SAMPLES: Record<string, [string, Payload]> = {
  push: ['Push Hook', gitlabPush], tag_push: ['Tag Push Hook', gitlabTagPush], issue: ['Issue Hook', gitlabIssue],
  merge_request: ['Merge Request Hook', gitlabMergeRequest], note: ['Note Hook', gitlabNote], pipeline: ['Pipeline Hook', gitlabPipeline],
  release: ['Release Hook', gitlabRelease],
};

export interface SampleEvent {
  source: 'github' | 'gitlab' | 'custom';
  event: string;
  action?: string;
  payload: Payload;
}

/** A GitHub example payload for the event (and action) from @octokit/webhooks-examples. */
export function githubSample(event: string, action: string | undefined): Payload | undefined {
  let groups: Array<{ name: string; examples: Array<Payload & { action?: string }> }>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    groups = require('@octokit/webhooks-examples') as typeof groups;
  } catch {
    return undefined;
  }
  const examples = groups.find((g) => g.name === event)?.examples ?? [];
  return examples.find((e) => !action || e.action === action) ?? examples[0];
}

/**
 * The sample for an event filter such as `pull_request.opened`, `gitlab:merge_request`,
 * `alert.firing`; undefined when none ships (the caller says to pass --payload).
 */
export function sampleFor(filter: string): SampleEvent | undefined {
  const colon = filter.indexOf(':');
  const qualifier = colon > 0 ? filter.slice(0, colon) : undefined;
  // The action is everything after the first dot, as ingest reads PagerDuty's `incident.responder.added`.
  const [name, action] = splitType(colon > 0 ? filter.slice(colon + 1) : filter);
  const event = name || 'custom';
  const origin = eventOrigin(event);
  if (qualifier !== 'gitlab' && qualifier !== 'custom' && (origin === 'github' || origin === 'both')) {
    const payload = githubSample(event, action);
    if (payload) return { source: 'github', event, ...(typeof payload.action === 'string' ? { action: payload.action } : {}), payload };
  }
  if (qualifier !== 'github' && qualifier !== 'custom' && GITLAB_SAMPLES[event]) {
    const payload = (GITLAB_SAMPLES[event] as [string, Payload])[1];
    const attributes = payload.object_attributes as { action?: string } | undefined;
    return { source: 'gitlab', event, ...(attributes?.action ? { action: attributes.action } : {}), payload };
  }
  if (event === 'alert') {
    const payload = action === 'resolved' ? { ...alertmanager, status: 'resolved' } : alertmanager;
    return { source: 'custom', event, action: action ?? 'firing', payload };
  }
  if (event === 'incident') {
    // The sample is the event the filter names (`incident.triggered`), so the subscription takes it.
    const payload = action ? { ...pagerduty, event: { ...pagerduty.event, event_type: `incident.${action}` } } : pagerduty;
    return { source: 'custom', event, action: action ?? 'priority_updated', payload };
  }
  return undefined;
}

/** Samples of the alert senders, for docs and tests. */
export const ALERT_SAMPLES = { alertmanager: alertmanager as Payload, grafana: grafana as Payload, pagerduty: pagerduty as Payload };

export function requireSample(filter: string): SampleEvent {
  const sample = sampleFor(filter);
  if (!sample) throw new HookError('sample_unavailable', `No sample payload ships for '${filter}'; pass one with --payload <file|json>`);
  return sample;
}
