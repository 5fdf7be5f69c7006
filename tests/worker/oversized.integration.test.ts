/**
 * Issue 14 items 5 and 6, from the HTTP request to the record: bodies whose record would
 * pass DynamoDB's 400 KB item limit (sizes in UTF-8 bytes), and valid JSON that cannot be
 * re-serialised safely (5,000 levels deep; `1e20` that grows when printed again), are
 * answered 202 and end delivered or failed with a reason, never 503 for ever nor stuck
 * `processing`. Stores are the DynamoDB adapters on dynalite, which enforces the item limit.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import { processMessage } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { RecordingQueue } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

const SECRET = 'big-secret';
let counter = 0;

/** Posts `body` to a fresh custom subscription, then runs the worker on what was queued. */
async function throughService(body: string, prompt?: string) {
  counter += 1;
  const name = `big${counter}`;
  const clock = { now: () => Date.now() };
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({ name, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: SECRET, ...(prompt ? { prompt } : {}) });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const payloads = new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-big-')), 'payloads'));
  const queue = new RecordingQueue();
  const ingest = createIngest({
    config: { webhooks: { max_payload_size: 1024 * 1024 } }, queue, events, payloads, clock, logger: silentLogger,
    subscriptions: new SubscriptionCache(subscriptions, 0, clock), dedup: new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock),
  });
  const reply = await ingest({
    method: 'POST', path: `/webhooks/custom/${name}`, isBase64Encoded: false, sourceIp: '127.0.0.1',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' }, body,
  });
  const outcomes = [];
  for (const message of queue.sent) {
    outcomes.push(await processMessage(JSON.stringify(message), 1, {
      events, payloads, subscriptions, agent: echoAgent, skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-big-skills-'))),
      targets: { log: logTarget }, config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 2 }, delivery: { timeout_ms: 1000, codehost: {} } },
      clock, logger: silentLogger, maxReceiveCount: 3, deadLetters: { send: async () => {} },
      leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
    }));
  }
  const eventId = (reply.body as { event_id?: string }).event_id;
  const record = eventId ? await events.get(eventId, name) : undefined;
  return { reply, outcomes, record };
}

test('(5) 60,000 three-byte characters: delivered, the stored prompt and reply cut with a note, the record under 400 KB', async () => {
  const body = JSON.stringify({ text: '€'.repeat(60_000) });
  expect(Buffer.byteLength(body)).toBeGreaterThan(180_000);
  const { reply, outcomes, record } = await throughService(body, 'Summarise: {text}');
  expect(reply.status).toBe(202);
  expect(outcomes).toEqual([{ kind: 'ack', status: 'delivered' }]);
  expect(record?.status).toBe('delivered');
  expect(record?.reply).toMatch(/…\[cut: \d+ more bytes not stored\]$/);
  expect(record?.prompt).toMatch(/…\[cut: \d+ more bytes not stored\]$/);
  expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThan(400 * 1024);
});

test('(5) a 150 KB ASCII payload printed whole by the default prompt: delivered, never stuck processing', async () => {
  const body = JSON.stringify({ lines: Array.from({ length: 1500 }, (_, i) => `line ${i} ${'x'.repeat(90)}`) });
  const { reply, outcomes, record } = await throughService(body);
  expect(reply.status).toBe(202);
  expect(outcomes).toEqual([{ kind: 'ack', status: 'delivered' }]);
  expect(record?.status).toBe('delivered');
});

test('(6) a valid 5,000-deep object: 202, then processed to an outcome with a reason', async () => {
  const body = `${'{"a":'.repeat(5000)}"bottom"${'}'.repeat(5000)}`;
  const rendered = await throughService(body, 'A deep event arrived ({event_type})');
  expect(rendered.reply.status).toBe(202);
  expect(rendered.outcomes).toEqual([{ kind: 'ack', status: 'delivered' }]);
  // Without a prompt the payload is printed, as far as the prompt's 4,000 characters go:
  // the printing stops there, long before the depth could overflow the stack.
  const whole = await throughService(body);
  expect(whole.reply.status).toBe(202);
  expect(whole.outcomes).toEqual([{ kind: 'ack', status: 'delivered' }]);
  expect(whole.record?.prompt).toMatch(/^Event: [\s\S]*\{\n {2}"a": \{[\s\S]*…\[truncated\]$/);
});

test('(6) numbers that grow when re-serialised (1e20): 202, the raw bytes kept, delivered', async () => {
  const body = `{"values":[${Array.from({ length: 38_000 }, () => '1e20').join(',')}]}`;
  expect(Buffer.byteLength(body)).toBeLessThan(200 * 1024);
  const { reply, outcomes, record } = await throughService(body, 'First value {values.0}');
  expect(reply.status).toBe(202);
  expect(outcomes).toEqual([{ kind: 'ack', status: 'delivered' }]);
  expect(record?.message.payload_ref).toBeDefined();
  expect(record?.reply).toBe('First value 100000000000000000000');
});
