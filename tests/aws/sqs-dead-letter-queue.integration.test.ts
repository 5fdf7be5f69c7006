/**
 * Hunt 3, D12: `webhook dead-letters` showed the dead-letter queue's ApproximateReceiveCount
 * as RECEIVES, and listing receives every letter, so each listing added one. RECEIVES is
 * the worker's receives of the message:
 * - a letter the queue's redrive policy moved: SQS counts receives "across all queues", so
 *   the DLQ's count is the source queue's maxReceiveCount plus the listings'; the adapter
 *   answers the policy's maxReceiveCount (read from the source queue);
 * - a letter the worker sent itself carries the receive it failed on (`receive_count`);
 * - a letter an older worker sent without it: at least 1, whatever the listings did.
 *
 * Against an SQS stand-in on 127.0.0.1 that keeps what SQS keeps: receive counts across
 * queues, message attributes, the redrive move with its DeadLetterQueueSourceArn.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SqsDeadLetters } from '../../functions/aws/dead-letters';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { SqsDeadLetterQueue } from '../../functions/aws/sqs-dead-letter-queue';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { silentLogger } from '../../functions/core/log';
import { memoryMetrics } from '../../functions/core/metrics/metrics';
import { countedDeadLetters } from '../../functions/core/metrics/observed-event-log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

interface Stored { id: string; body: string; attributes: Record<string, { DataType: string; StringValue: string }>; sentAt: number; receives: number; visibleAt: number; handle?: string; sourceArn?: string }
interface Queue { arn: string; messages: Stored[]; redrive?: { target: string; maxReceiveCount: number } }

/** The SQS behaviour the dead-letter listing depends on (JSON protocol). */
function sqsStandIn(queues: Map<string, Queue>) {
  return async (req: { headers: Record<string, unknown>; body: string }, res: import('node:http').ServerResponse) => {
    const op = String(req.headers['x-amz-target']).replace('AmazonSQS.', '');
    const input = JSON.parse(req.body || '{}') as Record<string, any>;
    const name = String(input.QueueUrl ?? '').split('/').pop() ?? '';
    const queue = queues.get(name);
    if (!queue) return sendJson(res, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' });
    const now = Date.now();
    if (op === 'SendMessage') {
      const id = randomUUID();
      queue.messages.push({ id, body: input.MessageBody, attributes: input.MessageAttributes ?? {}, sentAt: now, receives: 0, visibleAt: 0 });
      return sendJson(res, 200, { MessageId: id, MD5OfMessageBody: createHash('md5').update(input.MessageBody).digest('hex') });
    }
    if (op === 'GetQueueAttributes') {
      return sendJson(res, 200, { Attributes: { QueueArn: queue.arn, ...(queue.redrive ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: queues.get(queue.redrive.target)!.arn, maxReceiveCount: queue.redrive.maxReceiveCount }) } : {}) } });
    }
    if (op === 'ReceiveMessage') {
      const out: unknown[] = [];
      for (const m of [...queue.messages]) {
        if (out.length >= (input.MaxNumberOfMessages ?? 1) || m.visibleAt > now) continue;
        // The redrive: a message received maxReceiveCount times moves, its count and attributes with it.
        if (queue.redrive && m.receives >= queue.redrive.maxReceiveCount) {
          queue.messages.splice(queue.messages.indexOf(m), 1);
          queues.get(queue.redrive.target)!.messages.push({ ...m, visibleAt: 0, sourceArn: queue.arn });
          continue;
        }
        m.receives += 1;
        m.handle = randomUUID();
        m.visibleAt = now + 1000 * (input.VisibilityTimeout ?? 30);
        const wanted = new Set<string>([...(input.MessageSystemAttributeNames ?? []), ...(input.AttributeNames ?? [])]);
        const system: Record<string, string> = { ApproximateReceiveCount: String(m.receives), SentTimestamp: String(m.sentAt), ...(m.sourceArn ? { DeadLetterQueueSourceArn: m.sourceArn } : {}) };
        const names = new Set<string>(input.MessageAttributeNames ?? []);
        const attributes = Object.fromEntries(Object.entries(m.attributes).filter(([k]) => names.has('All') || names.has(k)));
        out.push({
          MessageId: m.id, ReceiptHandle: m.handle, Body: m.body, MD5OfBody: createHash('md5').update(m.body).digest('hex'),
          Attributes: Object.fromEntries(Object.entries(system).filter(([k]) => wanted.has('All') || wanted.has(k))),
          ...(Object.keys(attributes).length ? { MessageAttributes: attributes } : {}),
        });
      }
      return sendJson(res, 200, { Messages: out });
    }
    if (op === 'ChangeMessageVisibilityBatch') {
      for (const e of input.Entries) for (const m of queue.messages) if (m.handle === e.ReceiptHandle) m.visibleAt = now + 1000 * e.VisibilityTimeout;
      return sendJson(res, 200, { Successful: input.Entries.map((e: { Id: string }) => ({ Id: e.Id })), Failed: [] });
    }
    if (op === 'DeleteMessage') {
      queue.messages = queue.messages.filter((m) => m.handle !== input.ReceiptHandle);
      return sendJson(res, 200, {});
    }
    sendJson(res, 400, { __type: 'UnknownOperationException', message: `the stand-in does not speak ${op}` });
  };
}

