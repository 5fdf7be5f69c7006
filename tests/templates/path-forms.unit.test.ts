/**
 * Hunt 12 D4 (templates): a placeholder path that can never resolve (`{alerts[0].x}`,
 * `{$.x}`, `{a..b}`) is refused at subscribe/update with the path to write, by the rule the
 * payload filters use (templates/path-form.ts). Before, `subscribe` listed them under
 * "Placeholders:" and every event delivered the literal `{alerts[0].labels.alertname}`. A
 * stored template written so still renders as before; its run-time warning names the path.
 */
import { parseFilter } from '../../functions/core/filters/parse';
import { filterErrorOf } from '../support/filter-error';
import { validatePrompt } from '../../functions/core/subscriptions/validate';
import { checkTemplate, renderPrompt } from '../../functions/core/templates/template';

const refusal = (template: string): string => {
  const checked = checkTemplate(template);
  if (checked.ok) throw new Error(`${template} was accepted`);
  return checked.error.message;
};

describe('checkTemplate refuses paths that never resolve, naming the path to write', () => {
  test.each([
    ['Alert {alerts[0].labels.alertname}', "'{alerts[0].labels.alertname}' at position 7 never resolves; index arrays with a dot: write {alerts.0.labels.alertname}"],
    ['{alerts[0][1]}', "'{alerts[0][1]}' at position 1 never resolves; index arrays with a dot: write {alerts.0.1}"],
    ["{labels['severity']}", "'{labels['severity']}' at position 1 never resolves; index arrays with a dot: write {labels.severity}"],
    ['at {$.alerts.0.labels.instance}', "'{$.alerts.0.labels.instance}' at position 4 never resolves; paths are written without '$': write {alerts.0.labels.instance}"],
    ['{$.alerts[0].labels.instance}', "'{$.alerts[0].labels.instance}' at position 1 never resolves; paths are written without '$': write {alerts.0.labels.instance}"],
    ['{$}', "'{$}' at position 1 never resolves; paths are written without '$': the whole payload is {__raw__}"],
    ['{alerts[*].labels.alertname}', "'{alerts[*].labels.alertname}' at position 1 never resolves; [*] stands for every element (filters' any(…)), a placeholder inserts one value: write {alerts.0.labels.alertname} for the first"],
    ['{a..b}', "'{a..b}' at position 1 never resolves; it has an empty segment: write {dotted.path}"],
    ['{a.}', "'{a.}' at position 1 never resolves; it has an empty segment: write {dotted.path}"],
    ['{ .a }', "'{ .a }' at position 1 never resolves; it has an empty segment: write {dotted.path}"],
  ])('%p', (template, message) => {
    expect(refusal(template)).toBe(message);
  });

  test('a syntax error is named first, as before', () => {
    expect(refusal('{$.x} {a')).toContain("unclosed '{' at position 7");
  });

  test.each(['{alerts.0.labels.alertname}', '{$schema}', '{a$.b}', '{__raw__}', '{{$.x}} {{a[0]}}', '{ pull_request.title }', '{odd-key}'])('%p is accepted', (template) => {
    expect(checkTemplate(template).ok).toBe(true);
  });

  test('validatePrompt (subscribe, update) says it as an invalid prompt template', () => {
    const result = validatePrompt('Alert {alerts[0].labels.alertname}');
    expect(result).toEqual({ ok: false, error: expect.objectContaining({ code: 'template_invalid', message: expect.stringContaining('Invalid prompt template: ') }) });
    expect(!result.ok && result.error.message).toContain('write {alerts.0.labels.alertname}');
  });
});

test('a stored prompt this command does not change is checked for syntax only (validatePrompt(prompt, false))', () => {
  expect(validatePrompt('Alert {alerts[0].labels.alertname}', false)).toEqual({ ok: true, value: ['alerts[0].labels.alertname'] });
  expect(validatePrompt('Alert {a', false).ok).toBe(false);
});

describe('a stored template written so still renders, and its warning names the path to write', () => {
  const payload = { alerts: [{ labels: { alertname: 'DiskFull' } }] };

  test('left as written, with one warning each', () => {
    const rendered = renderPrompt('Alert {alerts[0].labels.alertname} at {$.alerts.0.labels.alertname} ({alerts.0.labels.alertname})', payload, 'alert.firing');
    expect(rendered.text).toBe('Alert {alerts[0].labels.alertname} at {$.alerts.0.labels.alertname} (DiskFull)');
    expect(rendered.missing).toEqual(['alerts[0].labels.alertname', '$.alerts.0.labels.alertname']);
    expect(rendered.warnings).toEqual([
      'placeholder {alerts[0].labels.alertname} not found in the payload; left as is; index arrays with a dot: write {alerts.0.labels.alertname}',
      "placeholder {$.alerts.0.labels.alertname} not found in the payload; left as is; paths are written without '$': write {alerts.0.labels.alertname}",
    ]);
  });

  test('a key that really has such a name still resolves at run time', () => {
    expect(renderPrompt('{a[0]}', { 'a[0]': 'literal key' }, 'e')).toMatchObject({ text: 'literal key', warnings: [] });
  });
});

describe('the filter parser, which shares the rule', () => {
  const messageOf = filterErrorOf;

  test.each([
    ['$.action == opened', 1, "paths are written as in prompt templates, without '$': write action (array elements: alerts.0.labels.alertname)"],
    ['$.alerts[0].labels.severity == critical', 1, "without '$': write alerts.0.labels.severity"],
    ['alerts[0].labels.severity == critical', 7, 'index arrays with a dot, as in prompt templates: write alerts.0.labels.severity'],
    ['a..b == 1', 1, "'a..b' has an empty segment; write dotted.path"],
  ])('%p → column %p: %p', (text, column, message) => {
    expect(messageOf(text)).toEqual({ column, message: expect.stringContaining(message) });
  });

  test('any(path[*]…) still parses', () => {
    expect(parseFilter('any(labels[*].name == bug)')).toMatchObject({ kind: 'any', array: 'labels' });
  });

  test('a key named $schema is a path, in filters as in templates', () => {
    expect(parseFilter('$schema == v1')).toMatchObject({ condition: { path: '$schema' } });
  });
});
