/**
 * `hookagent serve` end to end, as a child process over real HTTP: a signed GitHub event
 * becomes a comment on a local GitHub API, an Alertmanager alert becomes a Telegram
 * message, [SILENT] delivers nothing, kill -9 loses nothing, SIGTERM exits 0.
 */
import { mkdtempSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe as startServeWith } from '../support/serve';

const GH_SECRET = 'e2e-github-secret';
const env = { GH_SECRET, GITHUB_TOKEN: 'ghp_e2e', TELEGRAM_BOT_TOKEN: '42:e2e', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const startServe = (dir: string) => startServeWith(dir, env);

let github: LocalServer;
let telegram: LocalServer;
let githubHolds = false;
const comments: Array<{ path: string; body: string }> = [];

beforeAll(async () => {
  buildCli();
  github = await startLocalServer((req, res) => {
    if (githubHolds) return; // as if GitHub hung: the request never completes
    // Who the token is (comments below are its own): markers count only in the bot's comments.
    if (req.url === '/user') return sendJson(res, 200, { id: 4242, login: 'hookagent-bot', type: 'User' });
    if (req.method === 'GET') return sendJson(res, 200, comments.filter((c) => c.path === req.url.split('?')[0]).map((c) => ({ body: c.body, html_url: 'https://github.test/c', user: { id: 4242, login: 'hookagent-bot', type: 'User' } })));
    comments.push({ path: req.url, body: (JSON.parse(req.body) as { body: string }).body });
    sendJson(res, 201, { id: comments.length, html_url: `https://github.test/c/${comments.length}` });
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => {
  await github.close();
  await telegram.close();
});

function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-e2e-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    'delivery:',
    '  timeout: 2s',
    `  codehost: { github: { token: \${GITHUB_TOKEN}, api_url: "${github.url}" } }`,
    `  messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" }`,
  ].join('\n'));
  return dir;
}

const pr = githubExamples.find((g) => g.name === 'pull_request')!.examples.find((e) => (e as { action?: string }).action === 'opened')!;

async function postGithub(url: string, delivery: string, payload: unknown = pr) {
  const body = JSON.stringify(payload);
  const response = await fetch(`${url}/webhooks/github`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, GH_SECRET) },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function events(dir: string, name: string): Promise<Array<{ event_id: string; status: string; targets: Record<string, { status: string }> }>> {
  const result = await runCli(['--config-dir', dir, 'webhook', 'events', name, '--json', '--limit', '100'], env);
  return JSON.parse(result.stdout) as Array<{ event_id: string; status: string; targets: Record<string, { status: string }> }>;
}

test('GitHub pull_request → a comment on the local GitHub API; Alertmanager → Telegram; [SILENT] → nothing', async () => {
  const dir = configDir();
  const serve = await startServe(dir);
  try {
    expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'pr-review', '--events', 'pull_request.opened', '--prompt', 'Reviewing #{pull_request.number}: {pull_request.title}', '--deliver', 'codehost_comment'], env)).code).toBe(0);
    const accepted = await postGithub(serve.url, 'e2e-1');
    expect(accepted).toMatchObject({ status: 202, body: { status: 'accepted', subscriptions: ['pr-review'] } });
    await eventually(() => comments.length === 1, 'the GitHub comment');
    const number = (pr as { pull_request: { number: number } }).pull_request.number;
    expect(comments[0]?.path).toMatch(new RegExp(`/issues/${number}/comments$`));
    // Issue references in a comment are made inert by default (mentions.ts): `#` then a zero-width space.
    expect(comments[0]?.body).toContain(`Reviewing #\u200b${number}`);
    expect(comments[0]?.body).toContain(`<!-- hookagent:pr-review:${String(accepted.body.event_id)} -->`);
    expect(github.requests.find((r) => r.method === 'POST')?.headers.authorization).toBe('token ghp_e2e');

    const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'FIRING {alerts.0.labels.alertname} on {alerts.0.labels.instance}', '--deliver', 'messenger'], env);
    const secret = /whsec_\S+/.exec(sub.stdout)![0];
    const alert = readFileSync(join(__dirname, '..', 'fixtures', 'alerts', 'alertmanager.json'), 'utf8');
    const response = await fetch(`${serve.url}/webhooks/custom/alerts`, { method: 'POST', body: alert, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
    expect(response.status).toBe(202);
    await eventually(() => telegram.requests.length === 1, 'the Telegram message');
    expect(telegram.requests[0]?.url).toBe('/bot42:e2e/sendMessage');
    expect(JSON.parse(telegram.requests[0]!.body)).toMatchObject({ chat_id: '-100', text: expect.stringMatching(/^FIRING DiskRunningFull on /) });

    await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'quiet', '--events', 'pull_request', '--prompt', '[SILENT] nothing to say about {pull_request.number}', '--deliver', 'codehost_comment'], env);
    const silent = await postGithub(serve.url, 'e2e-2');
    expect(silent.body.subscriptions).toContain('quiet');
    await eventually(async () => (await events(dir, 'quiet'))[0]?.status === 'suppressed', 'the suppressed record');
    await eventually(async () => (await events(dir, 'pr-review')).length === 2 && (await events(dir, 'pr-review')).every((e) => e.status === 'delivered'), 'pr-review deliveries');
    expect(comments.filter((c) => c.body.includes('hookagent:quiet'))).toHaveLength(0);

    // The loop guard: GitHub tells us about our own comment; nothing fires.
    const own = { action: 'created', issue: { number }, comment: { body: comments[0]!.body }, repository: (pr as { repository: unknown }).repository };
    const body = JSON.stringify(own);
    const ignored = await fetch(`${serve.url}/webhooks/github`, { method: 'POST', body, headers: { 'x-github-event': 'issue_comment', 'x-hub-signature-256': signHub(body, GH_SECRET) } });
    expect(await ignored.json()).toEqual({ status: 'ignored', reason: 'Event caused by hookagent', event: 'issue_comment' });

    // The built-in sample names a real repository: --send posts a delivery of our own (first-hour D4).
    const sent = await runCli(['--config-dir', dir, 'webhook', 'test', 'pr-review', '--send', '--url', serve.url, '--payload', JSON.stringify(pr)], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('POST /webhooks/github → 202');
    expect(sent.stdout).toContain('Outcome: delivered');
  } finally {
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }
}, 90_000);

