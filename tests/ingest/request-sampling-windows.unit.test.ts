/**
 * RejectionSampler's windows when many keys arrive in one minute: a key's window lives its
 * whole minute whatever else arrives, only expired windows are evicted, a skipped count is
 * carried into the key's next written entry, and the number of windows (and so of writes)
 * stays bounded however many keys a sender makes up.
 */
import { REJECTION_SAMPLES, RejectionSampler, SAMPLED_KEYS } from '../../functions/core/ingest/request-log';

const T = Date.parse('2026-11-22T12:00:00Z');
const MINUTE = 60_000;

/** Takes `key` `times` times at `now`: what each take answered (a count to write, or undefined). */
const takes = (sampler: RejectionSampler, key: string, times: number, now: number) => Array.from({ length: times }, () => sampler.take(key, now));
const written = (answers: Array<number | undefined>) => answers.filter((a) => a !== undefined).length;

test('a real endpoint\'s window survives 5,000 other keys in its minute, and its skipped count is written when the next minute starts', () => {
  const sampler = new RejectionSampler();
  expect(written(takes(sampler, 'github', REJECTION_SAMPLES + 10, T))).toBe(REJECTION_SAMPLES);
  for (let i = 0; i < 5000; i++) sampler.take(`custom/scan${i}`, T + 1);
  // Still the same window: sampled out, counted.
  expect(takes(sampler, 'github', 5, T + 2)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  expect(sampler.take('github', T + MINUTE)).toBe(1 + 15);
  expect(sampler.take('github', T + MINUTE)).toBe(1);
});

test('keys made up beyond SAMPLED_KEYS in one minute share one window: the writes stay bounded', () => {
  const sampler = new RejectionSampler();
  let writes = 0;
  for (let i = 0; i < 5 * SAMPLED_KEYS; i++) writes += written([sampler.take(`custom/scan${i}`, T)]);
  expect(writes).toBe(SAMPLED_KEYS + REJECTION_SAMPLES);
  // A key that has its own window keeps it.
  expect(sampler.take('custom/scan0', T)).toBe(1);
});

test('only expired windows are evicted: new keys get windows of their own the next minute, and a count still to carry is kept', () => {
  const sampler = new RejectionSampler();
  expect(written(takes(sampler, 'gitlab', REJECTION_SAMPLES + 5, T))).toBe(REJECTION_SAMPLES);
  for (let i = 1; i < SAMPLED_KEYS; i++) sampler.take(`custom/scan${i}`, T);
  // The map is full of live windows: a new key is sampled with the other overflowing keys.
  expect(written(takes(sampler, 'custom/late', REJECTION_SAMPLES + 1, T))).toBe(REJECTION_SAMPLES);

  // A minute on, every window has expired: each new key gets its own (all written), gitlab's count is still there.
  const next = Array.from({ length: SAMPLED_KEYS - 1 }, (_, i) => sampler.take(`custom/next${i}`, T + MINUTE));
  expect(next.every((a) => a === 1)).toBe(true);
  expect(sampler.take('gitlab', T + MINUTE)).toBe(1 + 5);
});
