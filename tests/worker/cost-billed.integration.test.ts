/**
 * Hunt 12 (cost D1–D3, and D4's stamp), through the worker with the real agent against a
 * local server speaking Chat Completions or Messages, on SQLite and DynamoDB (dynalite):
 * - D1: a connection cut mid-body is retried (`queued`, `provider_unavailable`); before,
 *   the event failed for good (`agent_failed`, "TypeError: terminated") and was dead-lettered.
 * - D2: an interrupted reply from a server that reports no usage is charged (estimated) to
 *   the daily budget and counted as a step; before, 0 steps and nothing charged.
 * - D3: a run that happened stays counted in its hour when a retry of its event ends
 *   without calling the agent (over_budget, a skill that no longer loads); before, the
 *   retry gave it back and the hour allowed one run over `max_runs_per_hour`.
 * - D4: the record's usage says when its tokens were spent (`spent_at`), as the budget's day.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoCounterStore } from '../../functions/aws/counter-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { Config } from '../../functions/core/config/types';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import type { CounterStore, EventLog } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { subscriptionBudgetKey } from '../../functions/core/worker/budget';
import { runsKey } from '../../functions/core/worker/gates';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { createAgent } from '../../functions/worker/agent-factory';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { tempStore, type TestStore } from '../support/local-store';
import { MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

type Answer = (res: ServerResponse) => void;
let llm: LocalServer;
let script: Answer[] = [];
let dynamo: TestDynamo;
let sqlite: TestStore;
let dir: string;
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => (script.shift() ?? ((r: ServerResponse) => sendJson(r, 500, { error: { message: 'no script' } })))(res));
  dynamo = await startDynalite();
  sqlite = tempStore();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-cost-billed-'));
});
afterAll(async () => {
  await llm.close();
  sqlite.close();
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  script = [];
  llm.requests.length = 0;
});

const completion = (content: string, finish_reason: string, usage?: unknown): Answer => (res) => sendJson(res, 200, {
  id: 'chatcmpl-1', object: 'chat.completion', model: 'llama3', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason }], ...(usage ? { usage } : {}),
});
/** `200` and the headers, the start of the body, then the connection closes (a proxy dropping it mid-reply). */
const cutMidBody: Answer = (res) => {
  const body = JSON.stringify({ id: 'c1', choices: [{ index: 0, message: { role: 'assistant', content: 'A long review '.repeat(50) }, finish_reason: 'stop' }] });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
  res.write(body.slice(0, 60), () => res.socket?.end());
};

type Stores = (clock: ManualClock) => { events: EventLog; counters: CounterStore };
const adapters: Array<[string, Stores]> = [
  ['SQLite', (clock) => ({ events: new SqliteEventLog(sqlite.store), counters: new SqliteCounterStore(sqlite.store, clock) })],
  ['DynamoDB on dynalite', (clock) => ({ events: new DynamoEventLog(dynamo.client, dynamo.tables.events), counters: new DynamoCounterStore(dynamo.client, dynamo.tables.dedup, clock) })],
];

