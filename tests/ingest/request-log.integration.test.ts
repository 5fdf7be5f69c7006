/** DynamoRequestLog on dynalite: newest first across days, filters, limit, since, 7-day retention. */
import { DynamoRequestLog } from '../../functions/aws/request-log';
import type { RequestRecord } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { startHarness, type Harness } from '../support/ingest-harness';
import { apiEvent } from '../support/requests';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

const DAY = 24 * 3600 * 1000;
let n = 0;
function entry(at: number, fields: Partial<RequestRecord> = {}): RequestRecord {
  n += 1;
  return { request_id: `req_${String(n).padStart(6, '0')}`, received_at: new Date(at).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', header_names: ['x-github-event'], ...fields };
}

test('lists newest first across days; endpoint, outcome, since and limit; entries older than 7 days are gone', async () => {
  const clock = new ManualClock(Date.parse('2026-11-23T10:00:00Z'));
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock);
  const now = clock.now();
  const written = [
    entry(now - 8 * DAY, { outcome: 'filtered' }), entry(now - 3 * DAY), entry(now - 2 * DAY - 1000, { endpoint: 'gitlab' }),
    entry(now - DAY, { outcome: 'rejected_signature', status: 401, count: 7 }), entry(now - 1000, { endpoint: 'custom/alerts' }), entry(now - 500),
  ];
  for (const e of written) await log.record(e);
  const all = await log.list({ limit: 100 });
  expect(all.map((e) => e.request_id)).toEqual(written.slice(1).reverse().map((e) => e.request_id));
  expect(all.find((e) => e.outcome === 'rejected_signature')).toMatchObject({ count: 7, status: 401 });
  expect((await log.list({ limit: 2 })).map((e) => e.request_id)).toEqual([written[5]!.request_id, written[4]!.request_id]);
  expect((await log.list({ limit: 10, endpoint: 'gitlab' })).map((e) => e.endpoint)).toEqual(['gitlab']);
  expect((await log.list({ limit: 10, outcome: 'rejected_signature' }))).toHaveLength(1);
  expect((await log.list({ limit: 10, outcome: 'filtered' }))).toHaveLength(0);
  expect((await log.list({ limit: 10, since: now - 2 * DAY }))).toHaveLength(3);
  clock.advance(7 * DAY - 10_000);
  expect((await log.list({ limit: 10 })).map((e) => e.request_id)).toEqual([written[5]!.request_id, written[4]!.request_id]);
});

test('a page boundary: many entries of one day with a filter that matches few', async () => {
  const clock = new ManualClock(Date.parse('2026-12-01T12:00:00Z'));
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock);
  for (let i = 0; i < 60; i++) await log.record(entry(clock.now() - 60_000 + i * 1000, i % 20 === 0 ? { outcome: 'not_handled', candidates: [{ subscription: 'x', matched: false, reason: 'r'.repeat(2000) }] } : {}));
  expect(await log.list({ limit: 10, outcome: 'not_handled' })).toHaveLength(3);
});

describe('the ingest path records every webhook request, never /health', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h.close());

  test('GET, HEAD, POST and PUT /health (200 or 405) are not recorded; a 405 on a webhook URL and a 404 are', async () => {
    const probe = { 'x-health-probe': '1' };
    const answers = [];
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']) {
      for (const path of ['/health', '/health/']) answers.push((await h.handler(apiEvent({ method, path, headers: probe, body: method === 'GET' || method === 'HEAD' ? undefined : '{}' }))).statusCode);
    }
    expect(answers).toEqual([200, 200, 200, 200, 405, 405, 405, 405, 405, 405]);
    // Controls: the same probe header on requests that are recorded.
    expect((await h.handler(apiEvent({ method: 'GET', path: '/webhooks/github', headers: probe }))).statusCode).toBe(405);
    expect((await h.handler(apiEvent({ method: 'POST', path: '/admin', headers: probe, body: '{}' }))).statusCode).toBe(404);
    const recorded = (await h.requests.list({ limit: 100 })).filter((e) => e.header_names.includes('x-health-probe'));
    expect(recorded.map((e) => `${e.endpoint} ${e.method} ${e.outcome}`).sort()).toEqual(['github GET method_not_allowed', 'unknown POST not_found']);
  });
});
