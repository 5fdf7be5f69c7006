/**
 * The agent's story through the CLI, against the local store, a local server speaking the
 * Anthropic Messages wire format and a local Prometheus: an alert-triage run with http_get
 * (one allowed call, one refused), then `webhook event <id>` shows the transcript with the
 * tool calls, `webhook events --json` the usage, `webhook usage` sums it, and
 * `webhook test --dry-run` runs the real agent without delivering anything.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfigFile } from '../../functions/core/config/file';
import { resolveConfig } from '../../functions/core/config/load';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { createAgent } from '../../functions/worker/agent-factory';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

type Scripted = (body: { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }) => unknown;

let anthropic: LocalServer;
let prometheus: LocalServer;
let script: Scripted[] = [];
let dir: string;
let store: LocalRuntime;
const env = { ANTHROPIC_API_KEY: 'sk-ant-local', PROM_TOKEN: 'prom-secret' };

const message = (content: unknown[], stop_reason: string, usage: Record<string, number>) => ({ id: 'msg', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason, stop_sequence: null, usage });

beforeAll(async () => {
  buildCli();
  anthropic = await startLocalServer((req, res) => {
    const next = script.shift();
    if (!next) return sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: 'no script' } });
    sendJson(res, 200, next(JSON.parse(req.body) as Parameters<Scripted>[0]));
  });
  prometheus = await startLocalServer((req, res) => {
    if (req.headers.authorization !== 'Bearer prom-secret') return sendJson(res, 401, { status: 'error', error: 'unauthorized' });
    sendJson(res, 200, { status: 'success', data: { resultType: 'vector', result: [{ metric: { instance: 'db-1' }, value: [1763900000, '0.97'] }] } });
  });
  dir = mkdtempSync(join(tmpdir(), 'hookagent-story-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'agent:',
    '  provider: anthropic',
    '  model: claude-test',
    `  base_url: ${anthropic.url}`,
    '  api_key: ${ANTHROPIC_API_KEY}',
    '  max_tokens: 800',
    '  http:',
    '    allow:',
    `      - prefix: ${prometheus.url}/api/v1/`,
    '        headers: { Authorization: "Bearer ${PROM_TOKEN}" }',
    '',
  ].join('\n'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
}, 90_000);
afterAll(async () => {
  await store?.close();
  await anthropic?.close();
  await prometheus?.close();
});

const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
const alert = { status: 'firing', alerts: [{ labels: { alertname: 'DiskRunningFull', instance: 'db-1' }, annotations: { runbook_url: 'https://wiki.example.com/disk' } }] };

test('an alert-triage run is told whole by `webhook event`, summed by `webhook usage`', async () => {
  const created = await hk('webhook', 'subscribe', 'alerts', '--skills', 'alert-triage', '--deliver', 'log', '--prompt', 'Alert {alerts.0.labels.alertname} on {alerts.0.labels.instance}', '--max-tokens', '600');
  expect(created).toMatchObject({ code: 0, stderr: '' });

  const query = `${prometheus.url}/api/v1/query?query=${encodeURIComponent('node_filesystem_avail_bytes{instance="db-1"}')}`;
  script = [
    () => message([{ type: 'tool_use', id: 'toolu_1', name: 'http_get', input: { url: query } }], 'tool_use', { input_tokens: 900, output_tokens: 40, cache_creation_input_tokens: 1200 }),
    () => message([{ type: 'tool_use', id: 'toolu_2', name: 'http_get', input: { url: 'https://wiki.example.com/disk' } }], 'tool_use', { input_tokens: 100, output_tokens: 30, cache_read_input_tokens: 1200 }),
    () => message([{ type: 'text', text: 'DiskRunningFull on db-1: 97% used. Check /var/log first.' }], 'end_turn', { input_tokens: 80, output_tokens: 25, cache_read_input_tokens: 1200 }),
  ];
  const parsed = readConfigFile(dir);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async (n) => (env as Record<string, string>)[n] }, ['agent', 'delivery']);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const config = resolved.value;
  const events = store.events;
  const m: QueueMessage = { v: 1, event_id: 'evt_story_1', subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: 'd1', received_at: new Date().toISOString(), payload: alert };
  const outcome = await processMessage(JSON.stringify(m), 1, {
    events, subscriptions: store.subscriptions, payloads: store.payloads,
    agent: createAgent(config.agent, config.delivery, undefined), skills: new SkillLibrary(dir), targets: { log: logTarget }, config, clock: systemClock,
    logger: silentLogger, maxReceiveCount: 3, counters: store.counters,
  });
  expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
  expect(prometheus.requests).toHaveLength(1);
  const first = JSON.parse(anthropic.requests[0]!.body) as { max_tokens: number; tools: Array<{ name: string; description: string }>; system: Array<{ text: string; cache_control?: unknown }> };
  expect(first.max_tokens).toBe(600);
  expect(first.tools.map((t) => t.name)).toEqual(['http_get']);
  expect(first.tools[0]!.description).toContain(`${prometheus.url}/api/v1/`);
  expect(first.system[0]).toMatchObject({ cache_control: { type: 'ephemeral' }, text: expect.stringContaining('query_range') });

  const story = await hk('webhook', 'event', 'evt_story_1', '--json');
  expect(story).toMatchObject({ code: 0, stderr: '' });
  const [entry] = JSON.parse(story.stdout) as Array<Record<string, any>>;
  expect(entry).toMatchObject({
    event_id: 'evt_story_1', subscription: 'alerts', status: 'delivered', request: { source: 'custom', event: 'alert', delivery_id: 'd1' },
    prompt: 'Alert DiskRunningFull on db-1', reply: 'DiskRunningFull on db-1: 97% used. Check /var/log first.', deliveries: { log: { status: 'delivered' } },
    usage: { provider: 'anthropic', model: 'claude-test', input_tokens: 1080, output_tokens: 95, cache_read_tokens: 2400, cache_write_tokens: 1200, steps: 3 },
  });
  expect(entry!.transcript.system_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(entry!.transcript.user).toMatch(/<untrusted-data-[0-9a-f]{18}>DiskRunningFull<\/untrusted-data-/);
  expect(entry!.transcript.steps[0].tool_calls[0]).toMatchObject({ name: 'http_get', input: { url: query }, ok: true, result: expect.stringContaining('"instance":"db-1"') });
  expect(entry!.transcript.steps[1].tool_calls[0]).toMatchObject({ name: 'http_get', ok: false, result: expect.stringContaining('not under an allowed prefix') });
  expect(JSON.stringify(entry)).not.toContain('prom-secret');

  const text = await hk('webhook', 'event', 'evt_story_1');
  expect(text.stdout).toContain('→ http_get');
  expect(text.stdout).toContain('deliveries:');
  expect(text.stdout).toContain('log: delivered');

  const listed = JSON.parse((await hk('webhook', 'events', 'alerts', '--json')).stdout) as Array<Record<string, any>>;
  expect(listed[0]!.usage).toMatchObject({ provider: 'anthropic', input_tokens: 1080, output_tokens: 95, tool_calls: [expect.objectContaining({ name: 'http_get', ok: true }), expect.objectContaining({ name: 'http_get', ok: false })] });

  const summed = JSON.parse((await hk('webhook', 'usage', '--json')).stdout) as { rows: Array<Record<string, unknown>>; total: Record<string, number> };
  expect(summed.rows).toEqual([{ subscription: 'alerts', provider: 'anthropic', model: 'claude-test', events: 1, input_tokens: 1080, output_tokens: 95, cache_read_tokens: 2400, cache_write_tokens: 1200, total_tokens: 4775, steps: 3, tool_calls: 2 }]);
  const table = await hk('webhook', 'usage', 'alerts', '--since', '24h');
  expect(table.stdout).toMatch(/alerts\s+anthropic\s+claude-test\s+1\s+1080\s+95\s+2400\s+1200\s+4775/);
}, 60_000);

test('`webhook test --dry-run` runs the real agent and prints reply and transcript; nothing is delivered or recorded', async () => {
  const before = (await store.events.listBySubscription('alerts', 100)).length;
  anthropic.requests.length = 0;
  script = [() => message([{ type: 'text', text: 'Dry-run triage: disk nearly full.' }], 'end_turn', { input_tokens: 50, output_tokens: 9 })];
  const result = await hk('webhook', 'test', 'alerts', '--dry-run', '--payload', JSON.stringify(alert));
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout).toContain('Prompt:\nAlert DiskRunningFull on db-1');
  expect(result.stdout).toContain('system prompt sha256:');
  expect(result.stdout).toContain('Reply (would be posted to log):\nDry-run triage: disk nearly full.');
  expect(anthropic.requests).toHaveLength(1);
  expect(anthropic.requests[0]!.headers['x-api-key']).toBe('sk-ant-local');
  expect((await store.events.listBySubscription('alerts', 100)).length).toBe(before);

  script = [() => message([{ type: 'text', text: '' }], 'end_turn', { input_tokens: 50, output_tokens: 1 })];
  const empty = await hk('webhook', 'test', 'alerts', '--dry-run', '--json', '--payload', JSON.stringify(alert));
  expect(empty.code).toBe(1);
  expect(JSON.parse(empty.stdout)).toMatchObject({ reply: null, would_post: false, delivered: false, error: { code: 'agent_reply_empty' }, usage: { input_tokens: 50 } });

  // As a real run runs it: the subscription's own model, and its template's text outside the untrusted-data fence.
  expect((await hk('webhook', 'update', 'alerts', '--model', 'claude-special')).code).toBe(0);
  anthropic.requests.length = 0;
  script = [() => message([{ type: 'text', text: 'ok' }], 'end_turn', { input_tokens: 5, output_tokens: 1 })];
  expect((await hk('webhook', 'test', 'alerts', '--dry-run', '--payload', JSON.stringify(alert))).code).toBe(0);
  const sent = JSON.parse(anthropic.requests[0]!.body) as { model: string; messages: Array<{ content: string | Array<{ text?: string }> }> };
  expect(sent.model).toBe('claude-special');
  const user = JSON.stringify(sent.messages[0]!.content);
  expect(user).toMatch(/Alert <untrusted-data-[^>]+>DiskRunningFull<\/untrusted-data-/);
  expect((await hk('webhook', 'update', 'alerts', '--model', '')).code).toBe(0);
}, 60_000);

test('bad input: unknown event, bad --since, bad --max-tokens are clear errors', async () => {
  const missing = await hk('webhook', 'event', 'evt_nope');
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("No event 'evt_nope'");
  const since = await hk('webhook', 'usage', '--since', 'yesterday');
  expect(since.code).toBe(1);
  expect(since.stderr).toContain("--since 'yesterday' is neither a duration");
  const tokens = await hk('webhook', 'update', 'alerts', '--max-tokens', 'lots');
  expect(tokens.code).toBe(1);
  expect(tokens.stderr).toContain('--max-tokens must be a whole number');
  expect((await hk('webhook', 'update', 'alerts', '--daily-tokens', '50000', '--max-tokens', 'none')).code).toBe(0);
  const shown = JSON.parse((await hk('webhook', 'show', 'alerts', '--json')).stdout) as Record<string, unknown>;
  expect(shown).toMatchObject({ daily_tokens: 50000 });
  expect(shown).not.toHaveProperty('max_tokens');
  const unknownSub = await hk('webhook', 'usage', 'nope');
  expect(unknownSub.code).toBe(1);
}, 60_000);
