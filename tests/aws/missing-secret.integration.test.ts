/**
 * Hunt 3, D10: one SSM secret that is not set disables only what uses it. Ingest: that
 * source's endpoint refuses every request (401, fail closed, DESIGN §2.2) while /health and
 * the other sources work. Worker: events delivered elsewhere run; one needing that target
 * is retried with the reason recorded. The Lambda modules themselves, over the AWS recorder
 * (SSM, SQS) in front of dynalite.
 */
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { newEventId } from '../../functions/core/ids';
import type { QueueMessage } from '../../functions/core/types';
import { toSqsRecord } from '../../functions/local/consumer';
import { startAwsRecorder, type AwsRecorder } from '../support/aws-recorder';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { bodyOf } from '../support/ingest-harness';
import { preparedConfigDir } from '../support/prepared-config';
import { apiEvent, githubEvent } from '../support/requests';

const CONFIG = `webhooks:
  github: { secret: \${GITHUB_WEBHOOK_SECRET} }
  gitlab: { secret: \${GITLAB_WEBHOOK_SECRET} }
delivery:
  teamchat: { provider: slack, webhook_url: \${SLACK_WEBHOOK_URL} }
`;

let dynamo: TestDynamo;
let recorder: AwsRecorder;
const saved = { ...process.env };
/** What the functions wrote to stdout and stderr (Powertools' JSON log lines). */
const lines: string[] = [];
let restoreStdout: () => void;

beforeAll(async () => {
  dynamo = await startDynalite();
  // GITLAB_WEBHOOK_SECRET and SLACK_WEBHOOK_URL are not set.
  recorder = await startAwsRecorder({ dynamoEndpoint: dynamo.endpoint, parameters: { '/hookagent/test/GITHUB_WEBHOOK_SECRET': 'gh-secret' } });
  Object.assign(process.env, {
    HOOKAGENT_STAGE: 'test', HOOKAGENT_CONFIG_DIR: preparedConfigDir(CONFIG), QUEUE_URL: `${recorder.url}/000000000000/hookagent-test-queue`, PAYLOAD_BUCKET: 'bucket',
    AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_MAX_ATTEMPTS: '1',
    AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url, AWS_ENDPOINT_URL_SSM: recorder.url, AWS_ENDPOINT_URL_S3: recorder.url,
    POWERTOOLS_LOG_LEVEL: 'INFO', MAX_RECEIVE_COUNT: '5',
  });
  for (const name of ['GITHUB_WEBHOOK_SECRET', 'GITLAB_WEBHOOK_SECRET', 'SLACK_WEBHOOK_URL']) delete process.env[name];
  // Powertools writes warnings and errors to stderr, the rest to stdout.
  const restores = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    return () => void (stream.write = write);
  });
  restoreStdout = () => restores.forEach((restore) => restore());
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  for (const [name, deliver] of [['to-log', 'log'], ['to-slack', 'teamchat']] as const) {
    await subscriptions.create({ name, events: ['issues'], skills: [], deliver: [deliver], agent: 'none', prompt: 'Issue {issue.title}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
  }
});
afterAll(async () => {
  restoreStdout();
  process.env = saved;
  await Promise.all([recorder.close(), dynamo.close()]);
});

test('ingest: the source without its secret answers 401; /health and the other source keep working; the log names the secret', async () => {
  const { handler } = await import('../../functions/ingest/handler');
  expect((await handler(apiEvent({ method: 'GET', path: '/health' }))).statusCode).toBe(200);
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'x' }, repository: { full_name: 'o/r' } });
  const accepted = await handler(githubEvent('issues', body, 'gh-secret'));
  expect([accepted.statusCode, bodyOf(accepted).status]).toEqual([202, 'accepted']);
  const gitlab = await handler(apiEvent({ path: '/webhooks/gitlab', body, headers: { 'x-gitlab-event': 'Issue Hook', 'x-gitlab-token': '' } }));
  expect(gitlab.statusCode).toBe(401);
  const logged = lines.join('');
  expect(logged).toContain('webhooks.gitlab is unusable');
  expect(logged).toContain('GITLAB_WEBHOOK_SECRET');
  expect(logged).not.toContain('gh-secret');
});

test('worker: an event delivered to the log runs; one for Slack is retried with the missing secret recorded', async () => {
  const { handler } = await import('../../functions/worker/handler');
  const sent = (subscription: string): QueueMessage => ({
    v: 1, event_id: newEventId(Date.now()), subscription, source: 'github', event: 'issues', action: 'opened', delivery_id: subscription,
    received_at: new Date().toISOString(), payload: { action: 'opened', issue: { number: 2, title: 'disk full' } },
  });
  const toLog = sent('to-log');
  const toSlack = sent('to-slack');
  const records = [toLog, toSlack].map((m) => toSqsRecord({ messageId: m.subscription, receiptHandle: `rh-${m.subscription}`, body: JSON.stringify(m), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:eu-west-1:0:q'));
  const answer = await handler({ Records: records }, { getRemainingTimeInMillis: () => 300_000 } as never);
  expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'to-slack' }] });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  expect(await events.get(toLog.event_id, 'to-log')).toMatchObject({ status: 'delivered' });
  expect(await events.get(toSlack.event_id, 'to-slack')).toMatchObject({
    status: 'queued', error: { code: 'secret_not_found', message: expect.stringContaining('delivery.teamchat.webhook_url: references ${SLACK_WEBHOOK_URL}, which is not set') },
  });
  expect(lines.join('')).toContain('delivery.teamchat is unusable');
});
