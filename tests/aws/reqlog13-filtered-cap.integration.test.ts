/**
 * Hunt 13 D3 on AWS: with more than 100 subscriptions named before it, a subscription whose
 * payload filters turned a request away keeps its verdict in the DynamoDB request log's entry
 * and its copy in `filtered#<subscription>`, so `webhook events <name> --status filtered`
 * finds the request. Against dynalite, the entry as ingest builds it.
 */
import { buildRecord } from '../../functions/core/ingest/request-log';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import type { CandidateVerdict } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const REFUSED: CandidateVerdict = { subscription: 'review-ready', matched: false, reason: 'filter "pull_request.draft == false" failed (pull_request.draft is true)' };

test('the refusal of a subscription named after 120 others is kept, indexed and listed; the misses left out are counted', async () => {
  const misses = Array.from({ length: 120 }, (_, i): CandidateVerdict => ({ subscription: `issues-${String(i).padStart(3, '0')}`, matched: false, reason: 'event filters issues.opened do not match github:pull_request.opened' }));
  const entry = buildRecord({ method: 'POST', headers: { 'x-github-event': 'pull_request' }, sourceIp: '127.0.0.1' }, { status: 200, headers: {}, body: { status: 'ignored', reason: 'Filtered out' } },
    { endpoint: 'github', event: 'pull_request', action: 'opened', deliveryId: 'd-1', candidates: [...misses, REFUSED] }, T0, 1);
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, new ManualClock(T0 + 60_000));
  await log.record(entry);

  const [listed] = await log.list({ limit: 5 });
  expect(listed?.candidates?.[0]).toEqual(REFUSED);
  expect(listed).toMatchObject({ outcome: 'filtered', candidates_omitted: 21 });
  expect(listed?.candidates).toHaveLength(100);
  expect(await log.listFiltered({ subscription: 'review-ready', limit: 10 })).toEqual({ entries: [expect.objectContaining({ request_id: entry.request_id })] });
});
