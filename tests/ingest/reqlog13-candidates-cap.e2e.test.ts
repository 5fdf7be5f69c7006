/**
 * Hunt 13 D3: the request log kept the first 100 candidate verdicts in subscription-name
 * order, so with 100 subscriptions named before it, the one an event reached lost its
 * verdict: `webhook requests` could not say why it did not fire and `webhook events <name>
 * --status filtered` listed nothing. Now every routed verdict is kept, first; only
 * event-filter misses are capped, and how many were left out is recorded and shown.
 *
 * Real SQLite store of a config dir (ingest in-process as serve runs it), the built CLI.
 */
import { buildCli, hkIn as hk, tempConfigDir } from '../support/cli';
import { ingestOnStore, type StoreIngest } from '../support/store-ingest';
import type { CandidateVerdict, Subscription } from '../../functions/core/types';

let dir: string;
let ingest: StoreIngest;
beforeAll(async () => {
  buildCli();
  dir = tempConfigDir('webhooks: { github: { secret: ${GH} } }', 'hookagent-reqlog13-cap-');
  ingest = await ingestOnStore(dir);
}, 60_000);
afterAll(() => ingest.close());

const sub = (name: string, fields: Partial<Subscription>): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '2026-11-25T00:00:00.000Z',
  updated_at: '2026-11-25T00:00:00.000Z', secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', ...fields,
});
type Entry = { outcome: string; candidates?: CandidateVerdict[]; candidates_omitted?: number };
const lastEntry = async (): Promise<Entry | undefined> => (JSON.parse((await hk(dir, 'webhook', 'requests', '--json', '--limit', '1')).stdout) as Entry[])[0];
const REFUSED = { subscription: 'review-ready', matched: false, reason: 'filter "pull_request.draft == false" failed (pull_request.draft is true)' };
const draft = { action: 'opened', number: 3, pull_request: { number: 3, draft: true }, repository: { full_name: 'o/r' } };

test('the verdicts of the subscriptions a request reached are kept, first, with 100 others named before them; the misses left out are counted', async () => {
  // 100 unrelated subscriptions (issue triage for 100 repositories, say), all named before 'review-ready'.
  for (let i = 0; i < 100; i++) await ingest.store.subscriptions.create(sub(`issues-${String(i).padStart(3, '0')}`, { events: ['issues.opened'] }));
  await ingest.store.subscriptions.create(sub('review-ready', { events: ['pull_request'], filters: ['pull_request.draft == false'] }));

  const answer = await ingest.send('pull_request', draft, { delivery: 'cap-1' });
  expect(JSON.parse(answer.body as string)).toMatchObject({ status: 'ignored', reason: 'Filtered out' });
  const entry = await lastEntry();
  expect(entry?.outcome).toBe('filtered');
  // Before: issues-000 … issues-099 only. Now the routed verdict first, 99 misses, 1 counted.
  expect(entry?.candidates?.[0]).toEqual(REFUSED);
  expect(entry?.candidates).toHaveLength(100);
  expect(entry?.candidates_omitted).toBe(1);
  const why = (await hk(dir, 'webhook', 'requests', '--limit', '1')).stdout;
  expect(why).toContain('review-ready: no (filter "pull_request.draft == false" failed');
  expect(why).toContain('and 1 other whose event filters do not match');
  expect(JSON.parse((await hk(dir, 'webhook', 'events', 'review-ready', '--status', 'filtered', '--json')).stdout)).toHaveLength(1);

  // The subscription that took the event keeps its verdict too, named after all the others.
  await ingest.store.subscriptions.create(sub('zz-every-pr', { events: ['pull_request'] }));
  const taken = await ingest.send('pull_request', draft, { delivery: 'cap-2' });
  expect(JSON.parse(taken.body as string)).toMatchObject({ status: 'accepted', subscriptions: ['zz-every-pr'] });
  const second = await lastEntry();
  expect(second?.candidates?.slice(0, 2)).toEqual([{ subscription: 'zz-every-pr', matched: true, reason: 'event filter pull_request matches github:pull_request.opened' }, REFUSED]);
  expect(second?.candidates_omitted).toBe(2);
  expect(JSON.parse((await hk(dir, 'webhook', 'events', 'review-ready', '--status', 'filtered', '--json')).stdout)).toHaveLength(2);
}, 120_000);
