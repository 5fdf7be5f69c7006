/**
 * Hunt 13 D3: which candidate verdicts a request-log entry keeps. Every routed one (matched,
 * held, refused by payload filters) first, whatever the names; event-filter misses fill the
 * room up to 100 and the rest are counted; routed ones past 200 are cut too (the entry's size
 * stays bounded), counted, and said so.
 */
import { buildRecord } from '../../functions/core/ingest/request-log';
import { MAX_CANDIDATES, MAX_ROUTED_CANDIDATES, omittedNote } from '../../functions/core/ingest/request-candidates';
import { filteredSubscriptions } from '../../functions/core/request-filtered';
import type { CandidateVerdict } from '../../functions/core/types';

const miss = (n: number): CandidateVerdict => ({ subscription: `a-${String(n).padStart(3, '0')}`, matched: false, reason: 'event filters issues do not match github:push' });
const customOnly: CandidateVerdict = { subscription: 'b-alerts', matched: false, reason: 'no events: reached only through its custom endpoint' };
const refused = (name: string): CandidateVerdict => ({ subscription: name, matched: false, reason: 'filter "ref == \'refs/heads/main\'" failed (ref is "refs/heads/dev")' });
const taken: CandidateVerdict = { subscription: 'z-taken', matched: true, reason: 'event filter push matches github:push' };
const held: CandidateVerdict = { subscription: 'y-held', matched: true, reason: 'event filter push matches github:push; paused: held' };
const record = (candidates: CandidateVerdict[]) => buildRecord({ method: 'POST', headers: {}, sourceIp: undefined }, { status: 202, headers: {}, body: { status: 'accepted' } }, { endpoint: 'github', candidates }, Date.parse('2026-11-25T10:00:00Z'), 1);

test('routed verdicts first (matched, then refused), then misses up to 100 in all; the misses left out are counted and said', () => {
  const misses = Array.from({ length: 150 }, (_, i) => miss(i));
  const entry = record([...misses.slice(0, 70), customOnly, refused('m-refused'), held, ...misses.slice(70), taken]);
  expect(entry.candidates?.slice(0, 4)).toEqual([held, taken, refused('m-refused'), miss(0)]);
  expect(entry.candidates).toHaveLength(MAX_CANDIDATES);
  expect(entry.candidates_omitted).toBe(151 + 3 - MAX_CANDIDATES);
  expect(omittedNote(entry.candidates ?? [], entry.candidates_omitted)).toBe('and 54 others whose event filters do not match');
  expect(filteredSubscriptions(entry)).toEqual(['m-refused']);
  // Fewer than the room: all kept, none counted.
  const few = record([miss(1), refused('m-refused')]);
  expect(few).toMatchObject({ candidates: [refused('m-refused'), miss(1)] });
  expect(few.candidates_omitted).toBeUndefined();
});

test('more than 100 routed verdicts are all kept (no miss then); past 200 they are cut, counted and said', () => {
  const routed = Array.from({ length: 150 }, (_, i) => refused(`r-${String(i).padStart(3, '0')}`));
  const entry = record([miss(1), ...routed]);
  expect(entry.candidates).toEqual(routed);
  expect(entry.candidates_omitted).toBe(1);
  expect(filteredSubscriptions(entry)).toHaveLength(150);

  const many = Array.from({ length: 230 }, (_, i) => refused(`r-${String(i).padStart(3, '0')}`));
  const capped = record([miss(1), taken, ...many]);
  expect(capped.candidates).toHaveLength(MAX_ROUTED_CANDIDATES);
  expect(capped.candidates?.[0]).toEqual(taken);
  expect(capped.candidates_omitted).toBe(232 - MAX_ROUTED_CANDIDATES);
  expect(omittedNote(capped.candidates ?? [], capped.candidates_omitted)).toBe('and 32 others not listed (the log keeps 200 verdicts of subscriptions the event reached)');
});
