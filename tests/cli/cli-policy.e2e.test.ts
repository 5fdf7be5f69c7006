/**
 * Hunt 3, D3: infra/cli-policy.json (REGION, ACCOUNT, STAGE filled in) enforced on every call,
 * action and resource, by the AWS recorder answering AccessDenied as IAM does. `webhook
 * event` reads a transcript too large for its record from the payload bucket, whose name
 * CloudFormation generates from the stack (hookagent-<stage>-payloadbucket-<suffix>).
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { startAwsRecorder, type AwsCall, type AwsRecorder } from '../support/aws-recorder';
import { buildCli, runCli, tempConfigDir } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { policyAllows, type PolicyStatement } from '../support/iam';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
/** A bucket name as CloudFormation generates it for the stack hookagent-prod. */
const BUCKET = 'hookagent-prod-payloadbucket-1x2y3z4w5v6u';

const policyText = readFileSync(join(__dirname, '..', '..', 'infra', 'cli-policy.json'), 'utf8')
  .replace(/REGION/g, REGION).replace(/ACCOUNT/g, ACCOUNT).replace(/STAGE/g, 'prod');
const statements = (JSON.parse(policyText) as { Statement: PolicyStatement[] }).Statement;

/** The ARN IAM checks for a recorded call. */
function arnOf(call: AwsCall): string {
  const [service] = call.action.split(':');
  if (service === 's3') return `arn:aws:s3:::${call.resource}`;
  if (service === 'dynamodb') return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${call.resource}`;
  if (service === 'sqs') return `arn:aws:sqs:${REGION}:${ACCOUNT}:${call.resource.split('/').at(-1)}`;
  if (service === 'ssm') return `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${call.resource}`;
  if (service === 'cloudformation') return `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${call.resource}/1`;
  return '*';
}

let dynamo: TestDynamo;
let recorder: AwsRecorder;
/** Enforced once the test's own setup is done. */
let enforcing = false;

beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  recorder = await startAwsRecorder({ dynamoEndpoint: dynamo.endpoint, parameters: {}, authorize: (call) => !enforcing || policyAllows(statements, call.action, arnOf(call)) });
}, 120_000);
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

test('webhook event shows a transcript kept in the payload bucket: every call it makes is allowed by the CLI policy', async () => {
  const at = '2026-11-22T10:00:00.000Z';
  const eventId = 'evt_0mwujtoat6d28fdd577da9610';
  const transcriptKey = `payloads/transcript_${eventId}_review.json`;
  const transcript = { provider: 'bedrock', model: 'm', system_sha256: 'abc', user: `Review ${'d'.repeat(12_000)}`, steps: [] };
  const s3 = new S3Client({ endpoint: recorder.url, forcePathStyle: true, region: REGION, credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } });
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: transcriptKey, Body: JSON.stringify(transcript) }));
  s3.destroy();
  await new DynamoSubscriptionStore(dynamo.client, 'hookagent-prod-subscriptions').create({
    name: 'review', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', created_at: at, updated_at: at, secret: 'x',
  });
  const message: QueueMessage = { v: 1, event_id: eventId, subscription: 'review', source: 'github', event: 'pull_request', delivery_id: 'd-1', received_at: at, payload: { action: 'opened' } };
  const record: EventRecord = {
    event_id: eventId, subscription: 'review', status: 'delivered', source: 'github', event: 'pull_request', delivery_id: 'd-1', received_at: at, updated_at: at, message,
    reply: 'Looks fine.', transcript_ref: `s3://${BUCKET}/${transcriptKey}`,
  };
  await new DynamoEventLog(dynamo.client, 'hookagent-prod-events').putAll([record]);

  const dir = tempConfigDir('aws: { stage: prod, region: eu-west-1 }\n');
  enforcing = true;
  recorder.calls.length = 0;
  const result = await runCli(['--config-dir', dir, 'webhook', 'event', eventId, '--json'], {
    AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_S3: recorder.url,
    AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: REGION, AWS_MAX_ATTEMPTS: '1',
  });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const [story] = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
  expect(story).not.toHaveProperty('transcript_error');
  expect(story?.transcript).toMatchObject({ user: transcript.user });
  expect(recorder.calls.map((c) => `${c.action} ${c.resource}`)).toContain(`s3:GetObject ${BUCKET}/${transcriptKey}`);
  expect(recorder.calls.filter((c) => !policyAllows(statements, c.action, arnOf(c)))).toEqual([]);
}, 60_000);

test('the policy reads only the payload and transcript keys of this stage\'s bucket, and writes nothing there', () => {
  const can = (action: string, key: string, bucket = BUCKET) => policyAllows(statements, action, `arn:aws:s3:::${bucket}/${key}`);
  expect(can('s3:GetObject', 'payloads/evt_0mwujtoat6d28fdd577da9610.json')).toBe(true);
  expect(can('s3:GetObject', 'payloads/transcript_evt_0mwujtoat6d28fdd577da9610_review.json')).toBe(true);
  expect(can('s3:GetObject', 'other/evt_1.json')).toBe(false);
  expect(can('s3:GetObject', 'payloads/evt_1.json', 'hookagent-staging-payloadbucket-1x2y3z4w5v6u')).toBe(false);
  expect(can('s3:PutObject', 'payloads/evt_1.json')).toBe(false);
});
