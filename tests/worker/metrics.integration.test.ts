/**
 * Issue 20: the worker's metrics. A real worker run (processMessage over dynalite) through the
 * observing event log, flushed by the EMF adapter (Powertools Metrics) to stdout, read back
 * as CloudWatch Embedded Metric Format documents.
 *
 * Hunt 9 (agent2 D2): the record's usage sums every attempt of the event (as the budget
 * does), so the Tokens metric is each run's share of it: a retried run is not counted again,
 * and a run whose agent_ms equals the previous one's is not lost. A local OpenAI-compatible
 * model server spends tokens, then answers 503.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emfMetrics } from '../../functions/aws/emf-metrics';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { Agent } from '../../functions/core/agent/agent';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { logTarget } from '../../functions/core/delivery/log-target';
import { HookError } from '../../functions/core/errors';
import { silentLogger } from '../../functions/core/log';
import { memoryMetrics, type Metrics } from '../../functions/core/metrics/metrics';
import { countedDeadLetters, observedEventLog } from '../../functions/core/metrics/observed-event-log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer } from '../support/local-http';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'alerts', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alertname}',
  });
});
afterAll(async () => dynamo.close());

/** A clock the agent advances: the run takes 1500 ms of it. */
function slowAgent(clock: ManualClock, fail?: HookError): Agent {
  return {
    async run(request) {
      clock.advance(1500);
      if (fail) throw fail;
      return { text: `answer to ${request.rendered}`, steps: 1, refusedTools: [] };
    },
  };
}

let n = 0;
function worker(metrics: Metrics, fail?: HookError) {
  n += 1;
  const clock = new ManualClock(Date.parse('2026-11-22T12:00:02.000Z'));
  const dead: string[] = [];
  const configDir = mkdtempSync(join(tmpdir(), 'hookagent-metrics-'));
  const deps: WorkerDeps = {
    events: observedEventLog(new DynamoEventLog(dynamo.client, dynamo.tables.events), metrics, clock),
    subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    payloads: new FilePayloadStore(join(configDir, 'payloads')), agent: slowAgent(clock, fail), skills: new SkillLibrary(configDir),
    targets: { log: logTarget }, config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock, logger: silentLogger, maxReceiveCount: 3, deadLetters: countedDeadLetters({ send: async (body) => void dead.push(body) }, metrics),
  };
  const message: QueueMessage = {
    v: 1, event_id: `evt_metrics_${n}`, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: `m${n}`,
    received_at: '2026-11-22T12:00:00.000Z', payload: { alertname: 'DiskFull' },
  };
  return { deps, body: JSON.stringify(message), message, dead };
}

/** Runs `fn`, returning the EMF documents written to stdout meanwhile. */
async function emfOf(fn: () => Promise<void>): Promise<Array<Record<string, any>>> {
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return written.join('').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>).filter((doc) => doc._aws);
}

function points(docs: Array<Record<string, any>>) {
  return docs.flatMap((doc) => (doc._aws.CloudWatchMetrics as Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }>).flatMap((set) =>
    set.Metrics.map((m) => ({ namespace: set.Namespace, name: m.Name, unit: m.Unit, value: doc[m.Name] as unknown, dimensions: Object.fromEntries(set.Dimensions.flat().map((d) => [d, doc[d]])) }))));
}

test('a delivered event: queue-to-start latency, agent duration and a delivery, as one EMF flush', async () => {
  const metrics = emfMetrics('hookagent-worker', 'prod', 'hookagent');
  const { deps, body } = worker(metrics);
  const docs = await emfOf(async () => {
    expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    metrics.flush();
  });
  const found = points(docs);
  const base = { service: 'hookagent-worker', stage: 'prod' };
  expect(found).toEqual(expect.arrayContaining([
    { namespace: 'hookagent', name: 'QueueToStartLatency', unit: 'Milliseconds', value: 2000, dimensions: base },
    { namespace: 'hookagent', name: 'AgentDuration', unit: 'Milliseconds', value: 1500, dimensions: base },
    { namespace: 'hookagent', name: 'Deliveries', unit: 'Count', value: 1, dimensions: { ...base, target: 'log', outcome: 'delivered' } },
  ]));
  expect(found.filter((p) => p.name === 'AgentFailures' || p.name === 'DeadLetters')).toEqual([]);
  // Flushing again writes nothing: every point is emitted once.
  expect(await emfOf(async () => metrics.flush())).toEqual([]);
});

