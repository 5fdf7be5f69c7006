/** The payload filter grammar (issue 17): parsing, errors with their column, evaluation, bounded regexes; routing rules. */
import { routeMatches, filterMatches } from '../../functions/core/events/filters';
import { evaluateFilters, firstFailingFilter } from '../../functions/core/filters/evaluate';
import { FILTER_LIMITS, FilterSyntaxError, parseFilter } from '../../functions/core/filters/parse';
import { applySettings, validateFilters } from '../../functions/core/subscriptions/settings';
import { validateEvents } from '../../functions/core/subscriptions/validate';
import { RejectionSampler, outcomeOf, withRequestLog } from '../../functions/core/ingest/request-log';
import { reply, errors } from '../../functions/core/ingest/responses';
import { silentLogger } from '../../functions/core/log';
import { MemoryRequestLog } from '../support/memory-request-log';
import { ManualClock } from '../support/recording-queue';

const PAYLOAD = {
  action: 'opened', number: 42, count: '17',
  pull_request: { draft: false, title: 'Fix: the parser', labels: [{ name: 'bug' }, { name: 'needs-review' }], additions: 120, body: null },
  commits: [{ message: 'a' }, { message: 'wip: b' }],
  tags: ['x', 'y'],
};
const holds = (filter: string, payload: unknown = PAYLOAD) => evaluateFilters([filter], payload)[0]?.passed;

