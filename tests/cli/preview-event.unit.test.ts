/**
 * Which event `webhook test`, `test --dry-run` and `test --send` judge a `--payload` as,
 * without `--event` (hunt 7): the subscription filter that fits the payload, not simply
 * its first one (a GitLab merge request was judged, and sent, as GitHub `issues`).
 */
import { filterForPayload, previewEvent } from '../../cli/webhook/preview-event';
import { routeMatches } from '../../functions/core/events/filters';

const mr = { object_kind: 'merge_request', object_attributes: { iid: 1, action: 'open' }, project: { id: 1 } };
const pr = { action: 'opened', number: 1, pull_request: { number: 1 }, repository: { full_name: 'o/r' } };
const review = { action: 'submitted', review: { id: 1 }, pull_request: { number: 1 }, repository: { full_name: 'o/r' } };
const comment = { action: 'created', issue: { number: 1 }, comment: { id: 1 }, repository: { full_name: 'o/r' } };

test.each([
  [['issues.opened', 'merge_request'], mr, { source: 'gitlab', event: 'merge_request', action: 'open' }],
  [['github:pull_request', 'gitlab:merge_request.open'], mr, { source: 'gitlab', event: 'merge_request', action: 'open' }],
  [['gitlab:merge_request', 'pull_request'], pr, { source: 'github', event: 'pull_request', action: 'opened' }],
  [['pull_request', 'pull_request_review'], review, { source: 'github', event: 'pull_request_review', action: 'submitted' }],
  [['issues', 'issue_comment'], comment, { source: 'github', event: 'issue_comment', action: 'created' }],
  // Nothing fits: the first filter, as before.
  [['push', 'issues'], { action: 'x' }, { source: 'github', event: 'push', action: 'x' }],
])('%j with %j → %j', (events, payload, expected) => {
  expect(previewEvent({ events }, payload)).toEqual(expected);
});

test('the verdict for a GitLab merge request agrees with routing on the GitLab endpoint', () => {
  const events = ['issues.opened', 'merge_request'];
  const preview = previewEvent({ events }, mr);
  expect(routeMatches(events, preview.source, preview.event, preview.action)).toMatchObject({ matched: true });
  expect(routeMatches(events, 'gitlab', 'merge_request', 'open')).toMatchObject({ matched: true });
});

test('--event still decides; no events: the custom endpoint', () => {
  expect(previewEvent({ events: ['issues.opened', 'merge_request'] }, mr, 'issues.opened')).toEqual({ source: 'github', event: 'issues', action: 'opened' });
  expect(filterForPayload([], mr)).toBeUndefined();
  expect(previewEvent({ events: [] }, { event_type: 'deploy' })).toEqual({ source: 'custom', event: 'deploy' });
});

test('bad input: a payload with a non-string object_kind or odd keys falls back to the first filter', () => {
  expect(filterForPayload(['issues', 'merge_request'], { object_kind: 5 })).toBe('issues');
  expect(filterForPayload(['issues', 'merge_request'], { __proto__: { issue: 1 } } as Record<string, unknown>)).toBe('issues');
  expect(filterForPayload(['*'], mr)).toBe('*');
});

test('a GitLab group hook without object_kind is judged by its own event_name, not by the filter\'s action', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const removed = require('../fixtures/gitlab/group/user_remove_from_group.json') as Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const added = require('../fixtures/gitlab/group/user_add_to_group.json') as Record<string, unknown>;
  const events = ['gitlab:member.user_add_to_group'];
  expect(previewEvent({ events }, removed)).toEqual({ source: 'gitlab', event: 'member', action: 'user_remove_from_group' });
  expect(routeMatches(events, 'gitlab', 'member', 'user_remove_from_group')).toMatchObject({ matched: false });
  expect(previewEvent({ events }, added)).toEqual({ source: 'gitlab', event: 'member', action: 'user_add_to_group' });
});
