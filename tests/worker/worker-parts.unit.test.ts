/** The worker's small parts: the retry schedule, Logger.child, cutting stored text to a byte budget. */
import { childLogger, jsonLogger, textLogger } from '../../functions/core/log';
import { cutToBytes } from '../../functions/core/worker/record';
import { RETRY_CAP_SECONDS, retryDelaySeconds } from '../../functions/core/worker/retry-schedule';
import { inlineSafe, jsonDepth } from '../../functions/core/ingest/raw-payload';

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

describe('inlineSafe: which payloads may travel re-serialised', () => {
  const check = (body: string) => inlineSafe(JSON.parse(body), body) && inlineSafe(JSON.parse(body), Buffer.from(body));
  test('ordinary payloads, exponents inside strings, and numbers that shrink are safe', () => {
    expect(check('{"a":1,"b":[1.5,-0.25],"c":"x"}')).toBe(true);
    expect(check('{"text":"1e20 in a string, \\"escaped\\" 2E9","n":12}')).toBe(true);
    expect(check('{"small":1e2}')).toBe(true); // 100: no longer than the source
  });
  test('numbers that grow when printed again and payloads nested too deep are not', () => {
    expect(check('{"big":1e20}')).toBe(false);
    expect(check('{"big":1.5E300}')).toBe(false); // printed as 1.5e+300
    expect(check(`${'['.repeat(200)}${']'.repeat(200)}`)).toBe(false);
  });
});