describe('evaluation', () => {
  test.each([
    ['action == opened', true], ['action == "opened"', true], ["action == 'closed'", false], ['action != closed', true],
    ['number == 42', true], ['number == "42"', true], ['pull_request.draft == false', true], ['pull_request.draft != true', true],
    ['number > 41', true], ['number >= 42', true], ['number < 42', false], ['number <= 42', true], ['count > 16', true],
    ['pull_request.title > 3', false], ['missing > 1', false], ['missing != 1', true], ['missing == 1', false],
    ['action in [opened, reopened]', true], ['action in ["closed"]', false], ['number in [41, 42]', true],
    ['pull_request.title =~ /^fix/i', true], ['pull_request.title =~ /^fix/', false], ['pull_request.title =~ /parser$/', true],
    ['number =~ /^4\\d$/', true], ['pull_request =~ /x/', false],
    ['exists pull_request.labels', true], ['exists missing', false], ['!exists missing', true], ['!exists pull_request.body', true], ['exists pull_request.body', false],
    ['any(pull_request.labels[*].name == needs-review)', true], ['any(pull_request.labels[*].name == nope)', false],
    ['any(pull_request.labels[*].name in [nope, bug])', true], ['any(commits[*].message =~ /^wip/)', true],
    ['any(tags[*] == y)', true], ['any(tags[*] == z)', false], ['any(missing[*].x == 1)', false], ['any(action[*] == o)', false],
    ['commits.1.message == "wip: b"', true], ['pull_request.labels.0.name == bug', true],
  ])('%s → %p', (filter, expected) => {
    expect(holds(filter)).toBe(expected);
  });

  test('text compares the same whether written composed (NFC) or decomposed (NFD), as Unicode says it is equal', () => {
    const nfd = 'Cafe\u0301 ready';
    const nfc = 'Caf\u00e9 ready';
    expect(nfd).not.toBe(nfc);
    for (const [payloadText, filterText] of [[nfd, nfc], [nfc, nfd]] as const) {
      const payload = { title: payloadText, tags: [payloadText] };
      expect(holds(`title == "${filterText}"`, payload)).toBe(true);
      expect(holds(`title != "${filterText}"`, payload)).toBe(false);
      expect(holds(`title in ["x", "${filterText}"]`, payload)).toBe(true);
      expect(holds(`any(tags[*] == "${filterText}")`, payload)).toBe(true);
      expect(holds(`title =~ /^${filterText.split(' ')[0]} r/`, payload)).toBe(true);
    }
    // Different text stays different.
    expect(holds('title == "Cafe ready"', { title: nfd })).toBe(false);
  });

  test('a payload key named like a keyword can be filtered (exists, in)', () => {
    const payload = { exists: true, in: 'x', nested: { exists: 'yes' } };
    expect(holds('exists == true', payload)).toBe(true);
    expect(holds('exists != true', payload)).toBe(false);
    expect(holds('exists in [true]', payload)).toBe(true);
    expect(holds('exists =~ /true/', payload)).toBe(true);
    expect(holds('nested.exists == yes', payload)).toBe(true);
    // The keyword still works, on those keys too.
    expect(holds('exists exists', payload)).toBe(true);
    expect(holds('!exists exists', payload)).toBe(false);
    expect(holds('exists in', payload)).toBe(true);
    expect(holds('exists in_progress', payload)).toBe(false);
    expect(parseFilter('exists == true')).toMatchObject({ kind: 'simple', condition: { kind: 'compare', path: 'exists', op: '==' } });
  });

  test('firstFailingFilter names the failing filter and what the payload held', () => {
    expect(firstFailingFilter(['action == opened', 'number > 100'], PAYLOAD)).toEqual({ filter: 'number > 100', passed: false, detail: 'number is 42' });
    expect(firstFailingFilter(['action == opened'], PAYLOAD)).toBeUndefined();
    expect(firstFailingFilter(undefined, PAYLOAD)).toBeUndefined();
  });

  test('a stored filter that no longer parses fails closed, with the reason', () => {
    const [result] = evaluateFilters(['action =='], PAYLOAD);
    expect(result).toMatchObject({ passed: false, detail: expect.stringContaining('expected a value') });
  });

  test('regexes run in linear time: catastrophic patterns over 100 KB answer at once', () => {
    const payload = { s: `${'a'.repeat(100_000)}!`, t: 'x'.repeat(100_000) };
    const started = performance.now();
    for (const f of ['s =~ /^(a+)+$/', 's =~ /^(a|a)*$/', 's =~ /(a*)*b/', 't =~ /(x+x+)+y/', 's =~ /^(a|aa)+$/']) expect(holds(f, payload)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('grammar errors point at the column', () => {
  test.each([
    ['', 1, 'empty filter'], ['action', 7, 'expected an operator'], ['action ~= x', 8, 'expected an operator'],
    ['action ==', 10, 'expected a value'], ['number < "x"', 10, 'compares numbers'], ['action in opened', 11, "expected '['"],
    ['action in []', 11, 'the list is empty'], ['action in [a b]', 14, "expected ',' or ']'"], ['title =~ abc', 10, 'regular expression written /pattern/flags'],
    ['title =~ /a', 10, 'unclosed regular expression'], ['title =~ //', 10, 'empty'], ['title =~ /(?=x)/', 10, 'invalid regular expression'],
    ['any(labels[*].name == bug', 26, "expected ')'"], ['a..b == 1', 1, 'empty segment'], ['!exists', 8, 'expected a payload path'],
  ])('%p → column %p', (text, column, message) => {
    let error: unknown;
    try {
      parseFilter(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FilterSyntaxError);
    expect((error as FilterSyntaxError).column).toBe(column);
    expect((error as FilterSyntaxError).message).toContain(message);
  });

  test('limits: expression and regex length, list items, filter count', () => {
    expect(() => parseFilter(`a == ${'x'.repeat(FILTER_LIMITS.expressionLength)}`)).toThrow('longer than');
    expect(() => parseFilter(`a =~ /${'x'.repeat(FILTER_LIMITS.regexLength + 1)}/`)).toThrow('longer than');
    expect(() => parseFilter(`a in [${Array.from({ length: 101 }, (_, i) => i).join(',')}]`)).toThrow('more than 100 values');
    const tooMany = validateFilters(Array.from({ length: 21 }, () => 'a == 1'));
    expect(tooMany.ok).toBe(false);
  });

  test('validateFilters shows a caret under the column', () => {
    const result = validateFilters(['action == opened', 'number >> 2']);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toBe('Invalid filter "number >> 2" at column 9: expected a value, found \'>\'\n  number >> 2\n          ^');
  });
});

describe('routing (DESIGN §2.4)', () => {
  test.each([
    [[], 'github', 'push', undefined, false], [[], 'gitlab', 'push', undefined, false], [[], 'custom', 'alert', undefined, true],
    [['*'], 'github', 'push', undefined, true], [['*'], 'custom', 'x', undefined, true], [['push'], 'github', 'push', undefined, true],
    [['push'], 'gitlab', 'push', undefined, true], [['github:push'], 'gitlab', 'push', undefined, false], [['github:push'], 'github', 'push', undefined, true],
    [['gitlab:merge_request.open'], 'gitlab', 'merge_request', 'open', true], [['gitlab:merge_request.open'], 'gitlab', 'merge_request', 'close', false],
    [['custom:alert'], 'custom', 'alert', undefined, true], [['custom:alert'], 'github', 'alert', undefined, false], [['github:*'], 'github', 'star', 'created', true],
    [['github:*'], 'gitlab', 'push', undefined, false], [['pull_request'], 'github', 'pull_request', 'closed', true],
    // A custom event type with a dot keeps its action: `deploy.finished` + action `ok`.
    [['deploy.finished.ok'], 'custom', 'deploy.finished', 'ok', true], [['custom:deploy.finished.ok'], 'custom', 'deploy.finished', 'ok', true],
    [['deploy.finished.ok'], 'custom', 'deploy.finished', 'failed', false], [['deploy.finished'], 'custom', 'deploy.finished', 'failed', true],
    [['deploy.finished.ok'], 'custom', 'deploy', 'finished', false], [['deploy.finished'], 'custom', 'deploy', 'finished', true],
  ] as const)('%j on %s %s.%s → %p', (events, source, event, action, matched) => {
    expect(routeMatches(events, source, event, action).matched).toBe(matched);
  });

  test('filterMatches without a source ignores qualifiers (as before)', () => {
    expect(filterMatches('github:push', 'push', undefined)).toBe(true);
    expect(filterMatches('foo:bar', 'foo:bar', undefined)).toBe(true);
  });

  test('validateEvents accepts * and source-qualified filters, warns about names a host never sends', () => {
    const result = validateEvents(['*', 'github:push', 'gitlab:merge_request.open', 'custom:alert', 'github:merge_request']);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.warnings).toEqual(["'merge_request' is not an event GitHub sends; 'github:merge_request' may never match"]);
    expect(validateEvents(['github:']).ok).toBe(false);
    expect(validateEvents(['**']).ok).toBe(false);
  });
});

describe('settings', () => {
  test('values are parsed and bounded; empty values clear', () => {
    const set = applySettings({}, { agent: 'none', model: 'm', maxSteps: '5', timeout: '2m', maxRunsPerHour: '10', debounce: '90s', filters: ['a == 1'] });
    expect(set).toEqual({ ok: true, value: { agent: 'none', model: 'm', max_steps: 5, timeout_ms: 120_000, max_runs_per_hour: 10, debounce_seconds: 90, filters: ['a == 1'] } });
    if (!set.ok) return;
    expect(applySettings(set.value, { agent: 'default', model: '', maxSteps: '', timeout: '', maxRunsPerHour: '0', debounce: '0', filters: [''] })).toEqual({ ok: true, value: {} });
    expect(applySettings({}, { debounce: '15m' })).toMatchObject({ ok: true, value: { debounce_seconds: 900 } });
    expect(applySettings({}, { debounce: '16m' }).ok).toBe(false);
    expect(applySettings({}, { timeout: '16m' }).ok).toBe(false);
    expect(applySettings({}, { timeout: '5m', maxTimeoutMs: 270_000 })).toMatchObject({ ok: false, error: { message: expect.stringContaining("270s (the worker's Lambda timeout") } });
    expect(applySettings({}, { timeout: '4m', maxTimeoutMs: 270_000 })).toMatchObject({ ok: true, value: { timeout_ms: 240_000 } });
    expect(applySettings({}, { maxSteps: '2.5' }).ok).toBe(false);
  });
});

describe('request log recording', () => {
  test('outcomeOf maps every answer of the §2.1 table', () => {
    expect(outcomeOf(reply(202, { status: 'accepted' }))).toBe('accepted');
    expect(outcomeOf(reply(202, { status: 'held' }))).toBe('held');
    expect(outcomeOf(reply(200, { status: 'duplicate' }))).toBe('duplicate');
    expect(outcomeOf(reply(200, { status: 'ok', event: 'ping' }))).toBe('ping');
    expect(outcomeOf(reply(200, { status: 'ignored', reason: 'Event not handled' }))).toBe('not_handled');
    expect(outcomeOf(reply(200, { status: 'ignored', reason: 'Filtered out' }))).toBe('filtered');
    expect(outcomeOf(reply(200, { status: 'ignored', reason: 'Event caused by hookagent' }))).toBe('ignored_loop');
    expect(outcomeOf(errors.signatureInvalid())).toBe('rejected_signature');
    expect(outcomeOf(errors.ipNotAllowed())).toBe('ip_not_allowed');
    expect(outcomeOf(errors.payloadTooLarge(1))).toBe('payload_too_large');
    expect(outcomeOf(errors.invalidJson('x'))).toBe('invalid_json');
    expect(outcomeOf(errors.invalidEvent('x'))).toBe('invalid_event');
    expect(outcomeOf(errors.subscriptionNotFound('x'))).toBe('not_found');
    expect(outcomeOf(errors.notFound())).toBe('not_found');
    expect(outcomeOf(errors.methodNotAllowed('POST'))).toBe('method_not_allowed');
    expect(outcomeOf(errors.unavailable())).toBe('unavailable');
    expect(outcomeOf(errors.inProgress())).toBe('in_progress');
  });

  test('the sampler writes at most N per endpoint per window and counts the rest into the next sample', () => {
    const sampler = new RejectionSampler(2);
    expect([sampler.take('github', 0), sampler.take('github', 1), sampler.take('github', 2), sampler.take('gitlab', 3), sampler.take('github', 4)]).toEqual([1, 1, undefined, 1, undefined]);
    expect(sampler.take('github', 60_000)).toBe(3);
  });

  test('a failing request log never changes the answer; /health is not recorded', async () => {
    const log = new MemoryRequestLog();
    const clock = new ManualClock();
    const wrapped = withRequestLog(async (_request: object, trace) => {
      trace.endpoint = 'github';
      return reply(202, { status: 'accepted' });
    }, log, clock, silentLogger);
    const request = { method: 'POST', headers: { 'x-secret-header': 'value-never-stored' }, sourceIp: '10.0.0.1' };
    log.failing = true;
    expect((await wrapped(request)).status).toBe(202);
    log.failing = false;
    await wrapped(request);
    expect(log.entries).toHaveLength(1);
    expect(JSON.stringify(log.entries)).not.toContain('value-never-stored');
    expect(log.entries[0]).toMatchObject({ header_names: ['x-secret-header'], source_ip: '10.0.0.1', outcome: 'accepted' });
    const health = withRequestLog(async () => reply(200, { status: 'ok' }), log, clock, silentLogger);
    await health(request);
    expect(log.entries).toHaveLength(1);
  });
});
