/**
 * Issue 14, through queue messages: SQS batches into the worker handler over real stores
 * (dynalite), a local OpenAI-compatible server and a local Telegram/Slack API.
 * Copies of one message run once (worker lease); permanent failures always reach the
 * dead-letter queue; retries are paced (ChangeMessageVisibility; a short Retry-After is
 * waited out in-process); agent runs are bounded by `agent.concurrency`.
 */
import type { SQSEvent } from 'aws-lambda';
import { mkdtempSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { toSqsRecord } from '../../functions/local/consumer';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { tempStore } from '../support/local-store';
import { createWorkerHandler, type WorkerHandlerOptions } from '../../functions/worker/batch';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from '../support/local-http';
import { ManualClock } from '../support/recording-queue';
import { eventually } from '../support/serve';

let dynamo: TestDynamo;
let llm: LocalServer;
let telegram: LocalServer;
/** How the model server answers the next calls; default: a completion echoing nothing special. */
let llmScript: Array<(req: Recorded, res: ServerResponse) => void> = [];
let inFlight = 0;
let maxInFlight = 0;
/** When set, the model server holds each answer until the test releases it. */
let held: Array<() => void> | undefined;

const completion = (text: string) => ({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] });

beforeAll(async () => {
  dynamo = await startDynalite();
  llm = await startLocalServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const answer = () => {
      inFlight -= 1;
      const scripted = llmScript.shift();
      if (scripted) return scripted(req, res);
      sendJson(res, 200, completion(`Reviewed: ${(JSON.parse(req.body) as { messages: Array<{ content: string }> }).messages.at(-1)?.content.length} chars`));
    };
    if (held) held.push(answer);
    else answer();
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
});
afterAll(async () => {
  await llm.close();
  await telegram.close();
  await dynamo.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  telegram.requests.length = 0;
  llmScript = [];
  inFlight = 0;
  maxInFlight = 0;
  held = undefined;
});

let counter = 0;
async function setup(overrides: Partial<WorkerDeps> = {}, concurrency?: number) {
  counter += 1;
  const name = `w${counter}`;
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({ name, events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alert}' });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const delivery = { timeout_ms: 2000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: '42:test', chat_id: '-100', api_url: telegram.url } };
  const logs: string[] = [];
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-wd-')), 'payloads')),
    agent: loopAgent(openAiProvider({ baseUrl: llm.url, model: 'gpt-test', apiKey: 'sk-test' }), {}, delivery),
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'openai', timeout_ms: 5000, max_steps: 2, ...(concurrency ? { concurrency } : {}) }, delivery },
    clock: { now: () => Date.now() }, logger: jsonLogger((l) => logs.push(l)), maxReceiveCount: 3,
    leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, { now: () => Date.now() }), ...overrides,
  };
  const message = (i = 0): QueueMessage => ({
    v: 1, event_id: `evt_wd_${counter}_${i}`, subscription: name, source: 'custom', event: 'alert', delivery_id: `d${counter}_${i}`,
    received_at: new Date().toISOString(), payload: { alert: `disk ${i}` },
  });
  return { deps, events, name, message, logs };
}

const sqs = (bodies: Array<{ id: string; body: string; receiveCount?: number }>): SQSEvent => ({
  Records: bodies.map((b) => toSqsRecord({ messageId: b.id, receiptHandle: `rh-${b.id}`, body: b.body, receiveCount: b.receiveCount ?? 1, sentAt: Date.now() }, 'arn:aws:sqs:local:0:q')),
});

