/**
 * Hunt 12 D2 (templates): a value that starts with `-` (a Markdown bullet list, the usual
 * shape of an `--agent none` chat message; a Telegram group's negative chat id) is taken as
 * the value of the option that requires one. Before, `--prompt "- issue …"` was refused
 * with "none was given", though a value was. A value that is truly missing (`--events
 * --agent none`, a bare option at the end) stays the documented usage error, word for word;
 * a value that reads as options (`-urgent`) is told how to give it.
 */
import { rmSync } from 'node:fs';
import { buildCli, hkIn, runCli, tempConfigDir } from '../support/cli';

let dir: string;
beforeAll(() => {
  buildCli();
  dir = tempConfigDir('', 'hookagent-tpl-dash-');
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hk = (...args: string[]) => hkIn(dir, ...args);
const show = async (name: string): Promise<Record<string, unknown>> => {
  const shown = await hk('webhook', 'show', name, '--json');
  expect(shown.code).toBe(0);
  return JSON.parse(shown.stdout) as Record<string, unknown>;
};
let count = 0;
const fresh = () => `dash${(count += 1)}`;

test.each([
  ['--prompt', '- issue {issue.title}\n- by {issue.user.login}', 'prompt'],
  ['--prompt', '-- {issue.title}', 'prompt'],
  ['--prompt', '-', 'prompt'],
  ['--prompt', '-5 degrees on {issue.title}', 'prompt'],
  ['--description', '- alerts for the on-call channel', 'description'],
  ['--chat-id', '-1001234567890', 'chat_id'],
])('subscribe %s %j stores it as %s', async (option, value, field) => {
  const name = fresh();
  const created = await hk('webhook', 'subscribe', name, '--events', 'issues', '--agent', 'none', option, value);
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
  expect((await show(name))[field]).toBe(value);
});

test('update --prompt "- …" and --description "- …" change them', async () => {
  const name = fresh();
  expect((await hk('webhook', 'subscribe', name, '--events', 'issues', '--agent', 'none', '--prompt', 'x {issue.title}')).code).toBe(0);
  const updated = await hk('webhook', 'update', name, '--prompt', '- {issue.title}\n- {issue.state}', '--description', '- bullets');
  expect({ code: updated.code, stderr: updated.stderr }).toEqual({ code: 0, stderr: '' });
  expect(await show(name)).toMatchObject({ prompt: '- {issue.title}\n- {issue.state}', description: '- bullets' });
});

test('webhook test --payload - still reads standard input (a lone "-" is the stdin form, as before)', async () => {
  const name = fresh();
  expect((await hk('webhook', 'subscribe', name, '--events', 'issues', '--agent', 'none', '--prompt', '- {issue.title}')).code).toBe(0);
  const result = await runCli(['--config-dir', dir, 'webhook', 'test', name, '--payload', '-'], {}, JSON.stringify({ issue: { title: 'Disk full' } }));
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toContain('- Disk full');
});

test('a value truly missing stays the documented usage error, word for word', async () => {
  const name = fresh();
  const followed = await hk('webhook', 'subscribe', name, '--events', '--agent', 'none');
  expect({ code: followed.code, stdout: followed.stdout }).toEqual({ code: 2, stdout: '' });
  expect(followed.stderr).toContain("error: --events needs a value (none was given, as with a script's unset variable): give one, or leave the option out\n");
  const last = await hk('webhook', 'subscribe', name, '--events', 'issues', '--prompt');
  expect(last.code).toBe(2);
  expect(last.stderr).toContain("error: --prompt needs a value (none was given, as with a script's unset variable): give one, or leave the option out\n");
  const ended = await hk('webhook', 'subscribe', name, '--events', 'issues', '--prompt', '--');
  expect(ended.code).toBe(2);
  expect(ended.stderr).toContain("error: --prompt needs a value (none was given, as with a script's unset variable): give one, or leave the option out\n");
  expect((await hk('webhook', 'show', name)).code).toBe(1);
});

test('a value that reads as options is named, with the form that gives it', async () => {
  const name = fresh();
  const result = await hk('webhook', 'subscribe', name, '--events', 'issues', '--prompt', '-urgent: {issue.title}');
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
  expect(result.stderr).toContain("error: --prompt needs a value: '-urgent: {issue.title}' reads as options; give a value that starts with '-' joined to its option: --prompt='-urgent: {issue.title}'");
  expect((await hk('webhook', 'show', name)).code).toBe(1);
  const given = await hk('webhook', 'subscribe', name, '--events', 'issues', '--prompt=-urgent: {issue.title}');
  expect(given.code).toBe(0);
  expect((await show(name)).prompt).toBe('-urgent: {issue.title}');
});
