/**
 * Hunt 13 (awsruntime, D1): ingest's SendMessageBatch of a DEBOUNCED event reaches SQS but
 * answers 500, so ingest withdraws the record and answers 503. The orphaned delayed message
 * must not run (README, "Ingest's calls per event": "A message whose record ingest deleted,
 * received before or after that delete, is dead-lettered unrun with the reason 'the event
 * record of this message was deleted'"). Debounced messages carried their payload, and the
 * worker rebuilt the deleted record from the message and ran it; the sender's retry then
 * delivered the alert a second time. They now go by reference, with their delay.
 *
 * The deployed modules (functions/ingest/handler.ts, functions/worker/handler.ts) over
 * dynalite, with the local SQS stand-in (tests/support/faulty-aws.ts) and a local Telegram.
 */
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { Call, FaultyAws } from '../support/faulty-aws';
import { INTERNAL_FAILURE, pollWorker, useFaultyStage } from '../support/faulty-stage';
import { bodyOf } from '../support/ingest-harness';
import type { LocalServer } from '../support/local-http';
import { apiEvent } from '../support/requests';

const stage = useFaultyStage({ deliveryTimeout: '2s' });
let aws: FaultyAws;
let telegram: LocalServer;
const QUEUE = () => stage.queueUrl;
const DLQ = () => stage.deadLetterQueueUrl;
const WINDOW_SECONDS = 60;

beforeAll(async () => {
  ({ aws, telegram } = stage);
  const at = '2026-11-24T00:00:00Z';
  await new DynamoSubscriptionStore(stage.dynamo.client, stage.dynamo.tables.subscriptions).create({
    name: 'alerts', events: [], skills: [], deliver: ['messenger'], agent: 'none', state: 'active', created_at: at, updated_at: at,
    secret: 'whsec_alerts_secret', prompt: 'Alert {commonLabels.alertname}', debounce_seconds: WINDOW_SECONDS,
  });
});

beforeEach(() => {
  aws.hook = () => undefined;
});

const handlers = async () => ({
  ingest: (await import('../../functions/ingest/handler')).handler,
});

/** The event source mapping: one batch of what is receivable; failures left, the rest deleted. */
const poll = () => pollWorker(stage);

/** The debounce window passes: each waiting message, checked to be still delayed, becomes receivable. */
function endDelays(): void {
  const now = Date.now();
  const waiting = aws.queues.get(QUEUE()) ?? [];
  expect(waiting.length).toBeGreaterThan(0);
  for (const m of waiting) {
    expect(m.visibleAt).toBeGreaterThan(now + (WINDOW_SECONDS / 2) * 1000);
    m.visibleAt = now;
  }
}

const isSend = (call: Call) => call.service === 'sqs' && call.operation === 'SendMessageBatch';
/** The first send is stored by SQS, then answered 500; every retry of it is refused. */
const storedThenRefused = () => {
  let sends = 0;
  aws.hook = (call) => {
    if (!isSend(call)) return undefined;
    sends += 1;
    return sends === 1 ? { ...INTERNAL_FAILURE, afterPassing: true } : INTERNAL_FAILURE;
  };
};
const postsOf = (text: string) => telegram.requests.filter((r) => r.body.includes(text)).length;
const deadLetterReasons = () => (aws.queues.get(DLQ()) ?? []).map((m) => (m.attributes?.reason as { StringValue?: string } | undefined)?.StringValue);

// Alertmanager: bearer token, no idempotency header (no delivery id).
const alert = (name: string) => apiEvent({
  path: '/webhooks/custom/alerts',
  body: JSON.stringify({ version: '4', groupKey: `{}:{alertname="${name}"}`, status: 'firing', externalURL: 'http://am:9093', commonLabels: { alertname: name }, alerts: [] }),
  headers: { 'content-type': 'application/json', authorization: 'Bearer whsec_alerts_secret' },
});

test('a debounced event answered 503 (its send reached SQS, then 500): its orphaned message is dead-lettered unrun', async () => {
  const { ingest } = await handlers();
  storedThenRefused();
  const first = await ingest(alert('DiskFull'));
  expect(first.statusCode).toBe(503);
  aws.hook = () => undefined;
  endDelays();
  await poll();
  expect(postsOf('Alert DiskFull')).toBe(0);
  expect(deadLetterReasons()).toEqual(['the event record of this message was deleted']);
  expect(aws.queues.get(QUEUE())).toEqual([]);
  // Sent by reference, as every recorded message: the payload stayed with the record ingest withdrew.
  const [orphan] = aws.queues.get(DLQ()) ?? [];
  expect(JSON.parse(orphan?.body ?? '{}')).toMatchObject({ recorded: true, subject_key: expect.any(String) });
  expect(orphan?.body).not.toContain('DiskFull');
});

test('Alertmanager retries the 503 after the debounce window: the alert is posted once', async () => {
  const { ingest } = await handlers();
  storedThenRefused();
  const first = await ingest(alert('CpuHot'));
  expect(first.statusCode).toBe(503);
  aws.hook = () => undefined;
  endDelays();
  await poll();
  // The sender's retry of the 503 (Alertmanager retries with backoff): a new event, debounced as any.
  const retry = await ingest(alert('CpuHot'));
  expect([retry.statusCode, bodyOf(retry).status]).toEqual([202, 'accepted']);
  endDelays();
  await poll();
  expect(postsOf('Alert CpuHot')).toBe(1);
  // This test's orphan, beside the first test's.
  expect(deadLetterReasons()).toEqual(Array(2).fill('the event record of this message was deleted'));
  expect(aws.queues.get(QUEUE())).toEqual([]);
});
