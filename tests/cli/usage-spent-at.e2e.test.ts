/**
 * Hunt 12 (cost D4): `webhook usage --since` counts tokens by when they were spent, as the
 * daily budget does, not by when their event arrived. An event that arrived two days ago
 * (held by a paused subscription and released today by `resume`, or redriven from the dead
 * letters today) and runs now is charged to today's budget; before, `usage --since 24h`
 * left its tokens out. Records written before the worker stamped `usage.spent_at` are
 * selected by their arrival, as before. The worker on the local store, then the built CLI.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readConfigFile } from '../../functions/core/config/file';
import { resolveConfig } from '../../functions/core/config/load';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { AgentUsage, QueueMessage } from '../../functions/core/types';
import { subscriptionBudgetKey } from '../../functions/core/worker/budget';
import { processMessage } from '../../functions/core/worker/process';
import { eventRecord } from '../../functions/core/worker/record';
import { createAgent } from '../../functions/worker/agent-factory';
import { openLocalRuntime } from '../../functions/local/compose';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

let llm: LocalServer;
let dir: string;
beforeAll(async () => {
  buildCli();
  llm = await startLocalServer((_req, res) => sendJson(res, 200, {
    id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Looks fine.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 30 },
  }));
  dir = tempConfigDir(['agent:', '  provider: openai', '  model: gpt-test', `  base_url: ${llm.url}/v1`, '  api_key: ${LLM_KEY}', ''].join('\n'), 'hookagent-usage-spent-');
  mkdirSync(join(dir, 'data'), { recursive: true });
}, 120_000);
afterAll(async () => {
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = { LLM_KEY: 'sk-local' };
const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args], env);
const DAY = 86_400_000;
const usage = (tokens: number, spentAt?: string): AgentUsage => ({ provider: 'openai', model: 'gpt-test', input_tokens: tokens, output_tokens: 0, steps: 1, ...(spentAt ? { spent_at: spentAt } : {}) });

test('usage --since selects tokens by when they were spent (the budget\'s day), records without that time by arrival', async () => {
  expect(await hk('webhook', 'subscribe', 'late', '--deliver', 'log', '--prompt', 'Review {title}')).toMatchObject({ code: 0 });
  const parsed = readConfigFile(dir);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async (name) => (env as Record<string, string>)[name] }, ['agent', 'delivery']);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const config = resolved.value;
  const store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
  try {
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const message = (id: string, receivedAt: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'late', source: 'custom', event: 'thing', delivery_id: `d-${id}`, received_at: receivedAt, payload: { title: 'x' } });
    // Arrived two days ago, released today: the worker runs it now.
    const late = message('evt_usage_late', at(now - 2 * DAY));
    await store.events.putAll([eventRecord(late, 'queued', late.received_at)]);
    expect(await processMessage(JSON.stringify(late), 1, {
      events: store.events, subscriptions: store.subscriptions, payloads: store.payloads, agent: createAgent(config.agent, config.delivery, undefined),
      skills: new SkillLibrary(dir), targets: { log: logTarget }, config, clock: systemClock, logger: silentLogger, maxReceiveCount: 3, counters: store.counters,
    })).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await store.counters.get(subscriptionBudgetKey('late', Date.now()))).toBe(150);
    await store.events.putAll([
      // Written by an earlier version (no spent_at): selected by arrival.
      { ...eventRecord(message('evt_usage_old_recent', at(now - 3_600_000)), 'delivered', at(now - 3_600_000)), usage: usage(7) },
      { ...eventRecord(message('evt_usage_old_stale', at(now - 3 * DAY)), 'delivered', at(now - 3 * DAY)), usage: usage(1000) },
      // Arrived and spent three days ago.
      { ...eventRecord(message('evt_usage_spent_stale', at(now - 3 * DAY)), 'delivered', at(now - 3 * DAY)), usage: usage(2000, at(now - 3 * DAY)) },
    ]);
  } finally {
    await store.close();
  }
  const json = await hk('webhook', 'usage', '--since', '24h', '--json');
  expect(json).toMatchObject({ code: 0 });
  const summed = JSON.parse(json.stdout) as { total: { events: number; total_tokens: number } };
  expect(summed.total).toMatchObject({ events: 2, total_tokens: 157 });
  const week = JSON.parse((await hk('webhook', 'usage', '--since', '7d', '--json')).stdout) as { total: { events: number; total_tokens: number } };
  expect(week.total).toMatchObject({ events: 4, total_tokens: 3157 });
  const table = await hk('webhook', 'usage', 'late', '--since', '24h');
  expect(table.stdout).toMatch(/^late\s+openai\s+gpt-test\s+2\s+127\s+30\s+0\s+0\s+157\s/m);
  expect(table.stdout).toContain('by when the agent spent them');
}, 120_000);