describe('worker lease (issue 14 item 1)', () => {
  test('two copies of one message in flight together → one model call, one Telegram message', async () => {
    const { deps, events, message } = await setup();
    const body = JSON.stringify(message());
    held = [];
    const visibility: number[] = [];
    const handler = createWorkerHandler(deps, { changeVisibility: async (_r, s) => void visibility.push(s), random: () => 0.5 });
    const answer = handler(sqs([{ id: 'copy-1', body }, { id: 'copy-2', body }]));
    // The first copy reaches the model; the second finds the lease and gives its copy back.
    await eventually(() => held!.length === 1, 'the first copy at the model');
    held.shift()!();
    held = undefined;
    const result = await answer;
    expect(llm.requests).toHaveLength(1);
    expect(telegram.requests).toHaveLength(1);
    expect(result.batchItemFailures).toHaveLength(1);
    expect(visibility).toEqual([30]);
    // The copy that was given back comes again later and finds the work done.
    const later = await handler(sqs([{ id: result.batchItemFailures[0]!.itemIdentifier, body, receiveCount: 2 }]));
    expect(later.batchItemFailures).toEqual([]);
    expect(llm.requests).toHaveLength(1);
    expect(telegram.requests).toHaveLength(1);
    expect((await events.get(message().event_id, message().subscription))?.status).toBe('delivered');
  });

  test('an expired lease (its holder died) is taken over; a live one is not', async () => {
    const clock = new ManualClock(Date.now());
    const leases = new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock);
    const { deps, message } = await setup({ leases, clock, leaseMs: 60_000 });
    const body = JSON.stringify(message());
    expect(await leases.acquire(message().event_id, message().subscription, 'a-dead-worker', 60_000)).toBe(true);
    expect(await processMessage(body, 1, deps)).toEqual({ kind: 'retry', reason: 'another copy of this message is being processed' });
    expect(llm.requests).toHaveLength(0);
    clock.advance(60_001);
    expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(llm.requests).toHaveLength(1);
    expect(telegram.requests).toHaveLength(1);
    // Released when done: the dead holder cannot give it up, and the next copy takes it at once.
    await leases.release(message().event_id, message().subscription, 'a-dead-worker');
    expect(await leases.acquire(message().event_id, message().subscription, 'next', 1000)).toBe(true);
  });
});

describe('dead letters (issue 14 item 2)', () => {
  async function localQueue() {
    // A fresh SQLite store per test: the local queue as serve has it.
    return new SqliteQueue(tempStore().store, { visibilityTimeoutMs: 60_000, maxReceiveCount: 3, clock: { now: () => Date.now() } });
  }

  /** Feeds the handler from the local queue as `serve` does, until the queue is empty. */
  async function drain(queue: SqliteQueue, handler: ReturnType<typeof createWorkerHandler>) {
    for (let round = 0; round < 10 && (await queue.size()) > 0; round++) {
      const batch = await queue.receive(10);
      const response = await handler({ Records: batch.map((m) => toSqsRecord(m, 'arn:aws:sqs:local:0:q')) });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const m of batch) {
        if (failed.has(m.messageId)) await queue.changeVisibility(m.receiptHandle, 0);
        else await queue.delete(m.receiptHandle);
      }
    }
  }

  test('without a dead-letter sink, a permanently failed message is left to the redrive and lands in the dead-letter table', async () => {
    llmScript = [(_q, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } })];
    const { deps, events, message } = await setup({ deadLetters: undefined });
    const queue = await localQueue();
    await queue.send([message()]);
    await drain(queue, createWorkerHandler(deps));
    expect(await queue.size()).toBe(0);
    const dead = await queue.deadLetters();
    expect(dead.map((d) => (JSON.parse(d.body) as QueueMessage).event_id)).toEqual([message().event_id]);
    expect(await events.get(message().event_id, message().subscription)).toMatchObject({ status: 'failed', error: { code: 'provider_auth', message: expect.stringContaining('Incorrect API key') } });
    expect(llm.requests).toHaveLength(1);
  });

  test('a dead-letter queue that is briefly down: the redelivery dead-letters the failed record, once', async () => {
    llmScript = [(_q, res) => sendJson(res, 404, { error: { message: 'The model gpt-test does not exist' } })];
    const sent: Array<{ body: string; reason: string }> = [];
    let down = true;
    const { deps, events, message } = await setup({
      deadLetters: {
        send: async (body, reason) => {
          if (down) {
            down = false;
            throw new Error('dead-letter queue unavailable');
          }
          sent.push({ body, reason });
        },
      },
    });
    const queue = await localQueue();
    await queue.send([message()]);
    await drain(queue, createWorkerHandler(deps));
    expect(await queue.size()).toBe(0);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.reason).toMatch(/^provider_model: .*does not exist/);
    expect(await events.get(message().event_id, message().subscription)).toMatchObject({ status: 'failed', dead_lettered_at: expect.any(String) });
  });
});

