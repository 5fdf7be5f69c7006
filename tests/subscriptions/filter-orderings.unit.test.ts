/**
 * Payload filters' orderings (`<`, `<=`, `>`, `>=`) read a payload string as a number only
 * when it is written in decimal (hunt 7): JavaScript's Number() also reads hex, binary and
 * octal literals, so "0x1F" (an error code) counted as 31.
 */
import { evaluateFilters } from '../../functions/core/filters/evaluate';

const holds = (filter: string, payload: unknown) => evaluateFilters([filter], payload)[0];

describe('orderings over payload strings', () => {
  test.each([
    ['code > 10', { code: '0x1F' }],
    ['mask >= 1', { mask: '0b101' }],
    ['mode > 1', { mode: '0o17' }],
    ['n > 0', { n: '-0x5' }],
    ['n < 100', { n: '1_000' }],
    ['n > 0', { n: 'Infinity' }],
    ['n < 1', { n: '' }],
    ['n < 1', { n: '   ' }],
  ])('%s is false for %j: not a decimal number', (filter, payload) => {
    expect(holds(filter, payload)).toMatchObject({ passed: false });
  });

  test.each([
    ['n > 41', { n: '42' }], ['n >= -1.5', { n: '-1.5' }], ['n > 1000', { n: '2e3' }], ['n < 1', { n: '.5' }],
    ['n > 4', { n: ' 5 ' }], ['n <= 5', { n: '5.' }], ['n > 0', { n: 7 }], ['n < 0', { n: -0.25 }],
  ])('%s holds for %j', (filter, payload) => {
    expect(holds(filter, payload)).toMatchObject({ passed: true });
  });

  test('the verdict quotes the value that was not taken as a number', () => {
    expect(holds('code > 10', { code: '0x1F' })).toEqual({ filter: 'code > 10', passed: false, detail: 'code is "0x1F"' });
  });
});
