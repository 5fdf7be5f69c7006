/**
 * Subscriptions fire when the user means (hunt 3, defects 2, 4, 5), end to end through
 * `hookagent serve`, the CLI and a Telegram-compatible server on 127.0.0.1:
 * - a subscription deleted and created again under its name is another one: the old
 *   one's held and queued events are not delivered by the new one;
 * - `pause` also holds what was already queued (a debounced event waits in the queue);
 * - of a debounced burst held while paused, resume releases only the latest.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'identity-github-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-identity-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

const issue = (n: number) => ({ action: 'opened', issue: { number: n, title: `t${n}` }, repository: { full_name: 'o/r' } });
const pr = (sha: string) => ({ action: 'synchronize', number: 7, pull_request: { number: 7, head: { sha } }, repository: { full_name: 'o/r' } });

async function record(eventId: string): Promise<{ status: string; subscription: string; error?: { code: string; message: string }; superseded_by?: string }> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as { status: string; subscription: string };
}

async function statusOf(eventId: string): Promise<string> {
  return (await record(eventId)).status;
}

test('a subscription created again under a deleted one\'s name takes none of its held or queued events', async () => {
  expect((await cli('webhook', 'subscribe', 'again', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'OLD #{issue.number}')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'again')).code).toBe(0);
  const held = await post('issues', issue(1), 'again-held');
  expect(await statusOf(held)).toBe('held');
  const deleted = await cli('webhook', 'delete', 'again');
  expect(deleted.stdout).toContain("1 held event(s) ended failed (a subscription created again as 'again' does not take them)");
  expect(await record(held)).toMatchObject({ status: 'failed', error: { code: 'subscription_not_found', message: "The subscription 'again' was deleted while the event was held" } });

  // Queued, not yet run (debounced): deleted and created again before it runs.
  expect((await cli('webhook', 'subscribe', 'again', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--debounce', '3s', '--prompt', 'OLD #{issue.number}')).code).toBe(0);
  const queued = await post('issues', issue(2), 'again-queued');
  expect((await cli('webhook', 'delete', 'again')).code).toBe(0);
  expect((await cli('webhook', 'subscribe', 'again', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'NEW #{issue.number}')).code).toBe(0);
  await eventually(async () => (await statusOf(queued)) === 'failed', 'the old queued event to fail', 30_000);
  expect((await record(queued)).error?.message).toContain("Accepted for an earlier subscription named 'again'");
  // `resume` of the new one releases nothing of the old; its own events run.
  expect((await cli('webhook', 'resume', 'again')).stdout).toContain('already active');
  const fresh = await post('issues', issue(3), 'again-new');
  await eventually(async () => (await statusOf(fresh)) === 'delivered', 'the new event to be delivered');
  expect(texts()).toEqual(['NEW #3']);
}, 90_000);

test('pause holds an event already queued (debounced); resume delivers it once', async () => {
  expect((await cli('webhook', 'subscribe', 'later', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--debounce', '2s', '--prompt', 'PR at {pull_request.head.sha}')).code).toBe(0);
  const id = await post('pull_request', pr('aaa'), 'later-1');
  expect((await cli('webhook', 'pause', 'later')).code).toBe(0);
  await eventually(async () => (await statusOf(id)) === 'held', 'the queued event to be held', 30_000);
  expect(texts()).toEqual([]);
  expect((await cli('webhook', 'resume', 'later')).stdout).toContain('released 1 held event(s)');
  await eventually(async () => (await statusOf(id)) === 'delivered', 'the released event to be delivered');
  expect(texts()).toEqual(['PR at aaa']);
  // It takes pull_request events too: the next test's burst must reach its own subscription only.
  expect((await cli('webhook', 'delete', 'later')).code).toBe(0);
}, 90_000);

test('a debounced burst held while paused: resume releases only the latest of it', async () => {
  expect((await cli('webhook', 'subscribe', 'burst', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--debounce', '1s', '--prompt', 'burst at {pull_request.head.sha}')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'burst')).code).toBe(0);
  const ids = [await post('pull_request', pr('s1'), 'burst-1'), await post('pull_request', pr('s2'), 'burst-2'), await post('pull_request', pr('s3'), 'burst-3')];
  expect((await cli('webhook', 'resume', 'burst')).stdout).toContain('released 1 held event(s)');
  await eventually(async () => (await statusOf(ids[2] as string)) === 'delivered', 'the latest to be delivered');
  const listed = JSON.parse((await cli('webhook', 'events', 'burst', '--json')).stdout) as Array<{ event_id: string; status: string; superseded_by?: string }>;
  expect(ids.map((id) => listed.find((e) => e.event_id === id))).toEqual([
    expect.objectContaining({ status: 'superseded', superseded_by: ids[2] }),
    expect.objectContaining({ status: 'superseded', superseded_by: ids[2] }),
    expect.objectContaining({ status: 'delivered' }),
  ]);
  expect(texts()).toEqual(['burst at s3']);
  // The event's own story names what superseded it.
  expect(await record(ids[0] as string)).toMatchObject({ status: 'superseded', superseded_by: ids[2] });
  expect((await cli('webhook', 'event', ids[1] as string)).stdout).toContain(`superseded by ${ids[2]}: a later event of the same subject runs instead (debounce)`);
}, 90_000);
