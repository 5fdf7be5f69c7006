/**
 * GitLab system hooks through `hookagent serve` over real HTTP on 127.0.0.1: a
 * subscription made with `--events system.project_create` (no unknown-event warning)
 * gets GitLab's project_create system hook delivered, and not its project_destroy or
 * user_create; the request log shows each one's action. Payloads: GitLab's documented
 * examples (tests/fixtures/gitlab/system/).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const GL_SECRET = 'system-e2e-gitlab-token';
const env = { GL_SECRET, TELEGRAM_BOT_TOKEN: '42:sys', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'gitlab', name), 'utf8');

let telegram: LocalServer;
let serve: Serve;
let dir: string;

beforeAll(async () => {
  buildCli();
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
  dir = mkdtempSync(join(tmpdir(), 'hookagent-system-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { gitlab: { secret: ${GL_SECRET} } }',
    'delivery:',
    '  timeout: 2s',
    `  messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" }`,
  ].join('\n'));
  serve = await startServe(dir, env);
}, 90_000);
afterAll(async () => {
  if (serve) expect(await stopServe(serve)).toBe(0);
  await telegram?.close();
});

let n = 0;
async function systemHook(body: string, token = GL_SECRET) {
  const response = await fetch(`${serve.url}/webhooks/gitlab`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-gitlab-event': 'System Hook', 'x-gitlab-token': token, 'x-gitlab-event-uuid': `e2e-sys-${++n}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('subscribe --events system.project_create: no warning; project_create is delivered, other system hooks are not', async () => {
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'new-projects', '--events', 'system.project_create', '--prompt', 'New project {path_with_namespace} by {owner_name}', '--deliver', 'messenger'], env);
  expect(sub.code).toBe(0);
  expect(sub.stderr).not.toMatch(/not a GitHub or GitLab event name|not an event GitLab sends|may never match/);

  expect(await systemHook(fixture('system/project_create.json'))).toMatchObject({ status: 202, body: { status: 'accepted', event: 'system', subscriptions: ['new-projects'] } });
  await eventually(() => telegram.requests.length === 1, 'the Telegram message');
  expect(JSON.parse(telegram.requests[0]!.body)).toMatchObject({ chat_id: '-100', text: 'New project jsmith/storecloud by John Smith' });

  for (const name of ['project_destroy', 'user_create', 'group_create']) {
    expect({ name, ...(await systemHook(fixture(`system/${name}.json`))) }).toEqual({ name, status: 200, body: { status: 'ignored', reason: 'Event not handled', event: 'system' } });
  }
  // Bad input on the same URL: a wrong token and a body that is not JSON.
  expect(await systemHook(fixture('system/project_create.json'), 'wrong')).toMatchObject({ status: 401, body: { code: 'signature_invalid' } });
  expect(await systemHook('{"event_name": ')).toMatchObject({ status: 400, body: { code: 'invalid_json' } });

  const log = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'requests', '--endpoint', 'gitlab', '--json', '--limit', '50'], env)).stdout) as Array<{ outcome: string; event?: string; action?: string }>;
  expect(log.filter((e) => e.event === 'system').map((e) => `${e.action} ${e.outcome}`).sort()).toEqual([
    'group_create not_handled', 'project_create accepted', 'project_destroy not_handled', 'user_create not_handled',
  ]);
  await eventually(async () => {
    const events = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'events', 'new-projects', '--json'], env)).stdout) as Array<{ status: string }>;
    return events.length === 1 && events[0]?.status === 'delivered';
  }, 'the delivered event');
  expect(telegram.requests).toHaveLength(1);
}, 60_000);

test('webhook test --send with a system-hook payload posts it to /webhooks/gitlab as a system hook, and it is taken', async () => {
  const file = join(dir, 'project_create.json');
  writeFileSync(file, fixture('system/project_create.json'));
  const before = telegram.requests.length;
  const sent = await runCli(['--config-dir', dir, 'webhook', 'test', 'new-projects', '--send', '--url', serve.url, '--payload', file], env);
  expect(sent.code).toBe(0);
  expect(sent.stdout).toContain('POST /webhooks/gitlab → 202');
  await eventually(() => telegram.requests.length === before + 1, 'the Telegram message of the test event');
  expect(JSON.parse(telegram.requests[before]!.body)).toMatchObject({ text: 'New project jsmith/storecloud by John Smith' });
}, 60_000);
