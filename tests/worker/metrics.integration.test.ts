/**
 * Issue 20: the worker's metrics. A real worker run (processMessage over dynalite) through the
 * observing event log, flushed by the EMF adapter (Powertools Metrics) to stdout, read back
 * as CloudWatch Embedded Metric Format documents.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emfMetrics } from '../../functions/aws/emf-metrics';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { Agent } from '../../functions/core/agent/agent';
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
