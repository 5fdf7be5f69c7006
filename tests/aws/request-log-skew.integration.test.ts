/**
 * The DynamoDB request log's upper time bound (`until`): a query without one is not clipped
 * at the reader's clock (a Lambda that stamped an entry may run ahead of the laptop reading
 * it), one with it is inclusive, across UTC midnight too. Against dynalite.
 */
import { DynamoRequestLog } from '../../functions/aws/request-log';
import type { RequestRecord } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

const entry = (id: string, at: number): RequestRecord => ({ request_id: id, received_at: new Date(at).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', header_names: [] });

test('a query without until lists the newest entries even when their host clock ran 2 s ahead of the reader', async () => {
  // The CLI's clock (webhook requests on a laptop); the Lambda that stamped the entries is 2 s ahead.
  const reader = new ManualClock(Date.parse('2026-11-23T10:00:00Z'));
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, reader);
  await log.record(entry('req_skew_old', reader.now() - 60_000));
  await log.record(entry('req_skew_new', reader.now() + 2_000));
  const listed = await log.list({ limit: 10 });
  expect(listed.map((e) => e.request_id)).toContain('req_skew_new');
});

test('an entry exactly at until is listed (the bound is inclusive), also across UTC midnight', async () => {
  const reader = new ManualClock(Date.parse('2026-11-26T00:00:05Z'));
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, reader);
  const at = Date.parse('2026-11-26T00:00:00.000Z');
  await log.record(entry('req_mid_a', at));
  await log.record(entry('req_mid_b', at - 1));
  const listed = await log.list({ limit: 10, since: at - 1000, until: at });
  expect(listed.map((e) => e.request_id)).toEqual(['req_mid_a', 'req_mid_b']);
});

test("webhook event req_…'s lookup (since = until = the id's millisecond) finds a request stamped 2 s after the reader's clock", async () => {
  const reader = new ManualClock(Date.parse('2026-11-23T11:00:00Z'));
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, reader);
  const at = reader.now() + 2_000;
  await log.record(entry('req_skew_exact', at));
  expect((await log.list({ limit: 5, since: at, until: at })).map((e) => e.request_id)).toEqual(['req_skew_exact']);
});
