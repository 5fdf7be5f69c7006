/**
 * An event whose first run spent tokens and called a tool, then failed retryably (the
 * provider's 503 at its second step), and whose retry answered: the record's usage sums
 * both runs, and its transcript keeps both (`earlier`, oldest first), so `webhook event`
 * shows every step and tool call the usage counts. Before, the retry's transcript replaced
 * the first run's. Against a local OpenAI-compatible server.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import { transcriptLines } from '../../cli/webhook/event';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { MemoryEventLog, MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

let llm: LocalServer;
let script: Array<[number, unknown]> = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => {
    const [status, body] = script.shift() ?? [500, { error: { message: 'no script' } }];
    sendJson(res, status, body);
  });
});
afterAll(async () => llm.close());

const usage = { prompt_tokens: 100, completion_tokens: 20 };
const toolCall = { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me look that up.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"db-1"}' } }] } }], usage };
const answer = { choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Disk on db-1 is full.' } }], usage };

test("a retried event's transcript keeps the steps and tool calls of its first run", async () => {
  const subscriptions = new MemorySubscriptionStore();
  await subscriptions.create({ name: 's', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alerts.0.labels.alertname}' });
  const events = new MemoryEventLog();
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-transcript-retry-')), 'payloads')),
    agent: loopAgent(openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), {}, { timeout_ms: 1000, codehost: {} }),
    skills: new SkillLibrary(undefined), targets: { log: logTarget },
    config: { agent: { provider: 'openai', model: 'm', timeout_ms: 5000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: new ManualClock(), logger: silentLogger, maxReceiveCount: 3, deadLetters: { send: async () => {} },
  };
  const m: QueueMessage = { v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'alert', delivery_id: 'd1', received_at: '2026-11-22T12:00:00.000Z', payload: { alerts: [{ labels: { alertname: 'DiskRunningFull' } }] } };

  script = [[200, toolCall], [503, { error: { message: 'upstream overloaded' } }]];
  expect(await processMessage(JSON.stringify(m), 1, deps)).toMatchObject({ kind: 'retry' });
  script = [[200, answer]];
  expect(await processMessage(JSON.stringify(m), 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });

  const record = await events.get('evt_1', 's');
  expect(record?.usage).toMatchObject({ input_tokens: 200, output_tokens: 40, steps: 2, tool_calls: [expect.objectContaining({ name: 'lookup', ok: false })] });
  const transcript = await loadTranscript(deps.payloads, record?.transcript_ref);
  // Every step and tool call the usage counts is in the story: this run's, then the earlier one's.
  const runs = [...(transcript!.earlier ?? []), transcript!];
  expect(runs.map((t) => t.steps.length)).toEqual([1, 1]);
  expect(runs.reduce((n, t) => n + t.steps.length, 0)).toBe(record!.usage!.steps);
  expect(runs[0]!.steps[0]!.tool_calls.map((c) => c.name)).toEqual(['lookup']);
  expect(runs[1]!.steps[0]!.text).toBe('Disk on db-1 is full.');
  const text = transcriptLines(transcript!).join('\n');
  expect(text).toContain('transcript of run 1 of 2 (an earlier attempt):');
  expect(text).toContain('transcript of run 2 of 2:');
  expect(text).toMatch(/→ lookup\(\{"q":"db-1"\}\)/);

});
