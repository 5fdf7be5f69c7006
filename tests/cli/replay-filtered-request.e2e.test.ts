/**
 * Hunt 11 D2 end to end (the built CLI and `hookagent serve`, signed GitHub deliveries, a
 * local Telegram server as the `messenger` target): a request one subscription took and
 * another's filters turned away. The sender's redelivery is answered `duplicate` (the
 * delivery id is claimed per endpoint by the subscription that took it), so `webhook replay
 * req_…` runs it for the other subscription from the stored event, once its filters take
 * it. Before, the documented remedy ("change the filters and have the sender deliver it
 * again") could not work and no command ran the request for that subscription.
 */
import { signHub } from '../../functions/core/auth/signatures';
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'replay-filtered-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-replay-req-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts } = h;

async function post(event: string, payload: unknown, delivery: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = JSON.stringify(payload);
  const response = await fetch(`${h.serve.url}/webhooks/github`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH_SECRET) },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const opened = (number: number) => ({ action: 'opened', number, pull_request: { number, draft: true, head: { sha: 'abcdef1' } }, repository: { full_name: 'o/r' } });

async function subscribe(name: string, ...options: string[]): Promise<void> {
  const created = await cli('webhook', 'subscribe', name, '--agent', 'none', ...options);
  expect([created.code, created.stderr]).toEqual([0, expect.any(String)]);
}

/** The `req_…` id of the newest filtered row `webhook events <name>` lists. */
async function filteredRequest(name: string): Promise<string> {
  const rows = JSON.parse((await cli('webhook', 'events', name, '--status', 'filtered', '--json')).stdout) as Array<{ status: string; request_id: string }>;
  expect(rows[0]).toMatchObject({ status: 'filtered', request_id: expect.stringMatching(/^req_/) });
  return rows[0]!.request_id;
}

test('after its payload filter is changed, replay req_… runs the request for the subscription that filtered it; the redelivery stays a duplicate', async () => {
  await subscribe('all-prs', '--events', 'pull_request.opened', '--prompt', 'logged {number}');
  await subscribe('ready-prs', '--events', 'pull_request.opened', '--deliver', 'messenger', '--filter', 'pull_request.draft == false', '--prompt', 'review {number}');
  const first = await post('pull_request', opened(12), 'remedy-1');
  expect(first.body).toMatchObject({ status: 'accepted', subscriptions: ['all-prs'] });
  const request = await filteredRequest('ready-prs');

  const story = await cli('webhook', 'event', request);
  expect(story.stdout).toContain('its event is stored for the subscriptions that took it;');
  expect(story.stdout).toContain(`webhook replay ${request}' runs it for one whose filters turned it away`);
  // Still filtered: refused with the reason, and no advice to redeliver (it would be a duplicate).
  const early = await cli('webhook', 'replay', request);
  expect([early.code, early.stderr]).toEqual([1, expect.stringContaining(`None of the subscriptions whose filters turned request '${request}' away takes it as it is now: 'ready-prs' (filter "pull_request.draft == false" failed (pull_request.draft is true))`)]);
  expect(early.stderr).not.toMatch(/deliver it again|redeliver/i);
  // The event's own replay for ready-prs finds the request and refuses it as replay req_… does.
  const byEvent = await cli('webhook', 'replay', first.body.event_id as string, '--subscription', 'ready-prs');
  expect([byEvent.code, byEvent.stderr]).toEqual([1, expect.stringContaining(`'ready-prs' as it is now still does not take request '${request}'`)]);

  expect((await cli('webhook', 'update', 'ready-prs', '--filter', '')).code).toBe(0);
  expect((await post('pull_request', opened(12), 'remedy-1')).body).toMatchObject({ status: 'duplicate' });
  const replayed = await cli('webhook', 'replay', request);
  expect([replayed.code, replayed.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^Queued evt_\\w+ for 'ready-prs' \\(a replay of ${request}, from its stored event ${first.body.event_id as string}\\)\\.\\n$`))]);
  await eventually(() => texts().includes('review 12'), 'ready-prs to run the pull request', 15_000);
  const copy = /^Queued (evt_\w+)/.exec(replayed.stdout)![1]!;
  const [record] = JSON.parse((await cli('webhook', 'event', copy, '--json')).stdout) as Array<Record<string, unknown>>;
  expect(record).toMatchObject({ subscription: 'ready-prs', request: { replay_of: first.body.event_id } });
  // all-prs, which took it, is not run again.
  expect(texts()).toEqual(['review 12']);
}, 60_000);

test('an event filter widened after the request: several subscriptions that take it now are named, and --subscription picks one', async () => {
  await subscribe('closed-a', '--events', 'pull_request.closed', '--deliver', 'messenger', '--prompt', 'a {number}');
  await subscribe('closed-b', '--events', 'pull_request.closed', '--deliver', 'messenger', '--prompt', 'b {number}');
  const accepted = await post('pull_request', opened(13), 'widened-1');
  expect(accepted.body).toMatchObject({ status: 'accepted' });
  const entries = JSON.parse((await cli('webhook', 'requests', '--json', '--limit', '5')).stdout) as Array<{ request_id: string; delivery_id?: string }>;
  const request = entries.find((e) => e.delivery_id === 'widened-1')!.request_id;

  const notRefused = await cli('webhook', 'replay', request, '--subscription', 'all-prs');
  expect([notRefused.code, notRefused.stderr]).toEqual([1, expect.stringContaining(`'all-prs' took request '${request}': it is event ${accepted.body.event_id as string}`)]);
  for (const name of ['closed-a', 'closed-b']) expect((await cli('webhook', 'update', name, '--events', 'pull_request')).code).toBe(0);
  const ambiguous = await cli('webhook', 'replay', request);
  expect([ambiguous.code, ambiguous.stderr]).toEqual([1, expect.stringContaining("The filters of 'closed-a', 'closed-b' turned request")]);
  expect(ambiguous.stderr).toContain('name one with --subscription');

  const one = await cli('webhook', 'replay', request, '--subscription', 'closed-b');
  expect([one.code, one.stdout]).toEqual([0, expect.stringContaining("for 'closed-b' (a replay of")]);
  await eventually(() => texts().includes('b 13'), 'closed-b to run the pull request', 15_000);
  expect(texts()).not.toContain('a 13');
}, 60_000);

test('a request no subscription took stored nothing: the refusal still advises the redelivery, which is then taken', async () => {
  await subscribe('big-only', '--events', 'issues', '--deliver', 'messenger', '--filter', 'issue.number > 100', '--prompt', 'issue {issue.number}');
  const issue = { action: 'opened', issue: { number: 7 }, repository: { full_name: 'o/r' } };
  expect((await post('issues', issue, 'issue-7')).body).toMatchObject({ reason: 'Filtered out' });
  const request = await filteredRequest('big-only');
  const refused = await cli('webhook', 'replay', request);
  expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('its payload filters turned that request away, so nothing was stored to replay')]);
  expect(refused.stderr).toContain('change the filters and have the sender deliver it again');
  expect((await cli('webhook', 'update', 'big-only', '--filter', '')).code).toBe(0);
  expect((await post('issues', issue, 'issue-7')).body).toMatchObject({ status: 'accepted', subscriptions: ['big-only'] });
}, 60_000);
