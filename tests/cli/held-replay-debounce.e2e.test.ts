/**
 * Hunt 11 D1 end to end (the built CLI and `hookagent serve`, signed GitHub deliveries, a
 * local Telegram server as the `messenger` target): a replay held by a paused, debounced
 * subscription runs at `resume`, and so does a newer event of the same subject held while
 * paused. "Replays (`webhook replay`) are never debounced." Before, the replay kept the
 * original's subject and counted as its newest event: it superseded the commit pushed
 * while paused (which was never reviewed), or a newer event superseded the replay.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'held-replay-debounce-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-held-replay-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

interface Rec { status: string; superseded_by?: string; subscription: string }

async function record(eventId: string): Promise<Rec> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const [first] = JSON.parse(result.stdout) as Rec[];
  return first as Rec;
}
const FINAL = ['delivered', 'superseded', 'failed', 'suppressed'];
const finished = (id: string) => eventually(async () => FINAL.includes((await record(id)).status), `${id} to finish`, 30_000);
const pr = (number: number, sha: string) => ({ action: 'synchronize', number, pull_request: { number, head: { sha } }, repository: { full_name: 'o/r' } });

async function subscribe(name: string): Promise<void> {
  const created = await cli('webhook', 'subscribe', name, '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--debounce', '1s', '--prompt', 'review of {pull_request.head.sha}');
  expect(created.code).toBe(0);
}

/** `webhook replay` for one subscription; the new event's id. */
async function replay(eventId: string, name: string): Promise<string> {
  const result = await cli('webhook', 'replay', eventId, '--subscription', name);
  expect([result.code, result.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^Held evt_\\w+ for '${name}' \\(a replay of ${eventId}\\)`))]);
  return /^Held (evt_\w+)/.exec(result.stdout)![1]!;
}

test('a replay held while paused does not supersede the newer commit held before it: both are reviewed', async () => {
  await subscribe('held-rep-a');
  const first = await post('pull_request', pr(9, 'aaaaaaa'), 'held-rep-a-1');
  await finished(first);
  expect((await cli('webhook', 'pause', 'held-rep-a')).code).toBe(0);
  const newer = await post('pull_request', pr(9, 'bbbbbbb'), 'held-rep-a-2');
  expect((await record(newer)).status).toBe('held');
  const copy = await replay(first, 'held-rep-a');
  expect((await record(copy)).status).toBe('held');

  expect((await cli('webhook', 'resume', 'held-rep-a')).stdout).toContain('released 2 held event(s)');
  await finished(copy);
  await finished(newer);
  expect([(await record(newer)).status, (await record(copy)).status]).toEqual(['delivered', 'delivered']);
  expect(texts().sort()).toEqual(['review of aaaaaaa', 'review of aaaaaaa', 'review of bbbbbbb']);
}, 90_000);

test('a newer commit held while paused does not swallow a replay made before it', async () => {
  await subscribe('held-rep-b');
  const first = await post('pull_request', pr(10, 'ccccccc'), 'held-rep-b-1');
  await finished(first);
  expect((await cli('webhook', 'pause', 'held-rep-b')).code).toBe(0);
  const copy = await replay(first, 'held-rep-b');
  const newer = await post('pull_request', pr(10, 'ddddddd'), 'held-rep-b-2');

  expect((await cli('webhook', 'resume', 'held-rep-b')).stdout).toContain('released 2 held event(s)');
  await finished(copy);
  await finished(newer);
  expect([(await record(newer)).status, (await record(copy)).status]).toEqual(['delivered', 'delivered']);
  expect(texts()).toEqual(expect.arrayContaining(['review of ccccccc', 'review of ddddddd']));
}, 90_000);
