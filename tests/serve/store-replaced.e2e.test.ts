/**
 * `data/hookagent.db` removed or replaced under a running serve (hunt 9, local item 4). serve
 * kept answering 202 into the file it still had open, which was no longer on disk: what it
 * accepted was gone at its next start, `status` said "All good" and the CLI opened a new,
 * empty store. Now serve notices, answers 503 with the reason (a sender retries, and the
 * retry is kept once serve is restarted), logs it, and `status` and the CLI say so instead
 * of creating a store.
 */
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli, type CliResult } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const env = { GH_SECRET: 'store-replaced', TELEGRAM_BOT_TOKEN: '42:replaced', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let telegram: LocalServer;
const dirs: string[] = [];

beforeAll(async () => {
  buildCli();
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => {
  await telegram.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const cli = (dir: string, ...args: string[]): Promise<CliResult> => runCli(['--config-dir', dir, ...args], env);
const subscribe = (dir: string) => cli(dir, 'webhook', 'subscribe', 'a', '--events', 'issues', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'A {issue.title}');

async function configured(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-store-replaced-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    `delivery: { timeout: 5s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" } }`,
  ].join('\n'));
  expect((await subscribe(dir)).code).toBe(0);
  return dir;
}

/** One signed GitHub `issues.opened` whose delivery id is `title`. */
async function post(url: string, title: string): Promise<{ status: number; body: { code?: string; message?: string }; retryAfter: string | null }> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'o/r' } });
  const response = await fetch(`${url}/webhooks/github`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': title, 'x-hub-signature-256': signHub(body, env.GH_SECRET) } });
  return { status: response.status, body: (await response.json()) as { code?: string; message?: string }, retryAfter: response.headers.get('retry-after') };
}

/** What serve, `status` and the CLI say once the store file is not the one serve has open. */
async function expectLoud(dir: string, serve: Serve, title: string): Promise<void> {
  const file = join(dir, 'data', 'hookagent.db');
  // The very first request after the change is refused: nothing more is answered 202 into the lost file.
  const answer = await post(serve.url, title);
  expect(answer.status).toBe(503);
  expect(answer.body.code).toBe('unavailable');
  expect(answer.body.message).toMatch(/^The store file hookagent\.db in serve's data dir was removed or replaced.*; restart serve$/);
  // Senders are not told where the data dir is.
  expect(answer.body.message).not.toContain(dir);
  expect(answer.retryAfter).not.toBeNull();
  expect((await fetch(`${serve.url}/health`)).status).toBe(503);
  // The log says which file, and that the consumer stopped.
  await eventually(() => serve.output().includes('no longer taking work from the queue'), "the error in serve's log");
  const logged = serve.output().split('\n').find((line) => line.includes('no longer taking work from the queue'));
  expect(logged).toMatch(/\berror\b.*removed or replaced/i);
  expect(logged).toContain(file);

  const status = await cli(dir, 'status', '--json');
  expect(status.code).toBe(3);
  const report = JSON.parse(status.stdout) as { serve: { running: boolean }; attention: string[] };
  expect(report.serve.running).toBe(true);
  expect(report.attention.join('\n')).toMatch(/removed or replaced while serve .*runs/);
  const text = await cli(dir, 'status');
  expect(text.code).toBe(3);
  expect(text.stdout).toContain('Needs attention');
  expect(text.stdout).not.toContain('All good');

  const existed = existsSync(file);
  const list = await cli(dir, 'webhook', 'list');
  expect(list.code).toBe(1);
  expect(list.stderr).toContain(`${file} is not the file the running hookagent serve`);
  expect(list.stderr).toContain('restart serve');
  expect(list.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  // No new, empty store where the old one was.
  expect(existsSync(file)).toBe(existed);
}

test('hookagent.db removed under a running serve: 503 with the reason, status exit 3, the CLI refuses; the sender\'s retry is kept after the restart', async () => {
  const dir = await configured();
  const serve = await startServe(dir, env, { quiet: true });
  try {
    expect((await post(serve.url, 'before-rm')).status).toBe(202);
    rmSync(join(dir, 'data', 'hookagent.db'));
    await expectLoud(dir, serve, 'after-rm');
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
  // A new serve starts an empty store (the file is gone); the sender's retry is accepted and kept.
  const again = await startServe(dir, env, { quiet: true });
  try {
    expect((await subscribe(dir)).code).toBe(0);
    expect((await post(again.url, 'after-rm')).status).toBe(202);
    await eventually(() => telegram.requests.some((r) => r.body.includes('A after-rm')), 'the retried event delivered');
    const status = await cli(dir, 'status', '--json');
    expect((JSON.parse(status.stdout) as { attention: string[] }).attention.join('\n')).not.toMatch(/removed or replaced/);
  } finally {
    expect(await stopServe(again)).toBe(0);
  }
  const events = await cli(dir, 'webhook', 'events', 'a', '--json');
  expect((JSON.parse(events.stdout) as Array<{ delivery_id: string }>).map((r) => r.delivery_id)).toContain('after-rm');
}, 90_000);

test('hookagent.db replaced under a running serve (a copy moved over it): the same, and the restarted serve opens the file now there', async () => {
  const dir = await configured();
  const file = join(dir, 'data', 'hookagent.db');
  const serve = await startServe(dir, env, { quiet: true });
  try {
    expect((await post(serve.url, 'before-mv')).status).toBe(202);
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
    await expectLoud(dir, serve, 'after-mv');
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
  const again = await startServe(dir, env, { quiet: true });
  try {
    expect((await cli(dir, 'webhook', 'list')).code).toBe(0);
    // Not 200 "duplicate": the WAL serve wrote last is not replayed onto the file now there.
    expect((await post(again.url, 'after-mv')).status).toBe(202);
  } finally {
    expect(await stopServe(again)).toBe(0);
  }
}, 90_000);
