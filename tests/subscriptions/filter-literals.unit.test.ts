/**
 * Hunt 3, defects 1 and 7: a number in a filter keeps the text it was written as (payload
 * strings compare with that text, payload numbers by value); the grammar refuses what can
 * never match (`$.path`, `a[0]`, `1e999`) and long filters' errors stay readable; `--debounce`
 * takes whole seconds and any spelling of zero.
 */
import { evaluateFilters } from '../../functions/core/filters/evaluate';
import { filterErrorOf } from '../support/filter-error';
import { applySettings, validateFilters } from '../../functions/core/subscriptions/settings';

const holds = (filter: string, payload: unknown): boolean | undefined => evaluateFilters([filter], payload)[0]?.passed;

describe('a number literal compares with payload strings by its written text, with payload numbers by value', () => {
  test.each([
    // payload strings: the same text only
    ['v == 1.0', { v: '1.0' }, true], ['v == 1.0', { v: '1' }, false],
    ['v == 1.10', { v: '1.10' }, true], ['v == 1.10', { v: '1.1' }, false],
    ['v in [1.0, 2.0]', { v: '1.0' }, true], ['v in [1.0, 2.0]', { v: '2' }, false],
    ['v != 1.0', { v: '1.0' }, false], ['v != 1.0', { v: '1' }, true],
    ['v == 42', { v: '42' }, true], ['v == 42', { v: '042' }, false], ['v == -5', { v: '-5' }, true],
    ['v == 12345678901234567890', { v: '12345678901234567890' }, true],
    // payload numbers: by value, whatever the spelling
    ['v == 1.0', { v: 1 }, true], ['v == 42.0', { v: 42 }, true], ['v == 1.10', { v: 1.1 }, true], ['v == 2', { v: 2.5 }, false],
    ['v in [1.0, 2.0]', { v: 2 }, true],
    // quoted values and words: a payload number's JSON text (README: number == "42" holds for 42)
    ['v == "42"', { v: 42 }, true], ['v == "1.0"', { v: 1 }, false], ['v == true', { v: 'true' }, true],
    // orderings still compare numbers, numeric strings included
    ['v > 1.05', { v: '1.1' }, true], ['v <= 1.0', { v: 1 }, true],
  ])('%s over %j → %p', (filter, payload, expected) => {
    expect(holds(filter, payload)).toBe(expected);
  });
});

describe('the grammar refuses filters that could never match', () => {
  const columnOf = filterErrorOf;

  test.each([
    ['v == 1e999', 6, 'quote it to compare text: "1e999"'],
    ['v in [1, 1e400]', 10, 'too large a number'],
    ['$.action == opened', 1, "without '$': write action"],
    ['alerts[0].labels.x == y', 7, 'write alerts.0.labels.x'],
  ])('%p → column %p: %p', (text, column, message) => {
    expect(columnOf(text)).toEqual({ column, message: expect.stringContaining(message) });
  });

  test('an over-long filter echoes a window around the column, the caret inside it', () => {
    const text = `title == ${'a'.repeat(1_000)}`;
    const result = validateFilters([text]);
    expect(result.ok).toBe(false);
    const lines = result.ok ? [] : result.error.message.split('\n');
    expect(lines[0]).toContain('at column 1001: longer than 1000 characters');
    const [echo = '', caret = ''] = lines.slice(1);
    expect([echo.length, caret.length].every((n) => n <= 90)).toBe(true);
    expect(caret.trimEnd().endsWith('^')).toBe(true);
    expect(caret.indexOf('^')).toBeLessThan(echo.length);
    // A short filter's error still echoes it whole.
    expect(validateFilters(['a >> 1'])).toMatchObject({ ok: false, error: { message: expect.stringContaining('\n  a >> 1\n     ^') } });
  });
});

describe('--debounce', () => {
  test.each(['0', '0s', '0m', '0ms', '0.0h', ' 0s '])('%p turns it off', (value) => {
    expect(applySettings({ debounce_seconds: 60 }, { debounce: value })).toEqual({ ok: true, value: {} });
  });

  test('whole seconds are stored exactly; a fraction of a second is refused, not rounded', () => {
    expect(applySettings({}, { debounce: '90s' })).toEqual({ ok: true, value: { debounce_seconds: 90 } });
    expect(applySettings({}, { debounce: '0.5m' })).toEqual({ ok: true, value: { debounce_seconds: 30 } });
    expect(applySettings({}, { debounce: '1.5s' })).toMatchObject({ ok: false, error: { message: '--debounce takes whole seconds, not "1.5s": write 1s or 2s' } });
    expect(applySettings({}, { debounce: '1500ms' }).ok).toBe(false);
  });

  test('out of range and negative values name the range and that 0 turns it off', () => {
    for (const value of ['-5s', '0.5s', '16m', 'soon']) {
      expect(applySettings({}, { debounce: value })).toMatchObject({ ok: false, error: { message: expect.stringContaining('from 1s to 15m (the longest SQS delay), or 0 to turn it off') } });
    }
  });
});
