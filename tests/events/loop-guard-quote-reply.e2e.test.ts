/**
 * The loop guard through `hookagent serve` and a local server speaking GitHub's wire format:
 * a subscription answers comments that ask `@hookagent-bot`. GitHub then tells hookagent about
 * its own comment, which is ignored; a human who quote-replies to that comment (GitHub's
 * "Quote reply": every line of it behind `> `, the marker too) and asks again is answered.
 * (Before, any comment whose text held `<!-- hookagent:` was ignored, the quote too.)
 */
import { FAKE_BOT } from '../support/fake-codehost';
import { eventually } from '../support/serve';
import { useServeWithGithub } from '../support/serve-github';

const THREAD = '/repos/octo/widgets/issues/5';

const h = useServeWithGithub('loop-guard', async ({ hk, start }) => {
  const subscribed = await hk('webhook', 'subscribe', 'bot', '--events', 'issue_comment.created', '--filter', 'comment.body =~ /@hookagent-bot/',
    '--agent', 'none', '--prompt', 'You asked: {comment.body}', '--deliver', 'codehost_comment');
  expect(subscribed.code).toBe(0);
  await start();
});

let delivery = 0;
/** GitHub's `issue_comment.created` for a comment on issue 5 by `user`. */
async function commented(body: string, user: { login: string; id: number; type: string }): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify({ action: 'created', issue: { number: 5, title: 'Widgets break' }, comment: { id: 900 + delivery, body, user, performed_via_github_app: null }, repository: { full_name: 'octo/widgets', name: 'widgets', owner: { login: 'octo' } }, sender: user });
  return h.send('issue_comment', payload, `loop-guard-${++delivery}`);
}

const human = { login: 'alice', id: 7, type: 'User' };
/** With a token hookagent posts as that token's user: a `User`, as a human. */
const bot = { login: FAKE_BOT.login, id: FAKE_BOT.id, type: 'User' };
const comments = () => h.host.comments.get(THREAD) ?? [];

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
  const events = JSON.parse((await h.hk('webhook', 'events', 'bot', '--json')).stdout) as Array<{ status: string }>;
  expect(events.map((e) => e.status)).toEqual(['delivered', 'delivered', 'delivered']);
});
