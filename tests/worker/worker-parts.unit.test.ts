/** The worker's small parts: the retry schedule, Logger.child, cutting stored text to a byte budget. */
import { childLogger, jsonLogger, textLogger } from '../../functions/core/log';
import { cutToBytes } from '../../functions/core/worker/record';
import { RETRY_CAP_SECONDS, retryDelaySeconds } from '../../functions/core/worker/retry-schedule';
import { jsonDepth } from '../../functions/core/ingest/raw-payload';

test('retry schedule: 30 s × 2^(receive−1) ±20 %, capped at 15 min; a longer Retry-After wins', () => {
  expect([1, 2, 3, 4, 5].map((n) => retryDelaySeconds(n, undefined, () => 0.5))).toEqual([30, 60, 120, 240, 480]);
  expect(retryDelaySeconds(6, undefined, () => 0.5)).toBe(RETRY_CAP_SECONDS);
  expect(retryDelaySeconds(50, undefined, () => 1)).toBe(RETRY_CAP_SECONDS);
  expect(retryDelaySeconds(1, undefined, () => 0)).toBe(24);
  expect(retryDelaySeconds(1, undefined, () => 1)).toBe(36);
  expect(retryDelaySeconds(1, 120_500)).toBe(121);
  expect(retryDelaySeconds(3, 2_000, () => 0.5)).toBe(120);
  expect(retryDelaySeconds(1, 48 * 3600 * 1000)).toBe(12 * 3600);
});

test('Logger.child adds fields to every line; any logger gets one through childLogger', () => {
  const lines: string[] = [];
  const child = jsonLogger((l) => lines.push(l)).child!({ event_id: 'evt_1', subscription: 's' });
  child.info('hello', { target: 'log' });
  childLogger(child, { attempt: 2 }).warn('again');
  expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
    expect.objectContaining({ message: 'hello', event_id: 'evt_1', subscription: 's', target: 'log' }),
    expect.objectContaining({ level: 'warn', message: 'again', event_id: 'evt_1', subscription: 's', attempt: 2 }),
  ]);
  const text: string[] = [];
  childLogger(textLogger((l) => text.push(l)), { event_id: 'evt_2' }).error('failed', { code: 'x' });
  expect(text[0]).toMatch(/ERROR failed {2}event_id=evt_2 code=x/);
});

test('stored text is cut to a UTF-8 byte budget, never inside a character, with a note', () => {
  expect(cutToBytes('short', 100)).toBe('short');
  const cut = cutToBytes('€'.repeat(1000), 200);
  expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(200);
  expect(cut).toMatch(/^€+\n…\[cut: \d+ more bytes not stored\]$/);
  expect(cut).not.toContain('\uFFFD');
});

test('JSON depth is measured on the raw text, strings skipped', () => {
  expect(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
  expect(jsonDepth(Buffer.from('{"s":"\\"{"}'))).toBe(1);
  expect(jsonDepth(`${'['.repeat(500)}${']'.repeat(500)}`)).toBe(500);
});
