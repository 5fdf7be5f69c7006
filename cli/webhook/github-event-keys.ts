/**
 * Which GitHub event a payload is, from its keys: GitHub names the event only in the
 * `X-GitHub-Event` header, so a `--payload` saved from a delivery's Payload tab shows it
 * only by the keys it holds. Used to judge a payload by a subscription's named filters
 * and, for a `*` or `github:*` filter, to tell which event it is (hunt 8 D1).
 */
import { GITHUB_EVENTS } from '../../functions/core/events/known';
import type { Payload } from '../../functions/core/events/classify';

/**
 * The payload keys that show a GitHub payload is of an event; an event not listed shows
 * by a key of its own name (`pull_request`, `check_run`, `release`, …). Checked against
 * @octokit/webhooks-examples (tests/cli/github-event-keys.unit.test.ts).
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
  create: ['ref', 'ref_type', 'master_branch'],
  delete: ['ref', 'ref_type'],
  deployment_status: ['deployment_status', 'deployment'],
  deployment_review: ['workflow_run', 'workflow_job_run'],
  membership: ['scope', 'member', 'team'],
  branch_protection_rule: ['rule'],
  code_scanning_alert: ['alert', 'commit_oid'],
  deploy_key: ['key'],
  fork: ['forkee'],
  gollum: ['pages'],
  installation_repositories: ['repository_selection', 'repositories_added'],
  meta: ['hook_id', 'hook'],
  org_block: ['blocked_user'],
  page_build: ['build'],
  ping: ['zen', 'hook_id', 'hook'],
  repository_dispatch: ['client_payload'],
  star: ['starred_at'],
  workflow_dispatch: ['workflow', 'inputs'],
};

/** Keys nearly every GitHub payload carries besides its subject: alone they show no event. */
const ENVELOPE = new Set(['repository', 'organization', 'installation', 'enterprise', 'sender']);

/** The keys that show a payload is of the GitHub event `name`. */
export function githubEventKeys(name: string): readonly string[] {
  return GITHUB_EVENT_KEYS[name] ?? [name];
}

/** Whether `payload` holds every key of `keys` (own keys: a `__proto__` key is no event). */
export const holdsKeys = (payload: Payload, keys: readonly string[]): boolean => keys.every((key) => Object.hasOwn(payload, key));

/**
 * The GitHub event a payload's keys show, for a filter that names none (`*`, `github:*`):
 * the event with the most keys held wins (a review payload holds `pull_request` too); on a
 * tie, the one whose key comes first, as GitHub puts the subject before the rest (an
 * `issues` payload labelled holds `label` after `issue`). Undefined when only the envelope
 * shows (a `watch` payload is `repository` and `sender`).
 */
export function githubEventOf(payload: Payload): string | undefined {
  const order = Object.keys(payload);
  let best: { event: string; keys: number; first: number } | undefined;
  for (const event of GITHUB_EVENTS) {
    const keys = githubEventKeys(event);
    if (keys.every((key) => ENVELOPE.has(key)) || !holdsKeys(payload, keys)) continue;
    const first = Math.min(...keys.map((key) => order.indexOf(key)));
    if (!best || keys.length > best.keys || (keys.length === best.keys && first < best.first)) best = { event, keys: keys.length, first };
  }
  return best?.event;
}
