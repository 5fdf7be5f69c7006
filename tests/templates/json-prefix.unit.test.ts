/** jsonPrefix is the start of JSON.stringify's text, exactly, for any value JSON.parse can produce. */
import fc from 'fast-check';
import githubExamples from '@octokit/webhooks-examples';
import { cutText } from '../../functions/core/cut-text';
import { jsonPrefix } from '../../functions/core/templates/json-prefix';

test('equals JSON.stringify (compact and indented) cut at any length, for arbitrary JSON values', () => {
  fc.assert(fc.property(fc.jsonValue(), fc.nat(400), fc.constantFrom(0, 2, 4), (value, limit, indent) => {
    const full = JSON.stringify(value, null, indent);
    expect(jsonPrefix(value, limit, indent)).toEqual({ text: cutText(full, limit), cut: full.length > limit });
  }), { numRuns: 2000 });
});

test('equals JSON.stringify on every GitHub example payload at the prompt\'s cap', () => {
  for (const example of githubExamples.flatMap((group) => group.examples)) {
    const full = JSON.stringify(example, null, 2);
    expect(jsonPrefix(example, 4000, 2)).toEqual({ text: full.slice(0, 4000), cut: full.length > 4000 });
    expect(jsonPrefix(example, Number.MAX_SAFE_INTEGER, 2).text).toBe(full);
  }
});

test('follows JSON.stringify for what JSON.parse never produces: undefined, functions, toJSON, -0, NaN', () => {
  const odd = { a: undefined, f: () => 1, list: [undefined, () => 1, NaN, -0, Infinity], when: new Date(0), nested: { toJSON: () => 'x' } };
  expect(jsonPrefix(odd, 10_000, 2).text).toBe(JSON.stringify(odd, null, 2));
  expect(jsonPrefix({ a: [undefined, -0, NaN] }, 10_000).text).toBe(JSON.stringify({ a: [undefined, -0, NaN] }));
  expect(jsonPrefix(undefined, 10)).toEqual({ text: 'undefined', cut: false });
});

test('stops reading once it has enough: a huge payload is walked only as far as its first part', () => {
  const read = new Set<string>();
  const items = new Proxy(Array.from({ length: 200_000 }, (_, i) => ({ i, name: `item ${i}` })), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) read.add(key);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const { text, cut } = jsonPrefix({ items }, 4000, 2);
  expect(cut).toBe(true);
  expect(text.startsWith('{\n  "items": [\n    {\n      "i": 0,')).toBe(true);
  expect(read.size).toBeLessThan(200);
});
