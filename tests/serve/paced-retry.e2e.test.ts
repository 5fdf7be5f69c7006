/**
 * Issue 14 item 10, acceptance with `hookagent serve` as users run it: a model that
 * answers 429 with `Retry-After: 2` once is waited out in-process, and the event reaches
 * Telegram within 10 s (before: the whole visibility timeout of the local queue).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe } from '../support/serve';

const env = { OPENAI_API_KEY: 'sk-paced', TELEGRAM_BOT_TOKEN: '9:paced', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
let llm: LocalServer;
let telegram: LocalServer;
let rateLimitNext = 0;

beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((req, res) => {
    if (rateLimitNext > 0) {
      rateLimitNext -= 1;
      return sendJson(res, 429, { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '2' });
    }
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `Triaged: Alert ${/Alert (?:<untrusted-data-\w+>)?(\w+)/.exec(prompt)?.[1]}` }, finish_reason: 'stop' }] });
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => {
  await llm.close();
  await telegram.close();
});

test('a model answering 429 Retry-After: 2 once → delivered within 10 s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-paced-'));
  writeFileSync(join(dir, 'config.yaml'), [
    `agent: { provider: openai, model: gpt-test, base_url: "${llm.url}/v1", api_key: \${OPENAI_API_KEY}, timeout: 30s, concurrency: 2 }`,
    `delivery: { timeout: 5s, messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" } }`,
  ].join('\n'));
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {name}', '--deliver', 'messenger'], env);
  expect(sub.code).toBe(0);
  const secret = /whsec_\S+/.exec(sub.stdout)![0];
  const serve = await startServe(dir, env);
  try {
    rateLimitNext = 1;
    const started = Date.now();
    const response = await fetch(`${serve.url}/webhooks/custom/alerts`, { method: 'POST', body: JSON.stringify({ name: 'DiskFull' }), headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } });
    expect(response.status).toBe(202);
    await eventually(() => telegram.requests.length === 1, 'the Telegram message', 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(llm.requests).toHaveLength(2);
    expect(JSON.parse(telegram.requests[0]!.body)).toMatchObject({ chat_id: '-100', text: expect.stringContaining('Triaged: Alert DiskFull') });
  } finally {
    expect(await stopServe(serve)).toBe(0);
  }
}, 60_000);
