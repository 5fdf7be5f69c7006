/** The worker Lambda: AWS adapters wired to the shared batch handler. */
import { S3Client } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readConfigFile } from '../core/config/file';
import { resolveConfig } from '../core/config/load';
import { HookError } from '../core/errors';
import { escapingLogger } from '../core/log';
import { systemClock } from '../core/ports';
import { SkillLibrary } from '../core/skills/library';
import { createDynamoClient } from '../aws/dynamo';
import { powertoolsLogger } from '../aws/powertools-logger';
import { SqsDeadLetters } from '../aws/dead-letters';
import { deploymentFromEnv } from '../aws/environment';
import { DynamoEventLog } from '../aws/event-log';
import { DynamoLeaseStore } from '../aws/lease-store';
import { DynamoCounterStore } from '../aws/counter-store';
import { DynamoDebounceStore } from '../aws/debounce-store';
import { agentsByModel } from './agents-by-model';
import { S3PayloadStore } from '../aws/s3-payload-store';
import { SsmSecretSource } from '../aws/ssm-secrets';
import { DynamoSubscriptionStore } from '../aws/subscription-store';
import { createAgent } from './agent-factory';
import { createWorkerHandler } from './batch';
import { createDeliveryTargets } from '../core/delivery/targets';

// Payload text reaches logs: control characters are escaped before Powertools writes them.
const logger = escapingLogger(powertoolsLogger('hookagent-worker'));

let ready: Promise<(event: SQSEvent) => Promise<SQSBatchResponse>> | undefined;
/** The invocation being handled: a container runs one at a time. */
let invocation: Pick<Context, 'getRemainingTimeInMillis'> | undefined;

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
    agentFor: agentsByModel(config.agent, config.delivery, deployment.region),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, systemClock),
    counters: new DynamoCounterStore(dynamo, deployment.tables.dedup, systemClock),
    skills: new SkillLibrary(deployment.configDir),
    targets: createDeliveryTargets(config.delivery),
    config,
    clock: systemClock,
    logger,
    maxReceiveCount: Number(process.env.MAX_RECEIVE_COUNT) || 5,
    ...(deployment.deadLetterQueueUrl ? { deadLetters: new SqsDeadLetters(sqs, deployment.deadLetterQueueUrl) } : {}),
    leases: new DynamoLeaseStore(dynamo, deployment.tables.dedup, systemClock),
  }, {
    // Paced retries: the message comes back after the retry schedule's delay, not the queue's visibility timeout.
    changeVisibility: async (record, seconds) => {
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: deployment.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: seconds }));
    },
    // Messages whose turn (agent.concurrency) comes too late to finish are given back, not cut off.
    remainingMs: () => invocation?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
  });
}

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  invocation = context;
  ready ??= start().catch((error: unknown) => {
    ready = undefined;
    throw error;
  });
  // A configuration error fails the whole batch: the messages stay in the queue until it is fixed.
  return (await ready)(event);
}