let sqs: LocalServer;
let client: SQSClient;
let dynamo: TestDynamo;
const queues = new Map<string, Queue>();
const url = (name: string) => `${sqs.url}/123456789012/${name}`;

beforeAll(async () => {
  sqs = await startLocalServer((req, res) => sqsStandIn(queues)(req, res));
  client = new SQSClient({ endpoint: sqs.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1 });
  dynamo = await startDynalite('prod');
});
afterAll(async () => {
  client.destroy();
  await Promise.all([sqs.close(), dynamo.close()]);
});
beforeEach(() => {
  queues.clear();
  queues.set('hookagent-prod-dead-letters', { arn: 'arn:aws:sqs:eu-west-1:123456789012:hookagent-prod-dead-letters', messages: [] });
  // Deployed with 3, not the CLI's default of 5: the listing reads the policy.
  queues.set('hookagent-prod-queue', { arn: 'arn:aws:sqs:eu-west-1:123456789012:hookagent-prod-queue', messages: [], redrive: { target: 'hookagent-prod-dead-letters', maxReceiveCount: 3 } });
});

const message = (id: string, subscription = 'alerts'): QueueMessage => ({ v: 1, event_id: id, subscription, source: 'custom', event: 'alert', delivery_id: id, received_at: '2026-11-22T12:00:00.000Z', payload: { n: 1 } });
const dlq = () => new SqsDeadLetterQueue(client, url('hookagent-prod-dead-letters'), url('hookagent-prod-queue'));
const receives = async () => (await dlq().list()).map((l) => [l.event_id ?? l.id, l.receive_count, l.reason]);

test("a letter the queue's redrive moved: RECEIVES is the policy's maxReceiveCount, however often it is listed", async () => {
  await client.send(new SendMessageCommand({ QueueUrl: url('hookagent-prod-queue'), MessageBody: JSON.stringify(message('evt_loop_1')) }));
  // The worker's receives, each given back (a Lambda timeout): the fourth finds it moved.
  for (let i = 0; i < 4; i += 1) await client.send(new ReceiveMessageCommand({ QueueUrl: url('hookagent-prod-queue'), VisibilityTimeout: 0 }));
  expect(queues.get('hookagent-prod-dead-letters')!.messages.map((m) => m.receives)).toEqual([3]);
  const first = await receives();
  const second = await receives();
  expect([first, second]).toEqual([[['evt_loop_1', 3, 'the queue gave up after 3 receives']], [['evt_loop_1', 3, 'the queue gave up after 3 receives']]]);
});

