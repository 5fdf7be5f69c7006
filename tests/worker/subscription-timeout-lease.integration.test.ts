/**
 * A subscription's own `--timeout` (longer than config.yaml's agent.timeout) sizes the
 * worker lease and the Lambda's time-left check (hunt 9, AWS). Before, both used
 * agent.timeout only: a copy of the message arriving while an allowed 270 s run was still
 * going took the lease over and ran the agent a second time, and a 270 s run was started
 * with 100 s left in the invocation. Over dynalite, with the real DynamoDB adapters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { Agent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type MessageOutcome, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
const dirs: string[] = [];
afterAll(async () => {
  await dynamo.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('a copy arriving during a long run of a subscription with --timeout 270s does not run the agent again', async () => {
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({
    name: 'slow-review', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', prompt: 'review {number}',
    // `webhook subscribe … --timeout 270s`: allowed on AWS (300 s less 3 × delivery.timeout).
    timeout_ms: 270_000,
    created_at: '2026-11-24T00:00:00Z', updated_at: '2026-11-24T00:00:00Z', secret: 'whsec_x',
  });
  const clock = new ManualClock();
  const configDir = mkdtempSync(join(tmpdir(), 'sub-timeout-lease-'));
  dirs.push(configDir);
  let runs = 0;
  let secondCopy: MessageOutcome | undefined;
  const message: QueueMessage = {
    v: 1, event_id: 'evt_long_1', subscription: 'slow-review', source: 'github', event: 'pull_request', action: 'opened',
    delivery_id: 'd-long-1', received_at: new Date(clock.now()).toISOString(), payload: { number: 7 },
  };
  const body = JSON.stringify(message);
  const deps: WorkerDeps = {
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), subscriptions,
    payloads: new FilePayloadStore(join(configDir, 'payloads')), skills: new SkillLibrary(configDir), targets: { log: logTarget },
    // config.yaml: agent.timeout 30s (default-ish), delivery.timeout 10s.
    config: { agent: { provider: 'echo', timeout_ms: 30_000, max_steps: 4 }, delivery: { timeout_ms: 10_000, codehost: {} } },
    clock, logger: silentLogger, maxReceiveCount: 5,
    leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
    agent: undefined as unknown as Agent,
  };
  deps.agent = {
    run: async (input) => {
      runs += 1;
      expect(input.timeoutMs).toBe(270_000);
      if (runs === 1) {
        // 200 s into a run the subscription allows 270 s for, SQS hands another copy of the
        // message to another worker (at-least-once delivery, or ingest's crash window row 2).
        clock.advance(200_000);
        secondCopy = await processMessage(body, 1, deps);
      }
      return { text: `reply ${runs}`, steps: 1, refusedTools: [] };
    },
  };
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  // The second copy must find the first one's lease and be retried later, not run the agent beside it.
  expect(secondCopy).toEqual({ kind: 'retry', reason: 'another copy of this message is being processed' });
  expect(runs).toBe(1);
});

test("the time-left check uses the subscription's --timeout too: a 270 s run is not started with 100 s left in the invocation", async () => {
  const { createWorkerHandler } = await import('../../functions/worker/batch');
  const { toSqsRecord } = await import('../../functions/local/consumer');
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({
    name: 'slow-late', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', prompt: 'review {number}', timeout_ms: 270_000,
    created_at: '2026-11-24T00:00:00Z', updated_at: '2026-11-24T00:00:00Z', secret: 'whsec_x',
  });
  const clock = new ManualClock();
  const configDir = mkdtempSync(join(tmpdir(), 'sub-timeout-late-'));
  dirs.push(configDir);
  let runs = 0;
  const deps: WorkerDeps = {
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), subscriptions,
    payloads: new FilePayloadStore(join(configDir, 'payloads')), skills: new SkillLibrary(configDir), targets: { log: logTarget },
    config: { agent: { provider: 'echo', timeout_ms: 30_000, max_steps: 4 }, delivery: { timeout_ms: 10_000, codehost: {} } },
    clock, logger: silentLogger, maxReceiveCount: 5, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
    agent: { run: async () => { runs += 1; return { text: 'reply', steps: 1, refusedTools: [] }; } },
  };
  const message: QueueMessage = {
    v: 1, event_id: 'evt_late_1', subscription: 'slow-late', source: 'github', event: 'pull_request', action: 'opened',
    delivery_id: 'd-late-1', received_at: new Date(clock.now()).toISOString(), payload: { number: 8 },
  };
  const event = { Records: [toSqsRecord({ messageId: 'm-late-1', receiptHandle: 'rh-late-1', body: JSON.stringify(message), receiveCount: 1, sentAt: clock.now() }, 'arn:aws:sqs:eu-west-1:0:hookagent-test-queue')] };
  // 100 s left: enough for config.yaml's 30 s + 3 × 10 s, not for this subscription's 270 s + 3 × 10 s.
  const handler = createWorkerHandler(deps, { sleep: async () => undefined, remainingMs: () => 100_000 });
  const response = await handler(event);
  expect(runs).toBe(0);
  expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-late-1' }]);
});
