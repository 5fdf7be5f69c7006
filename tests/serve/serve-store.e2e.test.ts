/**
 * `hookagent serve` and its data dir (issue 14 items 7 and 9, on the SQLite store): one
 * serve per data dir, a stale lock recognised whatever the PID, a damaged store answered
 * with hookagent's own message, and SIGTERM with events in flight.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { GH_SECRET: 'store-secret', OPENAI_API_KEY: 'sk-store', SLACK_WEBHOOK_URL: '' };
let llm: LocalServer;
let slack: LocalServer;
let llmHangs = false;
const posted: string[] = [];

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((req, res) => {
    if (llmHangs) return;
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: `done ${/\w+-n-\d+/.exec(prompt)?.[0]}` } }] });
  });
  slack = await startLocalServer((req, res) => {
    posted.push((JSON.parse(req.body) as { text: string }).text);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  env.SLACK_WEBHOOK_URL = `${slack.url}/services/T0/B0/x`;
}, 60_000);
afterAll(async () => Promise.all([llm.close(), slack.close()]));

async function configured(name: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-store-e2e-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `agent: { provider: openai, model: m, base_url: ${llm.url}/v1, api_key: \${OPENAI_API_KEY}, timeout: 60s }`,
    'delivery: { timeout: 30s, teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} } }',
  ].join('\n'));
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', name, '--events', 'issues', '--prompt', 'Issue {issue.title}', '--deliver', 'teamchat'], env)).code).toBe(0);
  return dir;
}

async function post(url: string, name: string, i: number): Promise<Response> {
  const body = JSON.stringify({ action: 'opened', issue: { number: i, title: `${name}-n-${i}` }, repository: { full_name: 'o/r' } });
  return fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issues', 'x-github-delivery': `${name}-${i}`, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
}

const noStackTrace = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);

test('a second serve on the same data dir refuses clearly; the first keeps working; after kill -9 the lock is free whatever the PID', async () => {
  const dir = await configured('lockcheck');
  const first = await startServe(dir, env);
  try {
    const second = await startServe(dir, env).then(() => undefined, (error: Error) => error.message);
    expect(second).toContain('serve exited with 1');
    expect(second).toContain(`Another hookagent serve is already running on the data dir ${join(dir, 'data')}`);
    expect(second).toContain(`pid ${first.child.pid}`);
    noStackTrace(second ?? '');
    expect((await post(first.url, 'lockcheck', 1)).status).toBe(202);
  } finally {
    first.child.kill('SIGKILL');
    await first.exited;
  }
  // The dead holder's files are still there, naming a PID that is alive (this test's own):
  // the lock is the kernel's, so it was released with the process all the same.
  writeFileSync(join(dir, 'data', 'serve.json'), JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }));
  const again = await startServe(dir, env);
  expect((await post(again.url, 'lockcheck', 2)).status).toBe(202);
  await eventually(() => posted.filter((p) => /lockcheck-n-[12]\b/.test(p)).length === 2, 'both events delivered');
  expect(await stopServe(again)).toBe(0);
}, 60_000);

test("a damaged store gives hookagent's own error naming the data dir and what to do (serve and the CLI)", async () => {
  const dir = await configured('damaged');
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'data', 'hookagent.db'), Buffer.alloc(8192, 'not a database '));
  const failure = await startServe(dir, env).then(() => 'started', (error: Error) => error.message);
  expect(failure).toContain('serve exited with 1');
  expect(failure).toContain(`The local store ${join(dir, 'data', 'hookagent.db')} is damaged`);
  expect(failure).toContain('move it aside');
  noStackTrace(failure);
  const cli = await runCli(['--config-dir', dir, 'webhook', 'list'], env);
  expect(cli.code).toBe(1);
  expect(cli.stderr).toContain('is damaged');
  noStackTrace(cli.stderr);
}, 60_000);

test('SIGTERM with events in flight: exits 0 within the grace, no stack trace; every accepted event is delivered once after the restart', async () => {
  const dir = await configured('sigterm');
  llmHangs = true;
  const serve = await startServe(dir, env, { args: ['--shutdown-grace', '1'] });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const response = await post(serve.url, 'sigterm', i);
    expect(response.status).toBe(202);
    ids.push(String(((await response.json()) as { event_id: string }).event_id));
  }
  await eventually(() => llm.requests.length >= 2, 'agent calls in flight');
  const started = Date.now();
  expect(await stopServe(serve, 'SIGTERM')).toBe(0);
  expect(Date.now() - started).toBeLessThan(10_000);
  noStackTrace(serve.output());
  expect(serve.output()).not.toContain('Database is closed');

  llmHangs = false;
  const restarted = await startServe(dir, env);
  try {
    await eventually(async () => {
      const result = await runCli(['--config-dir', dir, 'webhook', 'events', 'sigterm', '--json', '--limit', '100'], env);
      const events = JSON.parse(result.stdout) as Array<{ status: string }>;
      return events.length === 20 && events.every((e) => e.status === 'delivered');
    }, 'every event delivered after the restart', 60_000);
    for (let i = 0; i < 20; i++) expect({ i, copies: posted.filter((p) => new RegExp(`done sigterm-n-${i}(?!\\d)`).test(p)).length }).toEqual({ i, copies: 1 });
  } finally {
    expect(await stopServe(restarted)).toBe(0);
  }
  noStackTrace(restarted.output());
}, 120_000);
