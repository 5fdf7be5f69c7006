/**
 * `hookagent status --stage prod` against the recording AWS endpoint: what the queue
 * holds, including debounced events (sent with DelaySeconds: neither waiting nor in flight
 * for SQS), and errors reading the queue that are not a missing queue.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAwsRecorder, type AwsRecorder, type RecordedMessage, type RecorderOptions } from '../support/aws-recorder';
import { buildCli, runCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';

const CONFIG = 'aws: { stage: prod, region: eu-west-1 }\nwebhooks:\n  github: { secret: ${GITHUB_WEBHOOK_SECRET} }\n';

let dynamo: TestDynamo;
let recorder: AwsRecorder;
let options: RecorderOptions & { queues: Record<string, RecordedMessage[]> };
let dir: string;
const queueUrl = () => `${recorder.url}/123456789012/hookagent-prod-queue`;
const dlqUrl = () => `${recorder.url}/123456789012/hookagent-prod-dead-letters`;

beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  options = { dynamoEndpoint: dynamo.endpoint, parameters: { '/hookagent/prod/GITHUB_WEBHOOK_SECRET': 'g' }, queues: {}, metrics: { ApproximateAgeOfOldestMessage: 12 } };
  recorder = await startAwsRecorder(options);
  options.stacks = {
    'hookagent-prod': {
      status: 'UPDATE_COMPLETE',
      outputs: { HttpApiUrl: recorder.url, EventQueueUrl: queueUrl(), DeadLetterQueueUrl: dlqUrl(), ConfigHash: createHash('sha256').update(CONFIG).digest('hex'), Stage: 'prod' },
    },
  };
  dir = mkdtempSync(join(tmpdir(), 'hookagent-status-queue-'));
  writeFileSync(join(dir, 'config.yaml'), CONFIG);
}, 120_000);
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

const env = (endpoint: string) => ({
  AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_ENDPOINT_URL_SQS: endpoint, AWS_ENDPOINT_URL_SSM: endpoint,
  AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint, AWS_ENDPOINT_URL_CLOUDWATCH: endpoint,
  AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1',
});

test('debounced events (sent with a delay) are counted: the queue is not shown empty while they wait', async () => {
  const later = Date.now() + 10 * 60_000;
  options.queues = {
    [queueUrl()]: [
      { id: 'ready', body: '{}' },
      { id: 'running', body: '{}', hiddenUntil: later },
      { id: 'debounced-1', body: '{}', delayedUntil: later },
      { id: 'debounced-2', body: '{}', delayedUntil: later },
    ],
    [dlqUrl()]: [],
  };
  const json = await runCli(['--config-dir', dir, 'status', '--json'], env(recorder.url));
  expect(json.stderr).toBe('');
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout).queue).toEqual({ depth: 1, in_flight: 1, delayed: 2, oldest_message_age_seconds: 12 });
  const text = await runCli(['--config-dir', dir, 'status'], env(recorder.url));
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/^queue\s+1 waiting, 2 delayed \(debounce\), 1 in flight, oldest 12s$/m);
}, 60_000);

describe('an SQS error that is not a missing queue is not reported as one', () => {
  let sqs: LocalServer;
  let answer: { status: number; body: Record<string, string> };
  beforeAll(async () => {
    // SQS (JSON protocol) answering every call with one error, as SQS does when throttling or when the credentials expired.
    sqs = await startLocalServer((_req, res) => sendJson(res, answer.status, answer.body, { 'content-type': 'application/x-amz-json-1.0' }));
  });
  afterAll(() => sqs.close());

  test.each([
    ['throttled', 400, { __type: 'com.amazonaws.sqs#ThrottlingException', message: 'Rate exceeded' }, 'ThrottlingException: Rate exceeded', 'AWS is throttling these calls'],
    ['expired credentials', 400, { __type: 'com.amazon.coral.service#ExpiredTokenException', message: 'The security token included in the request is expired' }, 'ExpiredTokenException: The security token included in the request is expired', 'The AWS credentials have expired or are not valid: renew them'],
  ])('webhook dead-letters, %s: the reason and what to do, and not "could not find the queue"', async (_case, status, body, reason, hint) => {
    answer = { status, body };
    const result = await runCli(['--config-dir', dir, 'webhook', 'dead-letters'], { ...env(recorder.url), AWS_ENDPOINT_URL_SQS: sqs.url });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`Could not read the queue hookagent-prod-dead-letters (${reason})`);
    expect(result.stderr).not.toMatch(/could not find|does not exist/i);
    // The hint fits a stage: nothing about a local data directory.
    expect(result.stderr).toContain(hint);
    expect(result.stderr).not.toContain('data directory');
  }, 60_000);

  test('a queue that does not exist still says whether the stage is deployed here', async () => {
    answer = { status: 400, body: { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' } };
    const result = await runCli(['--config-dir', dir, 'webhook', 'dead-letters'], { ...env(recorder.url), AWS_ENDPOINT_URL_SQS: sqs.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The queue hookagent-prod-dead-letters does not exist: is the stage deployed in this region?');
  }, 60_000);
});