test('kill -9 with events queued and in flight: after a restart each is delivered exactly once', async () => {
  const dir = configDir();
  comments.length = 0;
  let serve = await startServe(dir);
  await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'durable', '--events', 'pull_request', '--prompt', 'event {number}', '--deliver', 'codehost_comment'], env);
  githubHolds = true;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const accepted = await postGithub(serve.url, `kill-${i}`, { ...pr, number: 1000 + i });
    expect(accepted.status).toBe(202);
    ids.push(String(accepted.body.event_id));
  }
  await eventually(() => github.requests.length > 0, 'work in flight');
  serve.child.kill('SIGKILL');
  await serve.exited;
  githubHolds = false;

  serve = await startServe(dir);
  try {
    await eventually(() => new Set(comments.map((c) => /hookagent:durable:(\S+) -->/.exec(c.body)?.[1])).size === 12, 'all 12 comments', 60_000);
    await eventually(async () => (await events(dir, 'durable')).filter((e) => e.status === 'delivered').length === 12, 'all 12 delivered');
    for (const id of ids) expect(comments.filter((c) => c.body.includes(`hookagent:durable:${id} `))).toHaveLength(1);
    expect(comments).toHaveLength(12);
  } finally {
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }
}, 120_000);

test('first run writes a commented config.yaml and prints what to do next', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'hookagent-first-')), 'fresh');
  const serve = await startServe(dir);
  try {
    expect(existsSync(join(dir, 'config.yaml'))).toBe(true);
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).toContain('provider: echo');
    expect(serve.output()).toContain('Wrote a starter configuration');
    expect(serve.output()).toContain('agent: echo');
    const health = await fetch(`${serve.url}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    // HEAD as uptime monitors send it: 200, the headers of the GET, no body.
    const head = await fetch(`${serve.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(health.headers.get('content-type'));
    expect(await head.text()).toBe('');
  } finally {
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
  }
}, 60_000);

test('a port in use: serve says so and exits 1 (it once exited 0 without a word: the store closing left nothing that kept the process alive)', async () => {
  const holder = await startLocalServer((_req, res) => sendJson(res, 200, {}));
  try {
    const port = new URL(holder.url).port;
    const result = await runCli(['--config-dir', configDir(), 'serve', '--port', port], env);
    expect(result.stderr).toContain(`error: Port ${port} on 127.0.0.1 is in use; choose another with --port`);
    expect(result.code).toBe(1);
  } finally {
    await holder.close();
  }
}, 30_000);
