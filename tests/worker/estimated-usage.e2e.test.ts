/**
 * A provider that reports no usage (an OpenAI-compatible server such as some Ollama or
 * vLLM setups) through the worker, the local store (SQLite) and the built CLI: the run's
 * tokens are estimated (~4 characters a token), charged to the daily budget, which then
 * trips, and the record, `webhook event`, `webhook events` and `webhook usage` say the
 * figures are estimated. The model is a local server speaking Chat Completions.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHARS_PER_TOKEN } from '../../functions/core/agent/estimate';
import { readConfigFile } from '../../functions/core/config/file';
import { resolveConfig } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { subscriptionBudgetKey, tokensOf } from '../../functions/core/worker/budget';
import { processMessage } from '../../functions/core/worker/process';
import { createAgent } from '../../functions/worker/agent-factory';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { eventSummary } from '../../cli/console/data';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const REPLY = 'DiskRunningFull on db-1: 97% used. Rotate /var/log first.';
let llm: LocalServer;
let dir: string;
let store: LocalRuntime;
let config: Config;
const env = { LLM_KEY: 'sk-local' };

beforeAll(async () => {
  buildCli();
  // Like Ollama's /v1/chat/completions in setups that leave `usage` out.
  llm = await startLocalServer((_req, res) => sendJson(res, 200, {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1763900000, model: 'llama3',
    choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
  }));
  dir = mkdtempSync(join(tmpdir(), 'hookagent-estimate-'));
  writeFileSync(join(dir, 'config.yaml'), ['agent:', '  provider: openai', '  model: llama3', `  base_url: ${llm.url}/v1`, '  api_key: ${LLM_KEY}', ''].join('\n'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
  const parsed = readConfigFile(dir);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async (n) => (env as Record<string, string>)[n] }, ['agent', 'delivery']);
  if (!resolved.ok) throw new Error(resolved.error.message);
  config = resolved.value;
}, 90_000);
afterAll(async () => {
  await store?.close();
  await llm?.close();
});

const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
const alert = { alertname: 'DiskRunningFull', instance: 'db-1', description: 'Filesystem /var has less than 3% space left. '.repeat(30) };
const message = (id: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'local-llm', source: 'custom', event: 'alert', delivery_id: id, received_at: new Date().toISOString(), payload: alert });
const process = (id: string) => processMessage(JSON.stringify(message(id)), 1, {
  events: store.events, subscriptions: store.subscriptions, payloads: store.payloads, agent: createAgent(config.agent, config.delivery, undefined),
  skills: new SkillLibrary(dir), targets: { log: logTarget }, config, clock: systemClock, logger: silentLogger, maxReceiveCount: 3, counters: store.counters,
});

test('no usage from the provider: tokens are estimated, charged, the daily budget trips, and every view says "estimated"', async () => {
  const created = await hk('webhook', 'subscribe', 'local-llm', '--deliver', 'log', '--prompt', 'Alert {alertname} on {instance}: {description}', '--daily-tokens', '200');
  expect(created).toMatchObject({ code: 0, stderr: '' });

  expect(await process('evt_est_1')).toEqual({ kind: 'ack', status: 'delivered' });
  const record = await store.events.get('evt_est_1', 'local-llm');
  const sent = JSON.parse(llm.requests[0]!.body) as { messages: Array<{ content: string }> };
  const chars = sent.messages.reduce((n, m) => n + m.content.length, 0);
  // The documented rule: ~4 characters a token over what was sent (no tools offered) and the reply.
  expect(record?.usage).toMatchObject({ provider: 'openai', model: 'llama3', input_tokens: Math.ceil(chars / CHARS_PER_TOKEN), output_tokens: Math.ceil(REPLY.length / CHARS_PER_TOKEN), steps: 1, estimated: true });
  const spent = await store.counters.get(subscriptionBudgetKey('local-llm', Date.now()));
  expect(spent).toBe(tokensOf(record!.usage!));
  expect(spent).toBeGreaterThan(200);

  // The budget counted the estimate: the next event is refused before the model is called.
  expect(await process('evt_est_2')).toEqual({ kind: 'ack', status: 'over_budget' });
  expect(llm.requests).toHaveLength(1);
  expect(await store.events.get('evt_est_2', 'local-llm')).toMatchObject({ status: 'over_budget', error: { code: 'over_budget', message: expect.stringContaining(`${spent} tokens used`) } });

  const shown = await hk('webhook', 'event', 'evt_est_1');
  expect(shown).toMatchObject({ code: 0, stderr: '' });
  const usageLine = shown.stdout.split('\n').find((l) => l.trim().startsWith('usage:'));
  expect(usageLine).toBe(`  usage:    openai llama3: ~${record!.usage!.input_tokens} in, ~${record!.usage!.output_tokens} out, 0 cache read, 0 cache write, 1 step(s) (estimated: the provider reported no token counts)`);
  const json = JSON.parse((await hk('webhook', 'event', 'evt_est_1', '--json')).stdout) as Array<{ usage: Record<string, unknown> }>;
  expect(json[0]!.usage).toMatchObject({ estimated: true });

  const listed = JSON.parse((await hk('webhook', 'events', 'local-llm', '--json')).stdout) as Array<{ event_id: string; usage?: Record<string, unknown> }>;
  expect(listed.find((e) => e.event_id === 'evt_est_1')?.usage).toMatchObject({ estimated: true });
  // The console's event list marks the count ("~" on the page).
  expect(eventSummary(record!)).toMatchObject({ tokens: record!.usage!.input_tokens + record!.usage!.output_tokens, tokens_estimated: true });

  const summed = JSON.parse((await hk('webhook', 'usage', '--json')).stdout) as { rows: Array<Record<string, unknown>> };
  expect(summed.rows).toEqual([expect.objectContaining({ subscription: 'local-llm', events: 1, total_tokens: spent, estimated_events: 1 })]);
  const table = (await hk('webhook', 'usage', 'local-llm')).stdout;
  expect(table).toMatch(new RegExp(`local-llm\\s+openai\\s+llama3\\s+1\\s+~${record!.usage!.input_tokens}\\s+~${record!.usage!.output_tokens}\\s+0\\s+0\\s+~${spent}`));
  expect(table).toContain('~: estimated');
}, 90_000);
