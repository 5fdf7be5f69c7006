/**
 * Hunt 3, defect 3: `subscribe` judges the action of a `name.action` event filter against
 * the actions the code hosts send. A near miss (`open`/`opened`) or an action on an event
 * that carries none is refused with the right filter; an action the lists do not know is
 * a warning (the host may have added it); custom senders are never judged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateEvents } from '../../functions/core/subscriptions/validate';
import { GENERATED_GITHUB_ACTIONS_PATH, githubActionsSource } from '../../scripts/github-actions';

const refused = (event: string): string => {
  const result = validateEvents([event]);
  return result.ok ? '(accepted)' : result.error.message;
};
const warnings = (events: string[]): string[] => {
  const result = validateEvents(events);
  if (!result.ok) throw new Error(result.error.message);
  return result.value.warnings;
};

test.each([
  ['gitlab:merge_request.opened', "Did you mean 'gitlab:merge_request.open'?"],
  ['pull_request.open', "Did you mean 'pull_request.opened'?"],
  ['github:pull_request.open', "Did you mean 'github:pull_request.opened'?"],
  ['issue.opened', "Did you mean 'issue.open'?"],
  ['issues.open', "Did you mean 'issues.opened'?"],
  ['merge_request.merged', "Did you mean 'merge_request.merge'?"],
  ['pull_request.synchronise', "Did you mean 'pull_request.synchronize'?"],
  ['push.created', "push events carry no action. Use 'push'"],
  ['gitlab:pipeline.success', "GitLab pipeline events carry no action. Use 'gitlab:pipeline'"],
  ['system.project_creates', "Did you mean 'system.project_create'?"],
  ['gitlab:system.user_create_', "Did you mean 'gitlab:system.user_create'?"],
])('%s is refused: %s', (event, message) => {
  expect(refused(event)).toContain(message);
  expect(refused(event)).toContain(`'${event}' would never match`);
});

test('the refusal lists what the host sends, names the other host\'s event, and the custom: way out', () => {
  const message = refused('issue.opened');
  expect(message).toContain('GitLab sends issue actions open, close, reopen, update');
  expect(message).toContain("GitHub's is 'github:issues.opened'");
  expect(message).toContain("for a custom sender's event, use 'custom:issue.opened'");
  // A source-qualified filter is not for a custom sender.
  expect(refused('gitlab:merge_request.opened')).not.toContain('custom:');
});

test('known actions, custom senders and events whose actions are not listed are accepted without a word', () => {
  const events = [
    'gitlab:merge_request.open', 'merge_request.approved', 'pull_request.opened', 'github:issues.typed', 'issue.open', 'note.create',
    'release.published', 'custom:issue.opened', 'custom:push.created', 'repository_dispatch.deploy', 'deploy.done', '*', 'github:*',
  ];
  expect(validateEvents(events)).toEqual({ ok: true, value: { events, warnings: [expect.stringContaining("'deploy.done' is not a GitHub or GitLab event name")] } });
});

test('an action the lists do not know, far from any known one, is a warning (the host may have added it)', () => {
  expect(warnings(['pull_request.frobbed'])).toEqual([expect.stringContaining("'pull_request.frobbed' may never match: GitHub sends pull_request actions assigned")]);
});

test('an event name a host does not send, qualified with that host, gets a suggestion', () => {
  expect(warnings(['github:pull_requests'])).toEqual(["'pull_requests' is not an event GitHub sends; 'github:pull_requests' may never match. Did you mean 'github:pull_request'?"]);
  // GitHub events newer than events/known.ts's list are known from @octokit/webhooks.
  expect(warnings(['github:sub_issues', 'sub_issues'])).toEqual([]);
});

test('stored filters are not judged again when an update checks names only', () => {
  expect(validateEvents(['gitlab:merge_request.opened'], { actions: false }).ok).toBe(true);
});

test('github-actions.generated.ts is what @octokit/webhooks says today (run `npm run generate` after upgrading it)', () => {
  const root = join(__dirname, '..', '..');
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', '@octokit', 'webhooks', 'package.json'), 'utf8')) as { version: string };
  // The list the package's entry point exports as emitterEventNames (its bundle needs ESM-only peers Jest does not resolve).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { emitterEventNames } = require(join(root, 'node_modules/@octokit/webhooks/dist-src/generated/webhook-names.js')) as { emitterEventNames: string[] };
  expect(readFileSync(join(root, GENERATED_GITHUB_ACTIONS_PATH), 'utf8') === githubActionsSource(emitterEventNames, version)).toBe(true);
});

test("GitLab system hooks: the documented event_names are system's actions; an unknown one is a warning (GitLab adds them)", () => {
  expect(warnings(['system.project_create', 'gitlab:system.user_add_to_team', 'system'])).toEqual([]);
  expect(warnings(['system.project_archived'])).toEqual([expect.stringContaining("'system.project_archived' may never match: GitLab sends system actions group_create")]);
});

test('custom event types with dots can be subscribed to, with and without their action (README "Custom event types are free text")', () => {
  for (const event of ['deploy.finished.ok', 'custom:deploy.finished.ok', 'custom:build.status.changed', 'custom:a.b.c.d', `${'a'.repeat(100)}.${'b'.repeat(100)}`, `${'a.'.repeat(49)}ab.${'b'.repeat(99)}`]) {
    expect(refused(event)).toBe('(accepted)');
  }
  expect(warnings(['deploy.finished.ok'])).toEqual([expect.stringContaining("'deploy.finished.ok' is not a GitHub or GitLab event name")]);
  // A code host's event keeps its action check: the action is everything after the first dot.
  expect(warnings(['pull_request.opened.x'])).toEqual([expect.stringContaining("'pull_request.opened.x' may never match")]);
});

test.each(['deploy..ok', 'deploy.', '.deploy', 'custom:deploy.finished.', `custom:${'a'.repeat(100)}.${'b'.repeat(101)}`, `${'a.'.repeat(110)}a`, 'a'.repeat(101), `${'a'.repeat(101)}.ok`])('a malformed dotted filter %s is refused', (event) => {
  expect(refused(event)).toContain('Invalid event filter');
});
