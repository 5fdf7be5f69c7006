/**
 * Issue 14 categories of the reliability suite, in-process over real stores (dynalite) and
 * local servers speaking the OpenAI and Telegram wire formats:
 * - copies: every message sent 3 times into the local queue, consumed by the real
 *   consumer (batches side by side): each event runs the model once and is delivered once;
 * - resume_races: ingest requests racing pause/resume cycles, with ingest's 5 s cache:
 *   no event stays held, each is queued once;
 * - oversized: bodies near the inline limit in 1- to 4-byte characters, deep objects and
 *   growing numbers: each is answered 202 and ends delivered or failed with a reason.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { logTarget } from '../../functions/core/delivery/log-target';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { QueueConsumer } from '../../functions/local/consumer';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { tempStore } from '../support/local-store';
import { createWorkerHandler } from '../../functions/worker/batch';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { ManualClock, RecordingQueue } from '../support/recording-queue';
import { eventually } from '../support/serve';
import { Tally } from './tally';

let dynamo: TestDynamo;
let llm: LocalServer;
let telegram: LocalServer;
const copies = new Tally('copies');
const races = new Tally('resume_races');
const oversized = new Tally('oversized');
const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

beforeAll(async () => {
  dynamo = await startDynalite();
  llm = await startLocalServer((req, res) => {
    const prompt = (JSON.parse(req.body) as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')?.content ?? '';
    // Answer on a later turn of the event loop, so that copies overlap for real.
    setImmediate(() => sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: `done ${/copy-\d+/.exec(prompt)?.[0]}` } }] }));
  });
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
}, 60_000);
afterAll(async () => {
  copies.flush();
  races.flush();
  oversized.flush();
  await Promise.all([llm.close(), telegram.close()]);
  await dynamo.close();
});

test('copies: 40 events sent three times each → 40 model calls, 40 Telegram messages, all delivered', async () => {
  const EVENTS = 40;
  const clock = { now: () => Date.now() };
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({ name: 'copies', events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Event {id}' });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const delivery = { timeout_ms: 5000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: '7:copies', chat_id: '-1', api_url: telegram.url } };
  const queue = new SqliteQueue(tempStore().store, { visibilityTimeoutMs: 60_000, maxReceiveCount: 10, clock });
  const handler = createWorkerHandler({
    events, subscriptions, payloads: new FilePayloadStore(join(tmp('hookagent-copies-'), 'payloads')),
    agent: loopAgent(openAiProvider({ baseUrl: llm.url, model: 'm' }), {}, delivery), skills: new SkillLibrary(tmp('hookagent-copies-skills-')),
    targets: createDeliveryTargets(delivery), config: { agent: { provider: 'openai', timeout_ms: 10_000, max_steps: 2, concurrency: 8 }, delivery },
    clock, logger: silentLogger, maxReceiveCount: 10, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
  }, {
    // Copies that found a live lease come back at once here, to keep the run short.
    changeVisibility: (record) => queue.changeVisibility(record.receiptHandle, 0),
  });
  const messages: QueueMessage[] = Array.from({ length: EVENTS }, (_, i) => ({
    v: 1, event_id: `evt_copy_${i}`, subscription: 'copies', source: 'custom', event: 'alert', delivery_id: `copy-${i}`,
    received_at: new Date().toISOString(), payload: { id: `copy-${i}` },
  }));
  // Three copies of each, interleaved, as SQS's at-least-once delivery and resumed claims produce them.
  await queue.send([...messages, ...messages, ...messages]);
  const consumer = new QueueConsumer(queue, handler, { batchSize: 10, concurrency: 3, idleCheckMs: 50, logger: silentLogger });
  consumer.start();
  try {
    await eventually(async () => (await queue.size()) === 0, 'the queue drained', 120_000);
  } finally {
    await consumer.stop(5_000);
  }
  const texts = telegram.requests.map((r) => (JSON.parse(r.body) as { text: string }).text);
  for (const message of messages) {
    await copies.check(async () => {
      expect((await events.get(message.event_id, 'copies'))?.status).toBe('delivered');
      const mark = new RegExp(`done ${String(message.payload?.id)}\\b`);
      expect(texts.filter((t) => mark.test(t))).toHaveLength(1);
    });
  }
  expect(llm.requests).toHaveLength(EVENTS);
  expect(telegram.requests).toHaveLength(EVENTS);
}, 180_000);

test('resume_races: 300 requests racing 15 pause/resume cycles through 5 s caches → none left held, each queued once', async () => {
  const clock = new ManualClock(Date.now());
  const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const leases = new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock);
  const queue = new RecordingQueue();
  await store.create({ name: 'races', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'race' });
  const lifecycle: LifecycleDeps = { subscriptions: store, events, queue, clock, leases };
  // Two ingest "containers", each with its own 5 s cache, as on AWS.
  const ingests = [0, 1].map(() => createIngest({
    config: { webhooks: { max_payload_size: 65536 } }, queue, events, clock, logger: silentLogger, leases,
    subscriptions: new SubscriptionCache(store, 5_000, clock), dedup: new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock),
    payloads: new FilePayloadStore(join(tmp('hookagent-races-'), 'payloads')),
  }));
  const answers: Array<{ status: string; event_id: string }> = [];
  const post = async (i: number) => {
    const reply = await ingests[i % 2]!({
      method: 'POST', path: '/webhooks/custom/races', isBase64Encoded: false, sourceIp: '127.0.0.1',
      headers: { authorization: 'Bearer race', 'x-request-id': `race-${i}` }, body: JSON.stringify({ i }),
    });
    answers.push(reply.body as { status: string; event_id: string });
  };
  // 60 rounds of 5 requests, each round racing a pause or a resume; the caches refresh every 5 rounds.
  for (let round = 0; round < 60; round++) {
    const racing = round < 56 ? round % 4 : -1;
    const toggle = racing === 0 ? pauseSubscription(lifecycle, 'races') : racing === 2 ? resumeSubscription(lifecycle, 'races') : Promise.resolve();
    await Promise.all([...[0, 1, 2, 3, 4].map((k) => post(round * 5 + k)), toggle]);
    clock.advance(1_000);
    // The end: paused long enough for both caches to read "paused" (round 57), then the
    // last resume, after which the caches still say "paused" for the final rounds.
    if (round === 55) {
      await pauseSubscription(lifecycle, 'races');
      clock.advance(5_000);
    }
    if (round === 57) await resumeSubscription(lifecycle, 'races');
  }
  expect(answers).toHaveLength(300);
  expect(answers.filter((a) => a.status === 'held').length).toBeGreaterThan(0);
  const held = await events.listByStatus('races', 'held');
  for (const answer of answers) {
    await races.check(() => {
      expect(['accepted', 'held']).toContain(answer.status);
      expect(held.find((r) => r.event_id === answer.event_id)).toBeUndefined();
      expect(queue.sent.filter((m) => m.event_id === answer.event_id)).toHaveLength(1);
    });
  }
}, 180_000);

test('oversized: bodies in 1- to 4-byte characters near the inline limit, deep objects, growing numbers → 202, then an outcome', async () => {
  const clock = { now: () => Date.now() };
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const payloads = new FilePayloadStore(join(tmp('hookagent-over-'), 'payloads'));
  await subscriptions.create({ name: 'over', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'over', prompt: 'Look: {text}' });
  await subscriptions.create({ name: 'over-raw', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'over' });
  const queue = new RecordingQueue();
  const ingest = createIngest({
    config: { webhooks: { max_payload_size: 1024 * 1024 } }, queue, events, payloads, clock, logger: silentLogger,
    subscriptions: new SubscriptionCache(subscriptions, 0, clock), dedup: new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock),
  });
  const deps = {
    events, payloads, subscriptions, agent: echoAgent, skills: new SkillLibrary(tmp('hookagent-over-skills-')), targets: { log: logTarget },
    config: { agent: { provider: 'echo' as const, timeout_ms: 5000, max_steps: 2 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock, logger: silentLogger, maxReceiveCount: 3, deadLetters: { send: async () => {} }, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
  };
  const bodies: string[] = [];
  for (const char of ['a', 'é', '€', '😀']) {
    for (const kb of [60, 120, 190, 400]) {
      const count = Math.floor((kb * 1024) / Buffer.byteLength(char));
      bodies.push(JSON.stringify({ text: char.repeat(count) }));
    }
  }
  bodies.push(`${'{"text":'.repeat(3000)}"deep"${'}'.repeat(3000)}`, `${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}`);
  bodies.push(`{"text":[${Array.from({ length: 30_000 }, () => '1e20').join(',')}]}`, `{"text":${'9'.repeat(300)}e300}`);
  for (const [index, body] of bodies.entries()) {
    for (const name of ['over', 'over-raw']) {
      await oversized.check(async () => {
        const before = queue.sent.length;
        const reply = await ingest({
          method: 'POST', path: `/webhooks/custom/${name}`, isBase64Encoded: false, sourceIp: '127.0.0.1',
          headers: { authorization: 'Bearer over', 'x-request-id': `over-${name}-${index}` }, body,
        });
        expect(reply.status).toBe(202);
        const message = queue.sent[before] as QueueMessage;
        const outcome = await processMessage(JSON.stringify(message), 1, deps);
        expect(outcome.kind).toBe('ack');
        const record = await events.get(message.event_id, name);
        expect(['delivered', 'failed']).toContain(record?.status);
        if (record?.status === 'failed') expect(record.error?.message).toBeTruthy();
      });
    }
  }
}, 180_000);
