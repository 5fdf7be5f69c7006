/**
 * A held burst after `update --filter`, then `resume` (hunt 13 D1, D2), end to end through
 * the built CLI and `hookagent serve`.
 *
 * A debounced subscription is paused; two events of one pull request are held (A passes the
 * filter that is about to be set, B does not); `update --filter` is run; `resume` says it
 * released one event (A) and that one was not run (B). README: "A burst held while paused
 * runs once" and "A held event is checked against the subscription as it is at the release
 * ... one the subscription no longer takes is not run". A must run, not be recorded
 * `superseded` by B (which ended `suppressed`); and B's DETAIL must not say an agent answered.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'held13-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-held13-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

interface Rec { status: string; superseded_by?: string }
async function record(eventId: string): Promise<Rec> {
  const result = await cli('webhook', 'event', eventId, '--json');
  return (JSON.parse(result.stdout) as Rec[])[0] as Rec;
}
const FINAL = ['delivered', 'superseded', 'failed', 'suppressed'];
const finished = (id: string) => eventually(async () => FINAL.includes((await record(id)).status), `${id} to finish`, 30_000);
const pr = (action: string, sha: string) => ({ action, number: 7, pull_request: { number: 7, head: { sha } }, repository: { full_name: 'o/r' } });

test('the held event resume says it released runs, not superseded by the held event the update refused', async () => {
  expect((await cli('webhook', 'subscribe', 'held-upd', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger',
    '--debounce', '1s', '--prompt', 'PR {number} {action}')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'held-upd')).code).toBe(0);
  const a = await post('pull_request', pr('labeled', 'aaaaaaa'), 'held-upd-a');
  const b = await post('pull_request', pr('synchronize', 'bbbbbbb'), 'held-upd-b');
  expect((await cli('webhook', 'update', 'held-upd', '--filter', 'action == labeled')).code).toBe(0);
  const resumed = await cli('webhook', 'resume', 'held-upd');
  expect(resumed.stdout).toContain('released 1 held event(s)');
  await finished(a);
  await finished(b);
  expect((await record(b)).status).toBe('suppressed');
  // Not superseded by B, which ended suppressed (the pointer was moved off it at the release).
  expect(await record(a)).toMatchObject({ status: 'delivered' });
  expect(texts()).toEqual(['PR 7 labeled']);
}, 90_000);

test('webhook events does not say "the agent answered [SILENT]" for an event no agent saw', async () => {
  expect((await cli('webhook', 'subscribe', 'held-upd2', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'x')).code).toBe(0);
  expect((await cli('webhook', 'pause', 'held-upd2')).code).toBe(0);
  const b = await post('pull_request', pr('synchronize', 'ccccccc'), 'held-upd2-b');
  expect((await cli('webhook', 'update', 'held-upd2', '--filter', 'action == labeled')).code).toBe(0);
  expect((await cli('webhook', 'resume', 'held-upd2')).code).toBe(0);
  await finished(b);
  const table = (await cli('webhook', 'events', 'held-upd2')).stdout;
  const row = table.split('\n').find((line) => line.includes(b)) ?? '';
  expect(row).toContain('suppressed');
  // No agent saw it: the suppression's own reason comes first.
  expect(row).not.toContain('the agent answered [SILENT]');
  expect(row).toMatch(/suppressed\s+\S+\s+not run: updated while held \(filter "action == labeled" failed/);
}, 90_000);
