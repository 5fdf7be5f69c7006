/**
 * Hunt 9 D2 (the built CLI, the local store): an option of `subscribe`/`update` typed
 * without its value (`--events $EVENTS` with EVENTS unset in a script) is a usage error,
 * exit 2 (DESIGN §2.5), and changes nothing. Before, `update pr-review --events` exited 0
 * and stored no events (the subscription silently left /webhooks/github), and a bare
 * `--agent` turned direct delivery back into agent runs. The documented clear forms
 * (`--filter ""`, `--model ""`, `--agent default`, `--debounce 0`, `--max-runs-per-hour 0`)
 * still clear; `--events ""` is refused, naming how to route by the custom endpoint only.
 */
import { buildCli, hkIn, tempConfigDir } from '../support/cli';

beforeAll(() => buildCli(), 60_000);

const hk = hkIn;
const show = async (dir: string, name: string): Promise<Record<string, unknown>> => {
  const result = await hk(dir, 'webhook', 'show', name, '--json');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
};

describe('an option without its value', () => {
  const dir = tempConfigDir('', 'hookagent-valueless-');

  beforeAll(async () => {
    const created = await hk(dir, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request', '--agent', 'none', '--prompt', 'PR {pull_request.title}',
      '--filter', 'action == opened', '--debounce', '2m', '--max-runs-per-hour', '20', '--description', 'reviews');
    expect(created.code).toBe(0);
  }, 60_000);

  test.each([
    'events', 'agent', 'prompt', 'max-steps', 'timeout', 'debounce', 'model', 'filter', 'skills', 'deliver', 'description',
    'channel', 'chat-id', 'max-tokens', 'daily-tokens', 'max-runs-per-hour', 'comment-mode',
  ])('update <name> --%s (no value) is a usage error and changes nothing', async (option) => {
    const before = await show(dir, 'pr-review');
    const result = await hk(dir, 'webhook', 'update', 'pr-review', `--${option}`);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr).toContain(`error: --${option} needs a value`);
    expect(await show(dir, 'pr-review')).toEqual(before);
  });

  test('a bare option followed by another option is refused too (the next option is not its value)', async () => {
    const result = await hk(dir, 'webhook', 'update', 'pr-review', '--events', '--description', 'x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: --events needs a value');
    expect(await show(dir, 'pr-review')).toMatchObject({ events: ['pull_request'], description: 'reviews' });
  });

  test('subscribe <name> --events (no value) is a usage error and creates nothing', async () => {
    const result = await hk(dir, 'webhook', 'subscribe', 'alerts', '--events');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: --events needs a value');
    expect((await hk(dir, 'webhook', 'show', 'alerts')).code).toBe(1);
  });

  test.each([['update', 'pr-review'], ['subscribe', 'alerts']])('%s --events "" is a usage error naming custom:*', async (command, name) => {
    const before = command === 'update' ? await show(dir, name) : undefined;
    const result = await hk(dir, 'webhook', command, name, '--events', '');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--events was given empty; name the events, or --events 'custom:*' for a subscription reached only through its custom endpoint");
    if (before) expect(await show(dir, name)).toEqual(before);
    else expect((await hk(dir, 'webhook', 'show', name)).code).toBe(1);
  });
});

describe('the documented clear forms still clear', () => {
  const dir = tempConfigDir('', 'hookagent-valueless-');

  test('--filter "" --model "" --agent default --debounce 0 --max-runs-per-hour 0 --description ""', async () => {
    const created = await hk(dir, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request', '--agent', 'none', '--prompt', 'PR {pull_request.title}',
      '--filter', 'action == opened', '--model', 'gpt-4o-mini', '--debounce', '2m', '--max-runs-per-hour', '20', '--description', 'reviews');
    expect(created.code).toBe(0);
    expect(await show(dir, 'pr-review')).toMatchObject({ filters: ['action == opened'], model: 'gpt-4o-mini', agent: 'none', debounce: '120s', max_runs_per_hour: 20, description: 'reviews' });
    const cleared = await hk(dir, 'webhook', 'update', 'pr-review', '--filter', '', '--model', '', '--agent', 'default', '--debounce', '0', '--max-runs-per-hour', '0', '--description', '');
    expect({ code: cleared.code, stderr: cleared.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await show(dir, 'pr-review');
    expect(after).toMatchObject({ events: ['pull_request'], filters: [], agent: null, debounce: null, description: null });
    expect(after).not.toHaveProperty('model');
    expect(after).not.toHaveProperty('max_runs_per_hour');
  });
});