test('an agent failure: AgentFailures and a dead letter; a retryable one only AgentFailures', async () => {
  const metrics = memoryMetrics();
  const failed = worker(metrics, new HookError('provider_auth', 'refused'));
  expect(await processMessage(failed.body, 1, failed.deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect(failed.dead).toHaveLength(1);
  expect(metrics.points.map((p) => p.name).sort()).toEqual(['AgentFailures', 'DeadLetters', 'QueueToStartLatency']);

  const later = memoryMetrics();
  const retried = worker(later, new HookError('provider_unavailable', 'busy', { retryable: true }));
  expect(await processMessage(retried.body, 1, retried.deps)).toMatchObject({ kind: 'retry' });
  expect(later.points.map((p) => p.name).sort()).toEqual(['AgentFailures', 'QueueToStartLatency']);
  // The second attempt is not a second queue-to-start; its failure is a second agent failure.
  expect(await processMessage(retried.body, 2, retried.deps)).toMatchObject({ kind: 'retry' });
  expect(later.points.map((p) => p.name).sort()).toEqual(['AgentFailures', 'AgentFailures', 'QueueToStartLatency']);
});

test('tokens by model and kind when the record carries usage; a finished record read back is not counted again', async () => {
  const metrics = memoryMetrics();
  const clock = new ManualClock();
  const inner = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const events = observedEventLog(inner, metrics, clock);
  const record = {
    event_id: 'evt_usage', subscription: 'alerts', status: 'delivered', source: 'custom', event: 'alert', delivery_id: 'u', received_at: '2026-11-22T11:59:00.000Z',
    updated_at: '2026-11-22T12:00:00.000Z', message: {} as QueueMessage, prompt: 'p', reply: 'r', timings: { agent_ms: 900 },
    usage: { provider: 'bedrock', model: 'anthropic.claude-3-haiku', input_tokens: 1200, output_tokens: 80, steps: 2 },
    targets: { teamchat: { status: 'failed', detail: 'slack_http_500: x', at: '2026-11-22T12:00:00.000Z' } },
  } satisfies EventRecord;
  await events.putAll([record]);
  expect(metrics.points).toEqual([
    { name: 'AgentDuration', unit: 'Milliseconds', value: 900, dimensions: {} },
    { name: 'Tokens', unit: 'Count', value: 1200, dimensions: { model: 'anthropic.claude-3-haiku', kind: 'input' } },
    { name: 'Tokens', unit: 'Count', value: 80, dimensions: { model: 'anthropic.claude-3-haiku', kind: 'output' } },
    { name: 'Deliveries', unit: 'Count', value: 1, dimensions: { target: 'teamchat', outcome: 'failed' } },
  ]);
  // Another container reads it and saves it unchanged: nothing new happened.
  const fresh = memoryMetrics();
  const other = observedEventLog(inner, fresh, clock);
  const read = await other.get('evt_usage', 'alerts');
  await other.putAll([read as EventRecord]);
  expect(fresh.points).toEqual([]);
  // The other methods reach the store.
  expect((await other.getEvent('evt_usage')).map((r) => r.event_id)).toEqual(['evt_usage']);
});

test('Tokens counts each run once across retries: earlier runs are not counted again, a run as long as the last is not lost', async () => {
  const clock = new ManualClock(Date.parse('2026-11-22T12:00:02.000Z'));
  // Each model call takes `ms` on the worker's clock.
  let script: Array<[number, unknown, number]> = [];
  const llm = await startLocalServer((_req, res) => {
    const [status, body, ms] = script.shift() ?? [500, { error: { message: 'no script' } }, 0];
    clock.advance(ms);
    sendJson(res, status, body);
  });
  try {
    const usage = { prompt_tokens: 100, completion_tokens: 20 };
    const toolCall = { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] } }], usage };
    const answer = { choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Disk on db-1 is full.' } }], usage };
    const busy: [number, unknown, number] = [503, { error: { message: 'upstream overloaded' } }, 200];
    const metrics = memoryMetrics();
    const { deps, body } = worker(metrics);
    deps.clock = clock;
    deps.agent = loopAgent(openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'gpt-test' }), {}, deps.config.delivery);
    deps.config = { ...deps.config, agent: { provider: 'openai', model: 'gpt-test', timeout_ms: 5000, max_steps: 4 } };

    // Runs 1 and 2 each spend one tool round (100 in, 20 out), then the provider answers 503; both take 1700 ms.
    script = [[200, toolCall, 1500], busy];
    expect(await processMessage(body, 1, deps)).toMatchObject({ kind: 'retry' });
    script = [[200, toolCall, 1500], busy];
    expect(await processMessage(body, 2, deps)).toMatchObject({ kind: 'retry' });
    // Run 3 answers (100 in, 20 out).
    script = [[200, answer, 900]];
    expect(await processMessage(body, 3, deps)).toEqual({ kind: 'ack', status: 'delivered' });

    // The record sums the three runs, as the budget counts them.
    const record = await deps.events.get(JSON.parse(body).event_id as string, 'alerts');
    expect(record?.usage).toMatchObject({ input_tokens: 300, output_tokens: 60, steps: 3 });
    const tokens = metrics.points.filter((p) => p.name === 'Tokens');
    expect(tokens.every((p) => p.dimensions.model === 'gpt-test')).toBe(true);
    const sum = (kind: string) => tokens.filter((p) => p.dimensions.kind === kind).reduce((n, p) => n + p.value, 0);
    expect({ input: sum('input'), output: sum('output') }).toEqual({ input: 300, output: 60 });
    // One data point per run and kind, each run's own tokens; and each run's duration.
    expect(tokens.map((p) => p.value)).toEqual([100, 20, 100, 20, 100, 20]);
    expect(metrics.points.filter((p) => p.name === 'AgentDuration').map((p) => p.value)).toEqual([1700, 1700, 900]);
  } finally {
    await llm.close();
  }
});
