/**
 * The SQLite request log lists the requests one subscription's payload filters turned away
 * by subscription and time (`request_filtered`, schema migration 5), whatever else the log
 * holds (hunt 11 D3): entries written before the migration too, and housekeeping's deletes
 * take their rows with them. Real SQLite in a temporary directory.
 */
import { expireOld } from '../../functions/local/sqlite/housekeeping';
import { REQUEST_RETENTION_MS, SqliteRequestLog } from '../../functions/local/sqlite/request-log';
import type { CandidateVerdict, RequestRecord } from '../../functions/core/types';
import { tempStore, type TestStore } from '../support/local-store';

let t: TestStore;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.close());

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const refused = (subscription: string, n = 7): CandidateVerdict => ({ subscription, matched: false, reason: `filter "issue.number > 100" failed (issue.number is ${n})` });
const entry = (id: string, at: number, candidates: CandidateVerdict[] = [], outcome: RequestRecord['outcome'] = candidates.some((c) => c.matched) ? 'accepted' : candidates.length ? 'filtered' : 'not_handled'): RequestRecord => ({
  request_id: id, received_at: new Date(at).toISOString(), endpoint: 'github', method: 'POST', status: outcome === 'accepted' ? 202 : 200, outcome, event: 'issues', action: 'opened', header_names: [], candidates,
});
const ids = (entries: RequestRecord[]): string[] => entries.map((e) => e.request_id);

test('by subscription, newest first, past 2,000 newer entries of the log; accepted for another, not an event-filter miss; --limit and until page', async () => {
  const log = new SqliteRequestLog(t.store);
  await log.record(entry('req_a', T0, [refused('big')]));
  await log.record(entry('req_b', T0 + 1000, [refused('big', 8), { subscription: 'all', matched: true, reason: 'matched' }]));
  await log.record(entry('req_c', T0 + 2000, [refused('big'), refused('other')]));
  await log.record(entry('req_miss', T0 + 3000, [{ subscription: 'big', matched: false, reason: 'event filter issues.opened does not match push' }]));
  await log.record(entry('req_paused', T0 + 3500, [{ subscription: 'big', matched: false, reason: 'paused' }]));
  for (let i = 0; i < 2000; i++) await log.record(entry(`req_push_${i}`, T0 + 4000 + i));

  expect(ids((await log.listFiltered({ subscription: 'big', limit: 10 })).entries)).toEqual(['req_c', 'req_b', 'req_a']);
  expect(await log.listFiltered({ subscription: 'other', limit: 10 })).toEqual({ entries: [expect.objectContaining({ request_id: 'req_c', outcome: 'filtered' })] });
  expect((await log.listFiltered({ subscription: 'all', limit: 10 })).entries).toEqual([]);
  expect(ids((await log.listFiltered({ subscription: 'big', limit: 2 })).entries)).toEqual(['req_c', 'req_b']);
  // The next page: at or before the oldest row's time (until is inclusive).
  expect(ids((await log.listFiltered({ subscription: 'big', limit: 2, until: T0 + 1000 })).entries)).toEqual(['req_b', 'req_a']);
});

test('entries written before migration 5 are indexed by it; housekeeping removes the rows of the entries it drops', async () => {
  const log = new SqliteRequestLog(t.store);
  await log.record(entry('req_old', T0, [refused('big'), { subscription: 'all', matched: true, reason: 'matched' }]));
  await log.record(entry('req_old_miss', T0 + 1, [{ subscription: 'big', matched: false, reason: 'event filter issues.closed does not match issues.opened' }]));
  await log.listFiltered({ subscription: 'big', limit: 1 });
  // This database as schema 4 left it: no request_filtered.
  t.store.db.exec('DROP TRIGGER requests_filtered_del; DROP TABLE request_filtered;');
  t.store.db.pragma('user_version = 4');
  const again = new SqliteRequestLog(t.reopen());
  expect(ids((await again.listFiltered({ subscription: 'big', limit: 10 })).entries)).toEqual(['req_old']);
  expect(t.store.db.prepare('SELECT subscription, received_at FROM request_filtered').all()).toEqual([{ subscription: 'big', received_at: T0 }]);

  await again.record(entry('req_new', T0 + REQUEST_RETENTION_MS, [refused('big')]));
  await again.listFiltered({ subscription: 'big', limit: 1 });
  await expireOld(t.store, T0 + REQUEST_RETENTION_MS + 1);
  expect(ids((await again.listFiltered({ subscription: 'big', limit: 10 })).entries)).toEqual(['req_new']);
  expect(t.store.db.prepare('SELECT count(*) FROM request_filtered').pluck().get()).toBe(1);
});
