/**
 * A Lambda stage for fault tests of the deployed modules (functions/ingest/handler.ts,
 * functions/worker/handler.ts): dynalite behind the fault-injecting AWS stand-in
 * (faulty-aws.ts, which also plays SQS and S3), a local Telegram that answers every post,
 * and the environment the handlers read, set before the file's tests and restored after.
 */
import { startDynalite, type TestDynamo } from './dynalite';
import { startFaultyAws, type FaultyAws } from './faulty-aws';
import { sendJson, startLocalServer, type LocalServer } from './local-http';
import type { SQSBatchResponse } from 'aws-lambda';
import { preparedConfigDir } from './prepared-config';

/** DynamoDB's answer to a throttled request. */
export const THROTTLED = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded.' } };
/** An AWS service's 500. */
export const INTERNAL_FAILURE = { status: 500, body: { __type: 'com.amazon.coral.service#InternalFailure', message: 'We encountered an internal error.' } };

export interface FaultyStage {
  readonly dynamo: TestDynamo;
  readonly aws: FaultyAws;
  readonly telegram: LocalServer;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/**
 * Registers the stage's start and stop. `agent` is config.yaml's agent line (none: the
 * default provider); the GitHub secret is `gh-secret`, the Telegram bot token `1:T`.
 */
export function useFaultyStage(options: { agent?: string; deliveryTimeout: string }): FaultyStage {
  let parts: { dynamo: TestDynamo; aws: FaultyAws; telegram: LocalServer } | undefined;
  const saved = { ...process.env };
  const started = () => {
    if (!parts) throw new Error('the stage has not started (useFaultyStage registers it in beforeAll)');
    return parts;
  };
  beforeAll(async () => {
    const dynamo = await startDynalite();
    const aws = await startFaultyAws(dynamo.endpoint);
    const telegram: LocalServer = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
    parts = { dynamo, aws, telegram };
    const configDir = preparedConfigDir(`webhooks:
  github: { secret: \${GH_SECRET} }
${options.agent ? `agent: ${options.agent}\n` : ''}delivery:
  timeout: ${options.deliveryTimeout}
  messenger: { provider: telegram, bot_token: \${TG_TOKEN}, chat_id: "42", api_url: ${telegram.url} }
`);
    Object.assign(process.env, {
      HOOKAGENT_STAGE: 'test', HOOKAGENT_CONFIG_DIR: configDir, QUEUE_URL: stage.queueUrl, DEAD_LETTER_QUEUE_URL: stage.deadLetterQueueUrl, PAYLOAD_BUCKET: 'bucket',
      AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', GH_SECRET: 'gh-secret', TG_TOKEN: '1:T',
      AWS_ENDPOINT_URL_DYNAMODB: aws.url, AWS_ENDPOINT_URL_SQS: aws.url, AWS_ENDPOINT_URL_S3: aws.url, POWERTOOLS_LOG_LEVEL: 'CRITICAL', MAX_RECEIVE_COUNT: '5',
    });
  }, 60_000);
  afterAll(async () => {
    process.env = saved;
    if (parts) await Promise.all([parts.aws.close(), parts.telegram.close(), parts.dynamo.close()]);
  });
  const stage: FaultyStage = {
    get dynamo() { return started().dynamo; },
    get aws() { return started().aws; },
    get telegram() { return started().telegram; },
    get queueUrl() { return `${started().aws.url}/000000000000/hookagent-test-queue`; },
    get deadLetterQueueUrl() { return `${started().aws.url}/000000000000/hookagent-test-dlq`; },
  };
  return stage;
}

/**
 * The event source mapping, once: one batch of what `stage`'s queue has receivable, given to
 * the deployed worker handler; the failures are left, the rest deleted. Undefined when
 * nothing was receivable.
 */
export async function pollWorker(stage: FaultyStage): Promise<SQSBatchResponse | undefined> {
  const { handler } = await import('../../functions/worker/handler');
  const event = stage.aws.receive(stage.queueUrl, 10, 1800);
  if (event.Records.length === 0) return undefined;
  const answer = await handler(event, { getRemainingTimeInMillis: () => 290_000 } as never);
  const failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
  for (const r of event.Records) if (!failed.has(r.messageId)) stage.aws.deleteByReceipt(stage.queueUrl, r.receiptHandle);
  return answer;
}