describe('paced retries (issue 14 item 10)', () => {
  test('a retryable failure comes back after the schedule: 30 s × 2^(receive−1), a longer Retry-After wins', async () => {
    const { deps, message } = await setup();
    const visibility: Array<[string, number]> = [];
    const options: WorkerHandlerOptions = { changeVisibility: async (r, s) => void visibility.push([r.messageId, s]), random: () => 0.5 };
    const handler = createWorkerHandler(deps, options);
    const make = (i: number) => JSON.stringify(message(i));
    llmScript = [(_q, res) => sendJson(res, 500, { error: { message: 'overloaded' } })];
    await handler(sqs([{ id: 'a', body: make(1), receiveCount: 1 }]));
    llmScript = [(_q, res) => sendJson(res, 503, { error: { message: 'overloaded' } })];
    await handler(sqs([{ id: 'b', body: make(2), receiveCount: 2 }]));
    llmScript = [(_q, res) => sendJson(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '600' })];
    await handler(sqs([{ id: 'c', body: make(3), receiveCount: 1 }]));
    expect(visibility).toEqual([['a', 30], ['b', 60], ['c', 600]]);
  });

  test('Slack answering 429 Retry-After: 120: the message comes back after 120 s, not 30 s', async () => {
    const slack = await startLocalServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '120' }).end('rate_limited');
    });
    try {
      const delivery = { timeout_ms: 2000, codehost: {}, teamchat: { provider: 'slack' as const, webhook_url: `${slack.url}/services/T/B/x`, api_url: slack.url } };
      const { deps, events, message, name } = await setup();
      await deps.subscriptions.put({ ...(await deps.subscriptions.get(name))!, deliver: ['teamchat'] });
      const visibility: number[] = [];
      const handler = createWorkerHandler({ ...deps, targets: createDeliveryTargets(delivery), config: { ...deps.config, delivery } }, { changeVisibility: async (_r, s) => void visibility.push(s), random: () => 0.5 });
      const result = await handler(sqs([{ id: 's', body: JSON.stringify(message(1)) }]));
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 's' }]);
      expect(visibility).toEqual([120]);
      expect(await events.get(message(1).event_id, name)).toMatchObject({ status: 'queued', error: { code: 'rate_limited' } });
    } finally {
      await slack.close();
    }
  });

  test('a model answering 429 Retry-After: 2 once is waited out in-process and delivered', async () => {
    const { deps, events, message: make } = await setup();
    const slept: number[] = [];
    const visibility: number[] = [];
    const handler = createWorkerHandler(deps, { changeVisibility: async (_r, s) => void visibility.push(s), sleep: async (ms) => void slept.push(ms) });
    llmScript = [(_q, res) => sendJson(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '2' })];
    const message = make(1);
    const result = await handler(sqs([{ id: 'x', body: JSON.stringify(message) }]));
    expect(result.batchItemFailures).toEqual([]);
    expect(slept).toEqual([2000]);
    expect(visibility).toEqual([]);
    expect(llm.requests).toHaveLength(2);
    expect(telegram.requests).toHaveLength(1);
    expect((await events.get(message.event_id, message.subscription))?.status).toBe('delivered');
  });
});

describe('a real concurrency bound (issue 14 item 11)', () => {
  test('on Lambda, a message whose turn comes too late to finish is given back at once, not started', async () => {
    const { deps, message, events } = await setup({}, 1);
    const visibility: Array<[string, number]> = [];
    const handler = createWorkerHandler(deps, {
      changeVisibility: async (r, s) => void visibility.push([r.messageId, s]),
      // Plenty of time for the first run; none left once it is done.
      remainingMs: () => (llm.requests.length === 0 ? 300_000 : 1_000),
    });
    const result = await handler(sqs([{ id: 'first', body: JSON.stringify(message(0)) }, { id: 'second', body: JSON.stringify(message(1)) }]));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'second' }]);
    expect(visibility).toEqual([['second', 0]]);
    expect(llm.requests).toHaveLength(1);
    expect(await events.get(message(1).event_id, message(1).subscription)).toBeUndefined();
  });

  test('20 queued events with agent.concurrency 3: never more than 3 model calls in flight, all delivered', async () => {
    const { deps, message } = await setup({}, 3);
    const handler = createWorkerHandler(deps);
    held = [];
    const bodies = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, body: JSON.stringify(message(i)) }));
    // Two batches of 10 side by side, as `serve` and Lambda run them.
    const answers = Promise.all([handler(sqs(bodies.slice(0, 10))), handler(sqs(bodies.slice(10)))]);
    for (let released = 0; released < 20; released++) {
      await eventually(() => held!.length === Math.min(3, 20 - released), `${Math.min(3, 20 - released)} calls at the model`);
      expect(inFlight).toBeLessThanOrEqual(3);
      held.shift()!();
    }
    const results = await answers;
    expect(results.flatMap((r) => r.batchItemFailures)).toEqual([]);
    expect(maxInFlight).toBe(3);
    expect(llm.requests).toHaveLength(20);
    expect(telegram.requests).toHaveLength(20);
  });
});