let n = 0;
describe.each(adapters)('%s', (_name, stores) => {
  async function setup(provider: 'openai' | 'anthropic', fields: Partial<Subscription> = {}) {
    n += 1;
    const clock = new ManualClock(Date.parse('2026-11-24T10:20:00Z'));
    const { events, counters } = stores(clock);
    const subscriptions = new MemorySubscriptionStore();
    const subscription: Subscription = {
      name: `cost${n}`, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Review {title}', ...fields,
    };
    await subscriptions.create(subscription);
    const agent = { provider, model: 'llama3', base_url: provider === 'openai' ? `${llm.url}/v1` : llm.url, api_key: 'sk-test', timeout_ms: 5000, max_steps: 4 } as Config['agent'];
    const delivery: Config['delivery'] = { timeout_ms: 1000, codehost: {} };
    const deps: WorkerDeps = {
      events, subscriptions, payloads: new FilePayloadStore(join(dir, subscription.name)), agent: createAgent(agent, delivery, undefined),
      skills: new SkillLibrary(undefined), targets: { log: logTarget }, config: { agent, delivery },
      clock, logger: jsonLogger(() => undefined), maxReceiveCount: 5, counters,
    };
    let m = 0;
    const message = (fields: Partial<QueueMessage> = {}): QueueMessage => {
      m += 1;
      const id = `evt_${subscription.name}_${m}`;
      return { v: 1, event_id: id, subscription: subscription.name, source: 'custom', event: 'thing', delivery_id: `d-${id}`, received_at: new Date(clock.now()).toISOString(), payload: { title: 'Add x' }, ...fields };
    };
    const receive = async (sent: QueueMessage, receiveCount: number) => {
      const outcome = await processMessage(JSON.stringify(sent), receiveCount, deps);
      return { outcome, record: (await events.get(sent.event_id, sent.subscription))! };
    };
    const runs = () => counters.get(runsKey(subscription.name, clock.now()));
    const spentToday = () => counters.get(subscriptionBudgetKey(subscription.name, clock.now()));
    return { subscriptions, subscription, clock, message, receive, runs, spentToday };
  }

  test.each(['openai', 'anthropic'] as const)('D1 (%s): a connection cut mid-body is retried, not failed for good', async (provider) => {
    const { message, receive } = await setup(provider);
    script = [cutMidBody];
    const { outcome, record } = await receive(message(), 1);
    expect({ outcome, status: record.status, error: record.error }).toMatchObject({
      outcome: { kind: 'retry' }, status: 'queued', error: { code: 'provider_unavailable', message: expect.stringContaining('closed the connection while answering') },
    });
  });

  test.each([['abort', 'provider_response'], ['error', 'provider_unavailable']])('D2: finish_reason %p with no usage: retried, one step, estimated, charged to the budget', async (finish, code) => {
    const { message, receive, spentToday } = await setup('openai', { daily_tokens: 1_000_000 });
    script = [completion('A partial review of the change that was', finish)];
    const { outcome, record } = await receive(message(), 1);
    expect(outcome).toMatchObject({ kind: 'retry' });
    expect(record.error?.code).toBe(code);
    expect(record.usage).toMatchObject({ steps: 1, estimated: true });
    const tokens = record.usage!.input_tokens + record.usage!.output_tokens;
    expect(tokens).toBeGreaterThan(0);
    expect(await spentToday()).toBe(tokens);
  });

  test('D3: a run that happened stays counted when its retry ends over_budget; a replay in the hour is rate_limited', async () => {
    const { subscriptions, subscription, clock, message, receive, runs } = await setup('openai', { max_runs_per_hour: 1, daily_tokens: 100 });
    // Attempt 1 calls the model, is billed 150 tokens, and is interrupted: retried.
    script = [completion('Half a rev', 'abort', { prompt_tokens: 120, completion_tokens: 30 })];
    const a = message();
    expect((await receive(a, 1)).outcome).toMatchObject({ kind: 'retry' });
    expect(await runs()).toBe(1);
    clock.advance(60_000);
    const retried = await receive(a, 2);
    expect(retried.outcome).toEqual({ kind: 'ack', status: 'over_budget' });
    // Its run happened: the hour keeps it, and so does the record.
    expect([await runs(), retried.record.run_counted, llm.requests.length]).toEqual([1, '2026-11-24T10', 1]);
    // The budget is raised and the event replayed, as over_budget's message says: the cap (1) is reached.
    await subscriptions.put({ ...subscription, daily_tokens: 100_000 });
    script = [completion('Full review.', 'stop', { prompt_tokens: 120, completion_tokens: 30 })];
    const replay = await receive(message({ replay_of: a.event_id }), 1);
    expect([replay.outcome, llm.requests.length, await runs()]).toEqual([{ kind: 'ack', status: 'rate_limited' }, 1, 1]);
  });

  test('D3: nor when its retry fails before the agent for another reason (a skill that no longer loads)', async () => {
    const { subscriptions, subscription, message, receive, runs } = await setup('openai', { max_runs_per_hour: 1 });
    script = [completion('Half a rev', 'abort', { prompt_tokens: 120, completion_tokens: 30 })];
    const a = message();
    expect((await receive(a, 1)).outcome).toMatchObject({ kind: 'retry' });
    await subscriptions.put({ ...subscription, skills: ['removed-skill'] });
    const retried = await receive(a, 2);
    expect(retried.record.status).toBe('failed');
    expect([await runs(), retried.record.run_counted]).toEqual([1, '2026-11-24T10']);
  });

  test("D4: the record's usage says when its tokens were last spent (the budget's clock), not when the event arrived", async () => {
    const { clock, message, receive } = await setup('openai');
    const arrived = new Date(clock.now() - 2 * 86_400_000).toISOString();
    script = [completion('Half a rev', 'abort', { prompt_tokens: 120, completion_tokens: 30 })];
    const sent = message({ received_at: arrived });
    const first = await receive(sent, 1);
    expect(first.record.usage).toMatchObject({ input_tokens: 120, spent_at: '2026-11-24T10:20:00.000Z' });
    clock.advance(3_600_000);
    script = [completion('Full review.', 'stop', { prompt_tokens: 120, completion_tokens: 30 })];
    const second = await receive(sent, 2);
    expect(second.record).toMatchObject({ status: 'delivered', received_at: arrived, usage: { input_tokens: 240, output_tokens: 60, steps: 2, spent_at: '2026-11-24T11:20:00.000Z' } });
  });
});
