/**
 * Hunt 12 D1 (templates): `webhook test --dry-run` of an `--agent none` subscription shows
 * what the worker delivers, by the worker's own rules (worker/direct.ts): the rendered
 * template is the reply, as is; no model is called; `[SILENT]` does not apply. Before, the
 * dry run called the configured provider (tokens spent on a subscription that never calls a
 * model), showed the model's reply, said a `[SILENT] …` template would post nothing (the
 * worker delivers it) and failed when the provider could not be reached.
 * Built CLI, local store, a local OpenAI-compatible server that must not be called.
 */
import { rmSync } from 'node:fs';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let dir: string;
const dirs: string[] = [];
const configFor = (baseUrl: string, prefix: string): string => {
  const made = tempConfigDir(['agent:', '  provider: openai', '  model: m', `  base_url: ${baseUrl}/v1`, ''].join('\n'), prefix);
  dirs.push(made);
  return made;
};

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, { choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'A MODEL WROTE THIS' } }], usage: { prompt_tokens: 50, completion_tokens: 10 } }));
  dir = configFor(llm.url, 'hookagent-tpl-direct-');
  const created = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'notify', '--events', 'issues', '--agent', 'none', '--deliver', 'log', '--prompt', '[SILENT] new issue #{issue.number}: {issue.title}']);
  expect(created.code).toBe(0);
}, 90_000);
afterAll(async () => {
  await llm?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args]);
const payload = JSON.stringify({ action: 'opened', issue: { number: 3, title: 'Disk full' } });

test('--json: no model call; the rendered template is the reply, and it would be posted ([SILENT] does not apply)', async () => {
  const result = await hk('webhook', 'test', 'notify', '--dry-run', '--json', '--payload', payload);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  const out = JSON.parse(result.stdout) as Record<string, unknown>;
  expect(llm.requests).toHaveLength(0);
  expect(out).toMatchObject({
    prompt: '[SILENT] new issue #3: Disk full', reply: '[SILENT] new issue #3: Disk full', would_post: true,
    provider: null, findings: [], error: null, usage: null, transcript: null, delivered: false,
  });
});

test('text: says the template is delivered as is, shows it unfenced, and shows it as the reply each target gets', async () => {
  const result = await hk('webhook', 'test', 'notify', '--dry-run', '--payload', payload);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(llm.requests).toHaveLength(0);
  expect(result.stdout).toContain('agent none: the rendered template is delivered as is');
  expect(result.stdout).not.toContain('with provider');
  expect(result.stdout).toContain('Prompt:\n[SILENT] new issue #3: Disk full\n');
  expect(result.stdout).not.toContain('untrusted-data');
  expect(result.stdout).not.toContain('nothing would be posted');
  expect(result.stdout).toContain('Reply (would be posted to log):\n[SILENT] new issue #3: Disk full');
  expect(result.stdout).not.toContain('Usage:');
});

test('a provider that cannot be reached does not matter: no model is called', async () => {
  const gone = await startLocalServer(() => undefined);
  const url = gone.url;
  await gone.close();
  const unreachable = configFor(url, 'hookagent-tpl-direct-gone-');
  const cli = (...args: string[]) => runCli(['--config-dir', unreachable, ...args]);
  expect((await cli('webhook', 'subscribe', 'notify', '--events', 'issues', '--agent', 'none', '--prompt', 'new issue {issue.title}')).code).toBe(0);
  const result = await cli('webhook', 'test', 'notify', '--dry-run', '--payload', payload);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toContain('Reply (would be posted to log):\nnew issue Disk full');
  expect(result.stdout).not.toContain('Failed:');
});

test('with the default echo provider: a template starting with [SILENT] would still be posted', async () => {
  const echoDir = tempConfigDir('', 'hookagent-tpl-direct-echo-');
  dirs.push(echoDir);
  const cli = (...args: string[]) => runCli(['--config-dir', echoDir, ...args]);
  expect((await cli('webhook', 'subscribe', 'notify', '--events', 'issues', '--agent', 'none', '--prompt', '[SILENT] {issue.title}')).code).toBe(0);
  const result = await cli('webhook', 'test', 'notify', '--dry-run', '--payload', payload);
  expect(result.code).toBe(0);
  expect(result.stdout).not.toContain('nothing would be posted');
  expect(result.stdout).toContain('Reply (would be posted to log):\n[SILENT] Disk full');
});

test('an agent subscription still runs the model (the control)', async () => {
  expect((await hk('webhook', 'subscribe', 'triage', '--events', 'issues', '--prompt', 'Triage {issue.title}')).code).toBe(0);
  const before = llm.requests.length;
  const result = await hk('webhook', 'test', 'triage', '--dry-run', '--json', '--payload', payload);
  expect(result.code).toBe(0);
  expect(llm.requests.length).toBe(before + 1);
  expect(JSON.parse(result.stdout)).toMatchObject({ reply: 'A MODEL WROTE THIS', provider: 'openai', would_post: true });
});
