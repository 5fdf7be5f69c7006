/**
 * Hunt 9 (subs) D2, end to end through `hookagent serve`, the CLI and a Telegram-compatible
 * server on 127.0.0.1: `webhook update --debounce 0` while a debounced event waits in the
 * queue. The events accepted after the change run at once, and each is recorded as its
 * subject's latest, so the older one is superseded when it leaves the queue instead of
 * running after them (the older commit's review last).
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'debounce-change-github-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-debounce-change-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts, postGithub: post } = h;

interface Rec { status: string; superseded_by?: string }
async function record(eventId: string): Promise<Rec> {
  const result = await cli('webhook', 'event', eventId, '--json');
  if (result.code !== 0) throw new Error(`webhook event ${eventId} exited ${result.code}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as unknown;
  return (Array.isArray(parsed) ? parsed[0] : parsed) as Rec;
}
const FINAL = ['delivered', 'superseded', 'failed', 'suppressed'];
const finished = (id: string) => eventually(async () => FINAL.includes((await record(id)).status), `${id} to finish`, 30_000);
const pr = (sha: string) => ({ action: 'synchronize', number: 9, pull_request: { number: 9, head: { sha } }, repository: { full_name: 'o/r' } });

test('debounce turned off while a burst waits: the older event does not run after the newer ones, which run without delay', async () => {
  expect((await cli('webhook', 'subscribe', 'deb-off', '--events', 'pull_request', '--agent', 'none', '--deliver', 'messenger', '--debounce', '4s', '--prompt', 'review of {pull_request.head.sha}')).code).toBe(0);
  const older = await post('pull_request', pr('aaaaaaa'), 'deb-off-1');
  expect((await cli('webhook', 'update', 'deb-off', '--debounce', '0')).code).toBe(0);
  const newer = await post('pull_request', pr('bbbbbbb'), 'deb-off-2');
  // Not debounced any more: it runs without waiting for the older one's window.
  await finished(newer);
  expect((await record(older)).status).toBe('queued');
  const newest = await post('pull_request', pr('ccccccc'), 'deb-off-3');
  await finished(newest);
  await finished(older);
  // Both events accepted after the change ran; the older one is superseded by the latest of them.
  expect((await record(newer)).status).toBe('delivered');
  expect((await record(newest)).status).toBe('delivered');
  expect(await record(older)).toMatchObject({ status: 'superseded', superseded_by: newest });
  expect(texts()).toEqual(['review of bbbbbbb', 'review of ccccccc']);
  expect((await cli('webhook', 'delete', 'deb-off')).code).toBe(0);
}, 90_000);
