/**
 * The OpenAI-compatible provider with servers that shape answers their own way (hunt 13,
 * agent): tool arguments sent as an object (llama.cpp, mlx-lm) and content sent as a list of
 * parts (Mistral's reasoning models). Before, the first ran the tool with `{}`, and the
 * second was an empty reply, failed for good. The real worker, a local Chat Completions server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../functions/core/config/types';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { createAgent } from '../../functions/worker/agent-factory';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { tempStore, type TestStore } from '../support/local-store';
import { MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

type Answer = (res: ServerResponse) => void;
let llm: LocalServer;
let prom: LocalServer;
let script: Answer[] = [];
let sqlite: TestStore;
let dir: string;
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => (script.shift() ?? ((r: ServerResponse) => sendJson(r, 500, { error: { message: 'no script' } })))(res));
  prom = await startLocalServer((_req, res) => sendJson(res, 200, { status: 'success', data: { result: [{ metric: { job: 'api' }, value: [1, '0'] }] } }));
  sqlite = tempStore();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-hunt13-agent-'));
});
afterAll(async () => {
  await llm.close();
  await prom.close();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  script = [];
  llm.requests.length = 0;
  prom.requests.length = 0;
});

const completion = (message: Record<string, unknown>, finish_reason: string): Answer => (res) => sendJson(res, 200, {
  id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason }],
  usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
});

let n = 0;
async function setup(fields: Partial<Subscription> = {}) {
  n += 1;
  const clock = new ManualClock(Date.parse('2026-11-24T10:20:00Z'));
  const events = new SqliteEventLog(sqlite.store);
  const counters = new SqliteCounterStore(sqlite.store, clock);
  const subscriptions = new MemorySubscriptionStore();
  const subscription: Subscription = {
    name: `h13a${n}`, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {title}', ...fields,
  };
  await subscriptions.create(subscription);
  const agent = {
    provider: 'openai', model: 'm', base_url: `${llm.url}/v1`, api_key: 'sk-test', timeout_ms: 5000, max_steps: 4,
    http: { allow: [{ prefix: `${prom.url}/api/v1/` }], timeout_ms: 2000, max_bytes: 65536 },
  } as Config['agent'];
  const delivery: Config['delivery'] = { timeout_ms: 1000, codehost: {} };
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(dir, subscription.name)), agent: createAgent(agent, delivery, undefined),
    skills: new SkillLibrary(undefined), targets: { log: logTarget }, config: { agent, delivery },
    clock, logger: jsonLogger(() => undefined), maxReceiveCount: 5, counters,
  };
  const id = `evt_${subscription.name}_1`;
  const message: QueueMessage = { v: 1, event_id: id, subscription: subscription.name, source: 'custom', event: 'alert', delivery_id: `d-${id}`, received_at: new Date(clock.now()).toISOString(), payload: { title: 'High latency' } };
  const receive = async () => {
    const outcome = await processMessage(JSON.stringify(message), 1, deps);
    return { outcome, record: (await events.get(message.event_id, message.subscription))! };
  };
  return { receive };
}

test('a tool call whose arguments come as a JSON object (llama-server, mlx-lm) runs with those arguments, not with {}', async () => {
  const { receive } = await setup({ skills: ['alert-triage'] });
  const url = `${prom.url}/api/v1/query?query=up`;
  script = [
    completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'http_get', arguments: { url } } }] }, 'tool_calls'),
    completion({ content: 'The api job is down (up = 0).' }, 'stop'),
  ];
  const { record } = await receive();
  expect(record.status).toBe('delivered');
  // The model asked for the query: the tool must have fetched it.
  expect(prom.requests.map((r) => r.url)).toEqual(['/api/v1/query?query=up']);
  // And what went back to the model (and the transcript) is the call as it was made, not `{}`.
  const second = JSON.parse(llm.requests[1]!.body) as { messages: Array<{ role: string; tool_calls?: Array<{ function: { arguments: string } }> }> };
  expect(JSON.parse(second.messages.find((m) => m.tool_calls)!.tool_calls![0]!.function.arguments)).toEqual({ url });
});

test("Mistral's structured content (a thinking chunk, then a text chunk) is the answer, not an empty reply", async () => {
  const { receive } = await setup();
  script = [completion({
    content: [
      { type: 'thinking', thinking: [{ type: 'text', text: 'The alert is about latency; summarise.' }] },
      { type: 'text', text: 'Latency on the api is high since 10:05; check the db pool.' },
    ],
  }, 'stop')];
  const { record } = await receive();
  expect({ status: record.status, error: record.error, reply: record.reply }).toEqual({
    status: 'delivered', error: undefined, reply: 'Latency on the api is high since 10:05; check the db pool.',
  });
});
