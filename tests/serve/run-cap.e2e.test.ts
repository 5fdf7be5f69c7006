/**
 * `--max-runs-per-hour` through `hookagent serve`, the CLI and a Telegram-compatible server
 * on 127.0.0.1: only runs that happen count (hunt 9). The README's remedy for a
 * `rate_limited` event, raising the cap and replaying it in the same hour, runs it; the
 * refusals say how many runs the hour had.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'runcap-github-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-runcap-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

interface Rec { status: string; error?: { message: string } }
async function record(eventId: string): Promise<Rec> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as Rec;
}
const FINAL = ['delivered', 'failed', 'suppressed', 'rate_limited', 'over_budget'];
const finished = (id: string) => eventually(async () => FINAL.includes((await record(id)).status), `${id} to finish`, 30_000);

/** The cap counts per UTC clock hour: a test that straddles an hour's end would see two counters. */
async function awayFromTheHoursEnd(neededMs: number): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < neededMs) await eventually(async () => Date.now() % 3_600_000 < neededMs, 'the next UTC hour to begin', left + 5_000);
}

test('raising the cap and replaying a rate_limited event in the same hour (the README remedy) runs it; refusals count only runs', async () => {
  await awayFromTheHoursEnd(60_000);
  expect((await cli('webhook', 'subscribe', 'capped', '--events', 'issues', '--max-runs-per-hour', '1', '--deliver', 'messenger', '--prompt', 'issue {issue.number}')).code).toBe(0);
  const issue = (n: number) => ({ action: 'opened', issue: { number: n, title: 't' }, repository: { full_name: 'o/r' } });
  const first = await post('issues', issue(1), 'runcap-1');
  await finished(first);
  const second = await post('issues', issue(2), 'runcap-2');
  const third = await post('issues', issue(3), 'runcap-3');
  await finished(second);
  await finished(third);
  expect((await record(first)).status).toBe('delivered');
  // One run took place this hour, whatever the number of refusals.
  for (const refused of [second, third]) {
    expect(await record(refused)).toMatchObject({ status: 'rate_limited', error: { message: `max_runs_per_hour 1 reached (1 run this hour); replay it with 'hookagent webhook replay ${refused}'` } });
  }

  // Room for one more run this hour: the replay of a refused event takes it.
  expect((await cli('webhook', 'update', 'capped', '--max-runs-per-hour', '2')).code).toBe(0);
  const replay = await cli('webhook', 'replay', second);
  expect(replay.code).toBe(0);
  const copy = /Queued (evt_[0-9a-z]+)/.exec(replay.stdout)?.[1] as string;
  await finished(copy);
  expect((await record(copy)).status).toBe('delivered');

  // Now the cap of 2 is reached: the next replay is refused, and says so.
  const again = await cli('webhook', 'replay', third);
  const copy3 = /Queued (evt_[0-9a-z]+)/.exec(again.stdout)?.[1] as string;
  await finished(copy3);
  expect(await record(copy3)).toMatchObject({ status: 'rate_limited', error: { message: expect.stringContaining('max_runs_per_hour 2 reached (2 runs this hour)') } });
  expect(texts()).toEqual(['issue 1', 'issue 2']);
  expect((await cli('webhook', 'delete', 'capped')).code).toBe(0);
}, 150_000);
