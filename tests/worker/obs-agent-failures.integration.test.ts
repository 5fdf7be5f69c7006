/**
 * Hunt 12 (observability D1): AgentFailures is "an agent run that ended in an error"
 * (metrics.ts), so each failed run counts once. The start of a retry (written `processing`
 * while the record still holds the last attempt's error), or an attempt that ends without
 * an error of its own (superseded by a later event), is no failure. The real processMessage
 * over dynalite, through observedEventLog with memoryMetrics.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDebounceStore } from '../../functions/aws/debounce-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { Agent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { HookError } from '../../functions/core/errors';
import { newEventId } from '../../functions/core/ids';
import { silentLogger } from '../../functions/core/log';
import { memoryMetrics } from '../../functions/core/metrics/metrics';
import { countedDeadLetters, observedEventLog } from '../../functions/core/metrics/observed-event-log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
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

const ARRIVED = Date.parse('2026-11-22T12:00:00.000Z');

/** A worker whose agent runs follow `script`: a HookError is thrown, a string answered. */
function worker(script: Array<HookError | string>) {
  const metrics = memoryMetrics();
  const clock = new ManualClock(ARRIVED + 2000);
  const configDir = mkdtempSync(join(tmpdir(), 'hookagent-obs-failures-'));
  const agent: Agent = {
    async run() {
      clock.advance(100);
      const next = script.shift();
      if (next instanceof HookError) throw next;
      return { text: next ?? 'ok', steps: 1, refusedTools: [] };
    },
  };
  const debounce = new DynamoDebounceStore(dynamo.client, dynamo.tables.dedup, clock);
  const deps: WorkerDeps = {
    events: observedEventLog(new DynamoEventLog(dynamo.client, dynamo.tables.events), metrics, clock),
    subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    payloads: new FilePayloadStore(join(configDir, 'payloads')), agent, skills: new SkillLibrary(configDir),
    targets: { log: logTarget }, config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock, logger: silentLogger, maxReceiveCount: 3, deadLetters: countedDeadLetters({ send: async () => undefined }, metrics), debounce,
  };
  const eventId = newEventId(ARRIVED);
  const message: QueueMessage = {
    v: 1, event_id: eventId, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: eventId, subject_key: `custom:alerts:${eventId}`,
    received_at: new Date(ARRIVED).toISOString(), payload: { alertname: 'DiskFull' },
  };
  const failures = () => metrics.points.filter((p) => p.name === 'AgentFailures').length;
  return { deps, debounce, message, body: JSON.stringify(message), failures };
}

const busy = () => new HookError('provider_unavailable', 'The model provider answered 503: overloaded', { retryable: true });

test('a failed run, then a retry that succeeds: one AgentFailure (the retry starting is none)', async () => {
  const w = worker([busy(), 'Disk on db-1 is full.']);
  expect(await processMessage(w.body, 1, w.deps)).toMatchObject({ kind: 'retry' });
  expect(w.failures()).toBe(1);
  expect(await processMessage(w.body, 2, w.deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect(w.failures()).toBe(1);
});

test('three failed runs, the last on the last receive: three AgentFailures', async () => {
  const w = worker([busy(), busy(), busy()]);
  for (const receive of [1, 2]) {
    expect(await processMessage(w.body, receive, w.deps)).toMatchObject({ kind: 'retry' });
    expect(w.failures()).toBe(receive);
  }
  expect(await processMessage(w.body, 3, w.deps)).toMatchObject({ kind: 'retry', reason: expect.stringMatching(/^gave up after 3 attempts/) });
  expect(w.failures()).toBe(3);
});

test('a failed run, then the retry superseded by a later event of its subject: one AgentFailure', async () => {
  const w = worker([busy()]);
  expect(await processMessage(w.body, 1, w.deps)).toMatchObject({ kind: 'retry' });
  await w.debounce.setLatest('alerts', w.message.subject_key as string, newEventId(ARRIVED + 1000), 60);
  expect(await processMessage(w.body, 2, w.deps)).toEqual({ kind: 'ack', status: 'superseded' });
  expect(w.failures()).toBe(1);
});