test('a letter the worker dead-lettered: RECEIVES is the receive it failed on, whatever the listings did', async () => {
  const configDir = mkdtempSync(join(tmpdir(), 'hookagent-dlq-'));
  const deps: WorkerDeps = {
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    payloads: new FilePayloadStore(join(configDir, 'payloads')), agent: { run: async () => { throw new Error('not reached: the subscription is gone'); } },
    skills: new SkillLibrary(configDir), targets: {}, config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: systemClock, logger: silentLogger, maxReceiveCount: 3,
    // As compose-worker.ts wires it.
    deadLetters: countedDeadLetters(new SqsDeadLetters(client, url('hookagent-prod-dead-letters')), memoryMetrics()),
  };
  // No subscription 'ghost': a final failure, dead-lettered on its second receive.
  expect(await processMessage(JSON.stringify(message('evt_ghost_1', 'ghost')), 2, deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect(await processMessage('{not a message', 1, deps)).toEqual({ kind: 'ack', status: 'malformed' });
  for (let i = 0; i < 3; i += 1) {
    expect((await receives()).map(([id, count]) => [id, count])).toEqual([['evt_ghost_1', 2], [expect.any(String), 1]]);
  }
  expect((await dlq().list())[0]!.reason).toMatch(/^subscription_not_found: /);
});

test("a letter an older worker sent (no receive count recorded): at least 1, not the listings' receives", async () => {
  await client.send(new SendMessageCommand({
    QueueUrl: url('hookagent-prod-dead-letters'), MessageBody: JSON.stringify(message('evt_old_1')),
    MessageAttributes: { reason: { DataType: 'String', StringValue: 'provider_auth: refused' } },
  }));
  expect([await receives(), await receives(), await receives()]).toEqual(Array.from({ length: 3 }, () => [['evt_old_1', 1, 'provider_auth: refused']]));
});

/**
 * Fix 6: DEAD AT of a letter the queue's redrive moved was its SentTimestamp, which SQS keeps
 * from the original send (standard queues: "the enqueue timestamp is unchanged"), and no
 * message system attribute tells when the move happened. Such a letter carries that time
 * as `queued_at`, without a `dead_at`; a letter the worker sent itself keeps `dead_at`,
 * the time it was sent to the dead-letter queue, which is when it was dead-lettered.
 */
test("a letter the queue's redrive moved has queued_at (its original send), not a dead_at; the worker's own letters keep dead_at", async () => {
  await client.send(new SendMessageCommand({ QueueUrl: url('hookagent-prod-queue'), MessageBody: JSON.stringify(message('evt_loop_2')) }));
  const queued = queues.get('hookagent-prod-queue')!.messages[0]!.sentAt;
  for (let i = 0; i < 4; i += 1) await client.send(new ReceiveMessageCommand({ QueueUrl: url('hookagent-prod-queue'), VisibilityTimeout: 0 }));
  // As SQS does for a standard queue: the moved message keeps its original SentTimestamp.
  expect(queues.get('hookagent-prod-dead-letters')!.messages.map((m) => m.sentAt)).toEqual([queued]);
  await client.send(new SendMessageCommand({
    QueueUrl: url('hookagent-prod-dead-letters'), MessageBody: JSON.stringify(message('evt_worker_2')),
    MessageAttributes: { reason: { DataType: 'String', StringValue: 'provider_auth: refused' }, receive_count: { DataType: 'Number', StringValue: '2' } },
  }));
  // The worker's letter was sent later (set here rather than waiting for the clock to move).
  const workerLetter = queues.get('hookagent-prod-dead-letters')!.messages[1]!;
  workerLetter.sentAt = queued + 1_000;
  const sent = workerLetter.sentAt;
  const letters = (await dlq().list()).map(({ event_id, dead_at, queued_at }) => ({ event_id, dead_at, queued_at }));
  expect(letters).toEqual([
    { event_id: 'evt_loop_2', dead_at: undefined, queued_at: new Date(queued).toISOString() },
    { event_id: 'evt_worker_2', dead_at: new Date(sent).toISOString(), queued_at: undefined },
  ]);
});
