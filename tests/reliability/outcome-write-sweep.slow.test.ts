/**
 * Hunt 10: each of the worker's writes of the event record throttled in turn, past the SDK's
 * attempts and the batch handler's in-process retries (9 times), over the deployed Lambda
 * modules, dynalite and the local SQS stand-in. Whichever write it is, the event ends
 * delivered with one post: a direct delivery to Telegram and log, and an agent's reply to
 * Telegram. Paced retries come back at once here; the queue's redrive is after 5 receives.
 */
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { TestDynamo } from '../support/dynalite';
import type { Call, FaultyAws } from '../support/faulty-aws';
import { THROTTLED, useFaultyStage } from '../support/faulty-stage';
import { bodyOf } from '../support/ingest-harness';
import type { LocalServer } from '../support/local-http';
import { githubEvent } from '../support/requests';

const stage = useFaultyStage({ agent: '{ provider: echo, timeout: 20s }', deliveryTimeout: '2s' });
let dynamo: TestDynamo;
let aws: FaultyAws;
let telegram: LocalServer;
const QUEUE = () => stage.queueUrl;
const DLQ = () => stage.deadLetterQueueUrl;

beforeAll(async () => {
  ({ dynamo, aws, telegram } = stage);
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const at = '2026-11-24T00:00:00Z';
  await subscriptions.create({ name: 'direct', events: ['issues'], skills: [], deliver: ['messenger', 'log'], agent: 'none', prompt: 'Issue {issue.title}', state: 'active', created_at: at, updated_at: at, secret: 'whsec_x' });
  await subscriptions.create({ name: 'agent', events: ['pull_request'], skills: [], deliver: ['messenger'], prompt: 'PR {pull_request.title}', state: 'active', created_at: at, updated_at: at, secret: 'whsec_x' });
});

/** The event source mapping's next batch, after moving what was received 5 times to the DLQ; how many it held. */
async function poll(): Promise<number> {
  const worker = (await import('../../functions/worker/handler')).handler;
  const queue = aws.queues.get(QUEUE()) ?? [];
  for (const m of [...queue]) {
    m.visibleAt = 0;
    if (m.receiveCount >= 5) {
      queue.splice(queue.indexOf(m), 1);
      if (!aws.queues.has(DLQ())) aws.queues.set(DLQ(), []);
      aws.queues.get(DLQ())?.push(m);
    }
  }
  const event = aws.receive(QUEUE(), 10, 1800);
  if (event.Records.length === 0) return 0;
  const answer = await worker(event, { getRemainingTimeInMillis: () => 290_000 } as never);
  const failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
  for (const r of event.Records) if (!failed.has(r.messageId)) aws.deleteByReceipt(QUEUE(), r.receiptHandle);
  return event.Records.length;
}

const isRecordWrite = (call: Call) => call.service === 'dynamodb' && ['PutItem', 'UpdateItem', 'BatchWriteItem'].includes(call.operation) && String(call.input.TableName ?? '').endsWith('-events');

let seq = 0;
/** One event through the worker with the `throttleAt`-th record write (1-based) and the 8 after it throttled; undefined: none. */
async function runCase(kind: 'direct' | 'agent', throttleAt?: number) {
  seq += 1;
  const ingest = (await import('../../functions/ingest/handler')).handler;
  const title = `case-${kind}-${seq}`;
  const subject = kind === 'direct' ? { issue: { number: seq, title } } : { pull_request: { number: seq, title } };
  aws.hook = () => undefined;
  const accepted = await ingest(githubEvent(kind === 'direct' ? 'issues' : 'pull_request', JSON.stringify({ action: 'opened', ...subject, repository: { full_name: 'o/r' } }), 'gh-secret', { 'x-github-delivery': `d-${seq}` }));
  expect(accepted.statusCode).toBe(202);
  const eventId = String(bodyOf(accepted).event_id);
  let writes = 0;
  let left = 9;
  aws.hook = (call) => {
    if (!isRecordWrite(call)) return undefined;
    writes += 1;
    if (throttleAt === undefined || writes < throttleAt || left === 0) return undefined;
    left -= 1;
    return THROTTLED;
  };
  while (await poll() > 0);
  aws.hook = () => undefined;
  const record = await new DynamoEventLog(dynamo.client, dynamo.tables.events).get(eventId, kind);
  return { writes, status: record?.status, posts: telegram.requests.filter((r) => r.body.includes(title)).length };
}

test.each(['direct', 'agent'] as const)('%s: each write of the event record throttled 9 times in turn ends delivered with one post', async (kind) => {
  const clean = await runCase(kind);
  expect(clean).toMatchObject({ status: 'delivered', posts: 1 });
  const outcomes: string[] = [];
  for (let at = 1; at <= clean.writes; at++) {
    const got = await runCase(kind, at);
    outcomes.push(`write ${at}: ${got.status}, ${got.posts} post(s)`);
  }
  expect(outcomes).toEqual(Array.from({ length: clean.writes }, (_, i) => `write ${i + 1}: delivered, 1 post(s)`));
}, 300_000);
