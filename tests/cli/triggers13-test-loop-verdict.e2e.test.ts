/**
^ * `webhook test --payload` on one of hookagent's own comments (as GitHub
 * sends it back: its text ends with the hidden marker) says "the event would be queued",
 * while /webhooks/github answers it 200 ignored "Event caused by hookagent" (the loop guard,
 * before routing and filters) and nothing is queued. A user who pastes a delivery from
 * GitHub's Recent Deliveries to learn why the bot did not answer is told the opposite.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { causedByHookagent } from '../../functions/core/events/loop-guard';
import { buildCli, runCli } from '../support/cli';

beforeAll(() => buildCli(), 120_000);

const own = {
  action: 'created', issue: { number: 5, title: 'Widgets break' },
  comment: { id: 901, body: 'You asked: @\u200bhookagent-bot what breaks?\n\n<!-- hookagent:bot:evt_01abc -->', user: { login: 'hookagent-bot', id: 1, type: 'User' }, performed_via_github_app: null },
  repository: { full_name: 'octo/widgets', name: 'widgets', owner: { login: 'octo' } }, sender: { login: 'hookagent-bot', id: 1, type: 'User' },
};

test('webhook test does not say a payload the loop guard ignores would be queued', async () => {
  // What ingest does with it: ignored as caused by hookagent.
  expect(causedByHookagent(own)).toBe(true);
  const dir = mkdtempSync(join(tmpdir(), 'hk-trig-'));
  writeFileSync(join(dir, 'config.yaml'), 'webhooks:\n  github:\n    secret: ${GH_SECRET}\n');
  const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], { GH_SECRET: 's3cret' });
  expect((await hk('webhook', 'subscribe', 'bot', '--events', 'issue_comment.created', '--filter', 'comment.body =~ /hookagent-bot/',
    '--agent', 'none', '--prompt', 'You asked: {comment.body}', '--deliver', 'log')).code).toBe(0);
  const file = join(dir, 'own.json');
  writeFileSync(file, JSON.stringify(own));
  const tested = await hk('webhook', 'test', 'bot', '--payload', file);
  expect(tested.code).toBe(0);
  expect(tested.stdout).not.toContain('the event would be queued');
  expect(tested.stdout).toContain('Event caused by hookagent');
  const dry = await hk('webhook', 'test', 'bot', '--payload', file, '--dry-run');
  expect(dry.code).toBe(0);
  expect(dry.stdout).toContain('Loop guard: its comment ends with hookagent');
}, 120_000);
