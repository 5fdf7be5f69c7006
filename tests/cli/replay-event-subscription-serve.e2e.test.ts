/**
 * `webhook replay evt_… --subscription X` where X's filters turned away the request that
 * stored the event (another subscription took it): the event's request is found in the
 * request log and run for X, as `webhook replay req_… --subscription X` runs it, with the
 * same refusals. Before, it exited 1 pointing at `webhook replay req_… --subscription X`
 * instead of doing it. The built CLI and `hookagent serve` (SQLite) over HTTP on
 * 127.0.0.1, signed GitHub deliveries, a local Telegram server as the `messenger` target.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'replay-event-subscription-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-replay-evt-sub-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

const opened = (number: number) => ({ action: 'opened', number, pull_request: { number, draft: true, head: { sha: 'abcdef1' } }, repository: { full_name: 'o/r' } });

async function subscribe(name: string, ...options: string[]): Promise<void> {
  const created = await cli('webhook', 'subscribe', name, '--agent', 'none', ...options);
  expect([created.code, created.stderr]).toEqual([0, expect.any(String)]);
}

/** The `req_…` id of the request whose event is `eventId`. */
async function requestOf(eventId: string): Promise<string> {
  const entries = JSON.parse((await cli('webhook', 'requests', '--json', '--limit', '20')).stdout) as Array<{ request_id: string; event_id?: string }>;
  return entries.find((e) => e.event_id === eventId)!.request_id;
}

test('the event is run for the subscription whose filters turned its request away, once they take it; refused as replay req_… is before', async () => {
  await subscribe('all-prs', '--events', 'pull_request.opened', '--prompt', 'logged {number}');
  await subscribe('ready-prs', '--events', 'pull_request.opened', '--deliver', 'messenger', '--filter', 'pull_request.draft == false', '--prompt', 'review {number}');
  const eventId = await post('pull_request', opened(21), 'by-event-1');
  const request = await requestOf(eventId);

  // Still filtered: the request's own refusal, as `replay req_… --subscription ready-prs` says it.
  const early = await cli('webhook', 'replay', eventId, '--subscription', 'ready-prs');
  const byRequest = await cli('webhook', 'replay', request, '--subscription', 'ready-prs');
  expect([early.code, early.stderr]).toEqual([1, byRequest.stderr]);
  expect(early.stderr).toContain(`'ready-prs' as it is now still does not take request '${request}' (filter "pull_request.draft == false" failed (pull_request.draft is true))`);
  expect(early.stderr).not.toContain('webhook replay req_…');

  expect((await cli('webhook', 'update', 'ready-prs', '--filter', '')).code).toBe(0);
  const replayed = await cli('webhook', 'replay', eventId, '--subscription', 'ready-prs');
  expect([replayed.code, replayed.stderr, replayed.stdout]).toEqual([0, '', expect.stringMatching(new RegExp(`^Queued (evt_\\w+) for 'ready-prs' \\(a replay of ${eventId}\\)\\.\\n$`))]);
  await eventually(() => texts().includes('review 21'), 'ready-prs to run the pull request', 15_000);
  const copy = /^Queued (evt_\w+)/.exec(replayed.stdout)![1]!;
  const [record] = JSON.parse((await cli('webhook', 'event', copy, '--json')).stdout) as Array<Record<string, unknown>>;
  expect(record).toMatchObject({ subscription: 'ready-prs', request: { replay_of: eventId } });
  // all-prs, which took it, is not run again; a second replay for ready-prs is a new attempt of its own.
  const events = JSON.parse((await cli('webhook', 'events', 'all-prs', '--json')).stdout) as Array<{ event_id: string }>;
  expect(events.map((e) => e.event_id)).toEqual([eventId]);
  expect(texts()).toEqual(['review 21']);
}, 60_000);

test('a subscription that took the event replays it as before; one with no verdict in its request is refused as replay req_… refuses it', async () => {
  await subscribe('took', '--events', 'pull_request.opened', '--deliver', 'messenger', '--prompt', 'took {number}');
  const eventId = await post('pull_request', opened(22), 'by-event-2');
  const request = await requestOf(eventId);
  await eventually(() => texts().includes('took 22'), 'took to run the pull request', 15_000);

  const again = await cli('webhook', 'replay', eventId, '--subscription', 'took');
  expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^Queued evt_\\w+ for 'took' \\(a replay of ${eventId}\\)\\.\\n$`))]);
  await eventually(() => texts().filter((t) => t === 'took 22').length === 2, 'the replay for took to run', 15_000);

  // Created after the request: it was never a candidate, so there is nothing of it to run.
  await subscribe('later', '--events', 'pull_request.opened', '--deliver', 'messenger', '--prompt', 'later {number}');
  const late = await cli('webhook', 'replay', eventId, '--subscription', 'later');
  expect([late.code, late.stderr]).toEqual([1, (await cli('webhook', 'replay', request, '--subscription', 'later')).stderr]);
  expect(late.stderr).toContain(`Request '${request}' has no verdict of 'later'`);
  expect(texts().some((t) => t.startsWith('later'))).toBe(false);
}, 60_000);
