/**
 * Hunt 8 D1: which event `webhook test --send`, `test` and `test --dry-run` take for a
 * subscription whose filters name their source (`github:*`, `*`, `gitlab:…`), and when the
 * custom endpoint may stand in for a host whose secret is unset (the predicate `subscribe`
 * and `show` leave that endpoint out by).
 */
import { githubEventOf } from '../../cli/webhook/github-event-keys';
import { concreteFilter, filterForPayload, previewEvent } from '../../cli/webhook/preview-event';
import { customTakes, sampleChoice, secretNeeded } from '../../cli/webhook/sample-event';
import { parseConfig } from '../../functions/core/config/load';
import { isHookError } from '../../functions/core/errors';
import { routeMatches } from '../../functions/core/events/filters';

type Example = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const groups = require('@octokit/webhooks-examples') as Array<{ name: string; examples: Example[] }>;

const pr = { action: 'opened', number: 2, pull_request: { number: 2 }, repository: { full_name: 'o/r' }, sender: { login: 'u' } };
const mr = { object_kind: 'merge_request', event_type: 'merge_request', object_attributes: { iid: 1, action: 'open' }, project: { id: 1 } };

describe('the GitHub event a payload shows by its keys', () => {
  // GitHub sends these with only the envelope (repository, organization, installation,
  // sender) or an `alert` several events share: their keys show no one event.
  const UNKNOWABLE = new Set(['dependabot_alert', 'github_app_authorization', 'installation', 'organization', 'public', 'repository', 'repository_import', 'repository_vulnerability_alert', 'watch']);

  test.each(groups.map((g) => [g.name, g.examples] as const))('every %s example of @octokit/webhooks-examples', (name, examples) => {
    // team_add holds `team` only, as `team` does: the one case the keys judge wrongly.
    const expected = UNKNOWABLE.has(name) ? undefined : name === 'team_add' ? 'team' : name;
    for (const example of examples) expect(githubEventOf(example)).toBe(expected);
  });

  test('the subject before the rest: a labelled issue is `issues`, a review `pull_request_review`', () => {
    expect(githubEventOf({ action: 'labeled', issue: {}, label: {}, repository: {} })).toBe('issues');
    expect(githubEventOf({ action: 'created', label: {}, repository: {} })).toBe('label');
    expect(githubEventOf({ action: 'submitted', review: {}, pull_request: {} })).toBe('pull_request_review');
    expect(githubEventOf({ repository: {}, sender: {} })).toBeUndefined();
    expect(githubEventOf({ __proto__: { issue: {} } } as Example)).toBeUndefined();
  });
});

describe('a wildcard filter judges a payload as the event it is', () => {
  test.each([
    [['github:*'], pr, { source: 'github', event: 'pull_request', action: 'opened' }],
    [['*'], pr, { source: 'github', event: 'pull_request', action: 'opened' }],
    [['deploy', '*'], pr, { source: 'github', event: 'pull_request', action: 'opened' }],
    [['gitlab:*'], mr, { source: 'gitlab', event: 'merge_request', action: 'open' }],
    [['*'], mr, { source: 'gitlab', event: 'merge_request', action: 'open' }],
    // A payload naming its own type is a custom sender's, whatever keys it holds.
    [['*'], { event_type: 'deploy', release: {} }, { source: 'custom', event: 'deploy' }],
    [['*'], { service: 'api' }, { source: 'custom', event: 'custom' }],
  ])('%j with %j → %j', (events, payload, expected) => {
    const preview = previewEvent({ events }, payload);
    expect(preview).toEqual(expected);
    expect(routeMatches(events, preview.source, preview.event, preview.action)).toMatchObject({ matched: true });
  });

  test('a named filter that fits still wins over a wildcard; --event `*` is made concrete too', () => {
    expect(filterForPayload(['github:*', 'issues'], { action: 'opened', issue: {} })).toBe('issues');
    expect(filterForPayload(['github:*'], pr)).toBe('github:*');
    expect(concreteFilter('github:*', pr)).toBe('github:pull_request');
    expect(concreteFilter('github:*', { foo: 1 })).toBe('github:*');
    expect(concreteFilter('gitlab:*', pr)).toBe('gitlab:*');
    expect(previewEvent({ events: ['deploy'] }, pr, '*')).toEqual({ source: 'github', event: 'pull_request', action: 'opened' });
  });
});

describe('the sample --send and --dry-run take', () => {
  test.each([
    [['github:*'], {}, { filter: 'github:pull_request.opened', judgedBy: 'github:*' }],
    [['gitlab:*'], {}, { filter: 'gitlab:merge_request', judgedBy: 'gitlab:*' }],
    // Both hosts: one whose secret is set.
    [['github:*', 'gitlab:*'], { configured: (host: string) => host === 'gitlab' }, { filter: 'gitlab:merge_request', judgedBy: 'gitlab:*' }],
    [['*'], {}, { filter: 'custom', judgedBy: '*' }],
    [[], {}, { filter: 'custom' }],
    [['github:*', 'deploy'], {}, { filter: 'deploy', judgedBy: 'deploy' }],
    [['gitlab:merge_request'], {}, { filter: 'gitlab:merge_request', judgedBy: 'gitlab:merge_request' }],
    [['*'], { payload: pr }, { filter: 'github:pull_request', judgedBy: '*' }],
    [['github:*'], { payload: pr }, { filter: 'github:pull_request', judgedBy: 'github:*' }],
    [['*'], { eventOption: 'gitlab:merge_request' }, { filter: 'gitlab:merge_request', judgedBy: 'gitlab:merge_request' }],
  ])('%j %j → %j', (events, options, expected) => {
    expect(sampleChoice(events, options)).toEqual(expected);
  });

  test('the custom endpoint stands in only for what it takes', () => {
    expect(customTakes({ filter: 'custom' })).toBe(true);
    expect(customTakes({ filter: 'github:pull_request', judgedBy: '*' })).toBe(true);
    expect(customTakes({ filter: 'issues', judgedBy: 'issues' })).toBe(true);
    expect(customTakes({ filter: 'github:pull_request.opened', judgedBy: 'github:*' })).toBe(false);
    expect(customTakes({ filter: 'gitlab:merge_request', judgedBy: 'gitlab:merge_request' })).toBe(false);
  });

  test('github:* with a payload that shows no event: pass --event', () => {
    let thrown: unknown;
    try {
      sampleChoice(['github:*'], { payload: { foo: 1 } });
    } catch (error) {
      thrown = error;
    }
    expect(isHookError(thrown) && thrown.message).toContain('pass --event with the payload\'s type, e.g. --event github:pull_request');
  });

  test('the refusal names the secret, where to set it, and another filter the custom endpoint takes', () => {
    const events = ['gitlab:merge_request', 'deploy'];
    const config = parseConfig('webhooks: {}\n');
    if (!config.ok) throw new Error(config.error.message);
    const refusal = secretNeeded(config.value, 'mrs', events, sampleChoice(events), 'gitlab');
    expect(refusal.message).toBe("Not sent: 'mrs' takes gitlab:merge_request events only through /webhooks/gitlab (its custom endpoint's events are custom ones, which a gitlab: filter never matches), and /webhooks/gitlab refuses every request (401): no secret is configured; set webhooks.gitlab.secret in config.yaml to ${GITLAB_WEBHOOK_SECRET} and put that variable in .env. Or pass --event deploy to test 'mrs' on its custom endpoint.");
  });
});
