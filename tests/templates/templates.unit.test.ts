/** Prompt templates (DESIGN §2.4): examples of every rule, then properties (fast-check). */
import fc from 'fast-check';
import { checkTemplate, RAW_CAP, renderPrompt, TRUNCATED, VALUE_CAP } from '../../functions/core/templates/template';

const payload = {
  pull_request: { title: 'Fix {bug}', number: 7, draft: false, labels: [{ name: 'a' }, { name: 'b' }], merged_at: null },
  alerts: [{ labels: { alertname: 'DiskRunningFull' } }],
  'odd-key': 'x',
};

describe('rules', () => {
  test.each([
    ['{pull_request.title}', 'Fix {bug}'],
    ['#{pull_request.number} draft={pull_request.draft} merged={pull_request.merged_at}', '#7 draft=false merged=null'],
    ['{alerts.0.labels.alertname}', 'DiskRunningFull'],
    ['{pull_request.labels}', '[{"name":"a"},{"name":"b"}]'],
    ['{pull_request.labels.1.name}', 'b'],
    ['{odd-key}', 'x'],
    ['{{literal}} and {{ {pull_request.number} }}', '{literal} and { 7 }'],
    ['{missing.path} stays', '{missing.path} stays'],
    ['{alerts.5.labels}', '{alerts.5.labels}'],
    ['{pull_request.title.length}', '{pull_request.title.length}'],
  ])('%p → %p', (template, expected) => {
    expect(renderPrompt(template, payload, 'pull_request').text).toBe(expected);
  });

  test('absent paths are recorded as warnings, once each', () => {
    const rendered = renderPrompt('{a.b} {a.b} {c}', payload, 'e');
    expect(rendered.missing).toEqual(['a.b', 'c']);
    expect(rendered.warnings).toHaveLength(2);
  });

  test('{__raw__} is the indented payload, cut at 4,000 characters', () => {
    expect(renderPrompt('{__raw__}', { a: 1 }, 'e').text).toBe('{\n  "a": 1\n}');
    const big = renderPrompt('{__raw__}', { pad: 'x'.repeat(10_000) }, 'e').text;
    expect(big).toHaveLength(RAW_CAP + TRUNCATED.length);
  });

  test('objects are cut at 2,000 characters; strings are not', () => {
    expect(renderPrompt('{o}', { o: { pad: 'y'.repeat(5_000) } }, 'e').text).toHaveLength(VALUE_CAP + TRUNCATED.length);
    expect(renderPrompt('{s}', { s: 'z'.repeat(5_000) }, 'e').text).toHaveLength(5_000);
  });

  test('without a prompt: the event type and the indented payload', () => {
    expect(renderPrompt(undefined, { a: 1 }, 'push').text).toBe('Event: push\n\nPayload:\n{\n  "a": 1\n}');
  });

  test('checkTemplate finds placeholders and refuses unbalanced braces', () => {
    expect(checkTemplate('Hi {a.b} {{x}} {c} {a.b}')).toEqual({ ok: true, placeholders: ['a.b', 'c'] });
    for (const bad of ['{a', 'a}', '{a {b}}', '{}', '{ a b }']) expect(checkTemplate(bad).ok).toBe(false);
  });
});

describe('properties', () => {
  const json = fc.jsonValue({ maxDepth: 4 });

  test('rendering never throws, whatever the template and payload', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), json, (template, value) => {
      renderPrompt(template, value, 'e');
    }), { numRuns: 2000 });
  });

  test('braces inside payload values are never expanded', () => {
    fc.assert(fc.property(fc.string({ maxLength: 100 }), (text) => {
      const value = `{secret}${text}{{x}}`;
      const rendered = renderPrompt('<{v}>', { v: value, secret: 'LEAK' }, 'e').text;
      expect(rendered).toBe(`<${value}>`);
    }), { numRuns: 1000 });
  });

  test('output length is bounded by the template, the string values and the caps', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom('{a}', '{b}', '{__raw__}', '{c.0}', 'text ', '{{', '}}', '{missing}'), { minLength: 1, maxLength: 30 }), json, fc.string({ maxLength: 300 }),
      (parts, b, a) => {
        const template = parts.join('');
        const value = { a, b, c: [b] };
        const out = renderPrompt(template, value, 'e').text;
        const placeholders = parts.filter((p) => p.startsWith('{') && p !== '{{').length;
        expect(out.length).toBeLessThanOrEqual(template.length + placeholders * (Math.max(RAW_CAP, a.length) + TRUNCATED.length));
      }), { numRuns: 1000 });
  });
});
