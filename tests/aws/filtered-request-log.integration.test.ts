/**
 * The DynamoDB request log lists the requests one subscription's payload filters turned away
 * from a copy per (subscription, request) in the partition `filtered#<subscription>`,
 * written with the entry (hunt 11 D3); entries an earlier hookagent wrote (no copies) are
 * read oldest first up to the first entry that has them, at most UNINDEXED_SCAN, and a read
 * cut short says so. Against dynalite.
 */
import { BatchWriteItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoRequestLog, REQUEST_RETENTION_SECONDS } from '../../functions/aws/request-log';
import { UNINDEXED_SCAN } from '../../functions/aws/request-filtered';
import type { CandidateVerdict, RequestRecord } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeEach(async () => {
  dynamo = await startDynalite();
});
afterEach(async () => dynamo.close());

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const refused = (subscription: string): CandidateVerdict => ({ subscription, matched: false, reason: 'filter "issue.number > 100" failed (issue.number is 7)' });
const accepted = (subscription: string): CandidateVerdict => ({ subscription, matched: true, reason: 'matched' });
const entry = (id: string, at: number, candidates: CandidateVerdict[] = []): RequestRecord => ({
  request_id: id, received_at: new Date(at).toISOString(), endpoint: 'github', method: 'POST', status: 200,
  outcome: candidates.some((c) => c.matched) ? 'accepted' : candidates.length ? 'filtered' : 'not_handled', event: 'issues', header_names: [], candidates,
});
const ids = (entries: RequestRecord[]): string[] => entries.map((e) => e.request_id);

/** Items as a hookagent before the copies wrote them: no `indexed`, no copies. */
async function writeOld(entries: RequestRecord[]): Promise<void> {
  const items = entries.map((e): Record<string, AttributeValue> => ({
    day: { S: e.received_at.slice(0, 10) }, at: { S: `${e.received_at}#${e.request_id}` }, endpoint: { S: e.endpoint }, outcome: { S: e.outcome },
    record: { S: JSON.stringify(e) }, expires_at: { N: String(Math.floor(Date.parse(e.received_at) / 1000) + REQUEST_RETENTION_SECONDS) },
  }));
  for (let i = 0; i < items.length; i += 25) {
    await dynamo.client.send(new BatchWriteItemCommand({ RequestItems: { [dynamo.tables.requests]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  }
}

test('by subscription, newest first, past 1,500 newer entries; with the commit of an accepted request; 30 subscriptions refusing one request; until pages', async () => {
  const clock = new ManualClock(T0 + 3600_000);
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock, dynamo.tables.dedup);
  await log.record(entry('req_a', T0, [refused('big')]));
  await log.recordAndCommit!(entry('req_b', T0 + 1000, [refused('big'), accepted('all')]), { key: 'github#d-b', eventId: 'evt_b', ttlSeconds: 3600 });
  const many = Array.from({ length: 30 }, (_, i) => `sub-${i}`);
  await log.recordAndCommit!(entry('req_c', T0 + 2000, [...many.map(refused), refused('big'), accepted('all')]), { key: 'github#d-c', eventId: 'evt_c', ttlSeconds: 3600 });
  for (let i = 0; i < 1500; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => log.record(entry(`req_push_${i + j}`, T0 + 3000 + i + j))));

  expect(ids((await log.listFiltered({ subscription: 'big', limit: 10 })).entries)).toEqual(['req_c', 'req_b', 'req_a']);
  expect(await log.listFiltered({ subscription: 'sub-29', limit: 10 })).toEqual({ entries: [expect.objectContaining({ request_id: 'req_c', outcome: 'accepted' })] });
  expect((await log.listFiltered({ subscription: 'all', limit: 10 })).entries).toEqual([]);
  expect(ids((await log.listFiltered({ subscription: 'big', limit: 2 })).entries)).toEqual(['req_c', 'req_b']);
  expect(ids((await log.listFiltered({ subscription: 'big', limit: 2, until: T0 + 1000 })).entries)).toEqual(['req_b', 'req_a']);
  // The delivery ids were committed with the entries, and the whole log still lists each request once.
  expect(await log.list({ limit: 2000 })).toHaveLength(1503);
  const dedup = new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock);
  for (const [key, eventId] of [['github#d-b', 'evt_b'], ['github#d-c', 'evt_c']] as const) expect(await dedup.claim(key, { eventId: 'evt_again', ttlSeconds: 3600, staleBefore: 0 })).toEqual({ kind: 'duplicate', eventId });
}, 60_000);

test('entries written before the copies are found (read oldest first up to the first entry with them), until they expire', async () => {
  const clock = new ManualClock(T0 + 2 * 24 * 3600_000);
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock);
  await writeOld([entry('req_old_1', T0, [refused('big')]), entry('req_old_push', T0 + 1), entry('req_old_2', T0 + 24 * 3600_000, [refused('big'), accepted('all')])]);
  await log.record(entry('req_new', T0 + 36 * 3600_000, [refused('big')]));
  await log.record(entry('req_new_push', T0 + 37 * 3600_000));
  expect(await log.listFiltered({ subscription: 'big', limit: 10 })).toEqual({ entries: [expect.objectContaining({ request_id: 'req_new' }), expect.objectContaining({ request_id: 'req_old_2' }), expect.objectContaining({ request_id: 'req_old_1' })] });
  expect(ids((await log.listFiltered({ subscription: 'big', limit: 1, until: T0 + 24 * 3600_000 })).entries)).toEqual(['req_old_2']);
  // Seven days on, the old entries have expired: the copies alone.
  clock.advance(6 * 24 * 3600_000);
  expect(await log.listFiltered({ subscription: 'big', limit: 10 })).toEqual({ entries: [expect.objectContaining({ request_id: 'req_new' })] });
});

test(`more than ${UNINDEXED_SCAN} entries written before the copies: the oldest are read, and the listing says it stopped short`, async () => {
  const clock = new ManualClock(T0 + 24 * 3600_000);
  const log = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock);
  const old = Array.from({ length: UNINDEXED_SCAN + 10 }, (_, i) => entry(`req_old_${i}`, T0 + i, i === 5 || i === UNINDEXED_SCAN + 5 ? [refused('big')] : []));
  await writeOld(old);
  await log.record(entry('req_new', T0 + 3600_000, [refused('big')]));
  const listed = await log.listFiltered({ subscription: 'big', limit: 10 });
  expect(ids(listed.entries)).toEqual(['req_new', 'req_old_5']);
  expect(listed.partial).toContain(`among the oldest ${UNINDEXED_SCAN} entries of the request log only`);
}, 120_000);
