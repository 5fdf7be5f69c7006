/**
 * The loop guard through `hookagent serve` and a local server speaking GitHub's wire format:
 * a subscription answers comments that ask `@hookagent-bot`. GitHub then tells hookagent about
 * its own comment, which is ignored; a human who quote-replies to that comment (GitHub's
 * "Quote reply": every line of it behind `> `, the marker too) and asks again is answered.
 * (Before, any comment whose text held `<!-- hookagent:` was ignored, the quote too.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { FAKE_BOT, startFakeCodehost, type FakeCodehost } from '../support/fake-codehost';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const GH_SECRET = 'loop-guard-gh-secret';
const env = { GH_SECRET, GITHUB_TOKEN: 'ghp_loopguard', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const THREAD = '/repos/octo/widgets/issues/5';

let host: FakeCodehost;
let dir: string;
let serve: Serve;
const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);

beforeAll(async () => {
  buildCli();
  host = await startFakeCodehost();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-loop-guard-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    'delivery:',
    '  timeout: 2s',
    `  codehost: { github: { token: \${GITHUB_TOKEN}, api_url: "${host.url}" } }`,
  ].join('\n'));
  const subscribed = await hk('webhook', 'subscribe', 'bot', '--events', 'issue_comment.created', '--filter', 'comment.body =~ /@hookagent-bot/',
    '--agent', 'none', '--prompt', 'You asked: {comment.body}', '--deliver', 'codehost_comment');
  expect(subscribed.code).toBe(0);
  serve = await startServe(dir, env);
}, 60_000);

afterAll(async () => {
  if (serve) await stopServe(serve);
  await host?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let delivery = 0;
/** GitHub's `issue_comment.created` for a comment on issue 5 by `user`. */
async function commented(body: string, user: { login: string; id: number; type: string }): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify({ action: 'created', issue: { number: 5, title: 'Widgets break' }, comment: { id: 900 + delivery, body, user, performed_via_github_app: null }, repository: { full_name: 'octo/widgets', name: 'widgets', owner: { login: 'octo' } }, sender: user });
  const res = await fetch(`${serve.url}/webhooks/github`, {
    method: 'POST', body: payload,
    headers: { 'content-type': 'application/json', 'x-github-event': 'issue_comment', 'x-github-delivery': `loop-guard-${++delivery}`, 'x-hub-signature-256': signHub(payload, GH_SECRET) },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const human = { login: 'alice', id: 7, type: 'User' };
/** With a token hookagent posts as that token's user: a `User`, as a human. */
const bot = { login: FAKE_BOT.login, id: FAKE_BOT.id, type: 'User' };
const comments = () => host.comments.get(THREAD) ?? [];

test('a quote-reply that asks the bot again is answered; the bot\'s own comment is not', async () => {
  const asked = await commented('@hookagent-bot what breaks the widgets?', human);
  expect(asked).toMatchObject({ status: 202, body: { status: 'accepted' } });
  await eventually(() => comments().length === 1, 'the bot\'s answer');
  const answer = comments()[0]!.body;
  expect(answer).toMatch(/\n<!-- hookagent:bot:evt_[0-9a-z]+ -->$/);

  // GitHub sends the bot's own comment back: ignored, nothing else is posted.
  expect(await commented(answer, bot)).toEqual({ status: 200, body: { status: 'ignored', reason: 'Event caused by hookagent', event: 'issue_comment' } });

  // GitHub's "Quote reply": the whole comment behind `> `, the hidden marker included, the reply after it.
  const quoted = answer.split('\n').map((line) => `> ${line}`.trimEnd()).join('\n');
  const reply = await commented(`${quoted}\n\n@hookagent-bot that did not help, look again`, human);
  expect(reply).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['bot'] } });
  // The reply written above the quote, so the quoted marker is the comment's last line.
  const above = await commented(`@hookagent-bot and once more\n\n${quoted}`, human);
  expect(above).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['bot'] } });
  await eventually(() => comments().length === 3, 'the answers to both replies');
  expect(comments().map((c) => c.body)).toEqual([answer, expect.stringContaining('look again'), expect.stringContaining('once more')]);

  // Their answers are hookagent's own again.
  for (const c of comments().slice(1)) {
    expect(await commented(c.body, bot)).toEqual({ status: 200, body: { status: 'ignored', reason: 'Event caused by hookagent', event: 'issue_comment' } });
  }
  const events = JSON.parse((await hk('webhook', 'events', 'bot', '--json')).stdout) as Array<{ status: string }>;
  expect(events.map((e) => e.status)).toEqual(['delivered', 'delivered', 'delivered']);
});
