/**
 * The deployed ingest Lambda module itself (functions/ingest/handler.ts), wired to
 * dynalite, a local SQS and a local SSM through the SDK's standard endpoint variables.
 */
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { startLocalSqs } from '../support/local-sqs';
import { preparedConfigDir } from '../support/prepared-config';
import { apiEvent, githubEvent } from '../support/requests';
import { bodyOf } from '../support/ingest-harness';

let dynamo: TestDynamo;
let sqs: LocalServer;
let ssm: LocalServer;
const saved = { ...process.env };

beforeAll(async () => {
  dynamo = await startDynalite();
  sqs = await startLocalSqs();
  ssm = await startLocalServer((req, res) => {
    const { Name } = JSON.parse(req.body) as { Name: string };
    if (Name === '/hookagent/test/GH_SECRET') sendJson(res, 200, { Parameter: { Name, Type: 'SecureString', Value: 'secret-from-ssm' } });
    else sendJson(res, 400, { __type: 'ParameterNotFound', message: 'none' });
  });
  const configDir = preparedConfigDir('webhooks:\n  github: { secret: ${GH_SECRET} }\n');
  Object.assign(process.env, {
    HOOKAGENT_STAGE: 'test', HOOKAGENT_CONFIG_DIR: configDir, QUEUE_URL: `${sqs.url}/000000000000/hookagent-test-queue`, PAYLOAD_BUCKET: 'bucket',
    AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: sqs.url, AWS_ENDPOINT_URL_SSM: ssm.url,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
  delete process.env.GH_SECRET;
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'pr', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active',
    created_at: '2026-11-22T00:00:00Z', updated_at: '2026-11-22T00:00:00Z', secret: 'whsec_x',
  });
});

afterAll(async () => {
  process.env = saved;
  await Promise.all([dynamo.close(), sqs.close(), ssm.close()]);
});

test('the Lambda answers health, verifies with the secret from SSM, and enqueues to SQS', async () => {
  const { handler } = await import('../../functions/ingest/handler');
  expect(bodyOf(await handler(apiEvent({ method: 'GET', path: '/health' })))).toEqual({ status: 'ok' });
  const body = JSON.stringify({ action: 'opened', number: 1 });
  const accepted = await handler(githubEvent('pull_request', body, 'secret-from-ssm'));
  expect(accepted.statusCode).toBe(202);
  expect(bodyOf(accepted)).toMatchObject({ status: 'accepted', subscriptions: ['pr'] });
  expect(sqs.requests).toHaveLength(1);
  expect(sqs.requests[0]?.headers['x-amz-target']).toBe('AmazonSQS.SendMessageBatch');
  expect((await handler(githubEvent('pull_request', body, 'wrong'))).statusCode).toBe(401);
  expect(ssm.requests.filter((r) => r.body.includes('GH_SECRET'))).toHaveLength(1);
});
