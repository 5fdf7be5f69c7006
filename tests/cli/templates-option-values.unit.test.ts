/**
 * Hunt 12 D2 (templates): which arguments after an option are its value (joinSignedValues,
 * before yargs reads them) and what a missing one is told (explainUsageError). A value that
 * starts with `-` but cannot be an option (`- item`, `-- {x}`, `-5s`, `-100123`, `-`) is the
 * value; one shaped like an option (`--agent`, `-urgent`) or the end of options `--` is not.
 */
import { joinSignedValues } from '../../cli/webhook/options';
import { explainUsageError } from '../../cli/usage-errors';

const subscribe = (...rest: string[]) => ['webhook', 'subscribe', 'notify', ...rest];

describe('joinSignedValues', () => {
  test.each([
    ['--prompt', '- issue {issue.title}\n- by {issue.user.login}'],
    ['--prompt', '-- {issue.title}'],
    ['--prompt', '-'],
    ['--description', '- for the on-call channel'],
    ['--chat-id', '-1001234567890'],
    ['--channel', '-5'],
    ['--filter', '- x == 1'],
    ['--debounce', '-5s'],
    ['--payload', '-'],
  ])('%s %j is joined to its option', (option, value) => {
    expect(joinSignedValues(subscribe(option, value, '--agent', 'none'))).toEqual(subscribe(`${option}=${value}`, '--agent', 'none'));
  });

  test.each([
    ['--events', '--agent'],
    ['--prompt', '--description'],
    ['--prompt', '-urgent'],
    ['--prompt', '--'],
    ['--json', '-5'],
  ])('%s %s is left to yargs (an option, the end of options, or an option that takes no value)', (option, next) => {
    expect(joinSignedValues(subscribe(option, next, 'x'))).toEqual(subscribe(option, next, 'x'));
  });

  test('nothing after the end of options is joined: those are arguments', () => {
    const args = ['webhook', 'show', '--', '--prompt', '- x'];
    expect(joinSignedValues(args)).toEqual(args);
  });
});

describe('explainUsageError for an option without its value', () => {
  const known = ['events', 'agent', 'prompt', 'description', 'help', 'h'];
  const missing = (option: string, command = 'subscribe') => `--${option} needs a value (none was given, as with a script's unset variable): give one, or leave the option out${command === 'update' ? ' to keep the current setting' : ''}`;

  test.each([
    [subscribe('--events', '--agent', 'none'), 'events'],
    [subscribe('--prompt'), 'prompt'],
    [subscribe('--prompt', '--'), 'prompt'],
    [subscribe('--prompt', '-h'), 'prompt'],
    [subscribe('--prompt', '--agent=none'), 'prompt'],
    [subscribe('--events', '--evnets', 'issues'), 'events'],
  ])('%j: truly missing, the message is exact', (args, option) => {
    expect(explainUsageError(`Not enough arguments following: ${option}`, args, known)).toBe(missing(option));
  });

  test('update keeps its own ending', () => {
    expect(explainUsageError('Not enough arguments following: prompt', ['webhook', 'update', 'notify', '--prompt'], known)).toBe(missing('prompt', 'update'));
  });

  test('a value that reads as options is named, with the joined form that gives it', () => {
    expect(explainUsageError('Not enough arguments following: prompt', subscribe('--prompt', '-urgent: {issue.title}'), known))
      .toBe("--prompt needs a value: '-urgent: {issue.title}' reads as options; give a value that starts with '-' joined to its option: --prompt='-urgent: {issue.title}'");
  });

  test('so is a value that starts with "--" but holds a space, as no option does', () => {
    expect(explainUsageError('Not enough arguments following: prompt', subscribe('--prompt', '--urgent {issue.title}'), known))
      .toBe("--prompt needs a value: '--urgent {issue.title}' reads as options; give a value that starts with '-' joined to its option: --prompt='--urgent {issue.title}'");
  });

  test('a long or multi-line value is shown cut, on one line', () => {
    const value = `-urgent ${'x'.repeat(80)}\nsecond line`;
    const message = explainUsageError('Not enough arguments following: prompt', subscribe('--prompt', value), known);
    expect(message).toBe(`--prompt needs a value: '-urgent ${'x'.repeat(32)}…' reads as options; give a value that starts with '-' joined to its option: --prompt='-urgent ${'x'.repeat(32)}…'`);
  });
});
