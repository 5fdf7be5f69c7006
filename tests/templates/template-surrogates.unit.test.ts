/**
 * A payload string may hold a lone UTF-16 surrogate (`"\ud800"` is valid JSON). It is no
 * character: UTF-8 cannot encode it, JSON.stringify writes it as an escape, and SQS and
 * DynamoDB refuse it, so a prompt (stored with the event) or an `--agent none` reply
 * carrying one could be neither stored nor posted. Placeholders insert it as U+FFFD.
 */
import { formatValue, renderPrompt } from '../../functions/core/templates/template';

const wellFormed = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe('lone surrogates from the payload', () => {
  const payload = JSON.parse('{"pull_request":{"title":"fix \\ud800 and \\udfff, keep \\ud83d\\ude00"},"n":1}') as Record<string, unknown>;

  test('a placeholder inserts a well-formed string: each lone surrogate as U+FFFD, pairs (emoji) kept', () => {
    const rendered = renderPrompt('Title: {pull_request.title}', payload, 'pull_request');
    expect(rendered.text).toBe('Title: fix \ufffd and \ufffd, keep \ud83d\ude00');
    expect(wellFormed(rendered.text)).toBe(true);
    expect(rendered.parts.every((p) => wellFormed(p.text))).toBe(true);
  });

  test('objects and {__raw__} were already well-formed (JSON escapes), and stay as they were', () => {
    const rendered = renderPrompt('{pull_request} {__raw__}', payload, 'pull_request');
    expect(rendered.text).toContain('"title":"fix \\ud800 and \\udfff, keep 😀"');
    expect(wellFormed(rendered.text)).toBe(true);
  });

  test('formatValue alone; braces in values are still never expanded', () => {
    expect(formatValue('\udc00{n}')).toBe('\ufffd{n}');
    expect(renderPrompt('{a}', { a: '{n}\ud800' }, 'e').text).toBe('{n}\ufffd');
  });
});
