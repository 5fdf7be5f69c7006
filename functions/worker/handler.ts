/** The worker Lambda: AWS adapters wired to the shared batch handler. */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readConfigFile } from '../core/config/file';
import { resolveConfig } from '../core/config/load';
import { HookError } from '../core/errors';
import { escapingLogger, type Logger } from '../core/log';
import { systemClock } from '../core/ports';
import { SkillLibrary } from '../core/skills/library';
import { createDynamoClient } from '../aws/dynamo';
import { SqsDeadLetters } from '../aws/dead-letters';
import { deploymentFromEnv } from '../aws/environment';
import { DynamoEventLog } from '../aws/event-log';
import { S3PayloadStore } from '../aws/s3-payload-store';
import { SsmSecretSource } from '../aws/ssm-secrets';
import { DynamoSubscriptionStore } from '../aws/subscription-store';
import { createAgent } from './agent-factory';
import { createWorkerHandler } from './batch';
import { createDeliveryTargets } from '../core/delivery/targets';

const powertools = new PowertoolsLogger({ serviceName: 'hookagent-worker' });
// Powertools writes strings raw: escape control characters first (payload text reaches logs).
const logger: Logger = escapingLogger({
  debug: (message, fields) => powertools.debug(message, fields ?? {}),
  info: (message, fields) => powertools.info(message, fields ?? {}),
  warn: (message, fields) => powertools.warn(message, fields ?? {}),
  error: (message, fields) => powertools.error(message, fields ?? {}),
});

let ready: Promise<(event: SQSEvent) => Promise<SQSBatchResponse>> | undefined;

async function start() {
  const deployment = deploymentFromEnv();
  const parsed = readConfigFile(deployment.configDir);
  if (!parsed.ok) throw new HookError('config_invalid', parsed.error.message);
  const resolved = await resolveConfig(parsed.value, new SsmSecretSource(new SSMClient({}), deployment.stage), ['agent', 'delivery']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const config = resolved.value;
  const dynamo = createDynamoClient({ region: deployment.region });
  const sqs = new SQSClient({});
  return createWorkerHandler({
    events: new DynamoEventLog(dynamo, deployment.tables.events),
    payloads: new S3PayloadStore(new S3Client({}), deployment.payloadBucket),
    subscriptions: new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions),
    agent: createAgent(config.agent, config.delivery, deployment.region),
    skills: new SkillLibrary(deployment.configDir),
    targets: createDeliveryTargets(config.delivery),
    config,
    clock: systemClock,
    logger,
    maxReceiveCount: Number(process.env.MAX_RECEIVE_COUNT) || 5,
    ...(deployment.deadLetterQueueUrl ? { deadLetters: new SqsDeadLetters(sqs, deployment.deadLetterQueueUrl) } : {}),
  });
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  ready ??= start().catch((error: unknown) => {
    ready = undefined;
    throw error;
  });
  // A configuration error fails the whole batch: the messages stay in the queue until it is fixed.
  return (await ready)(event);
}
