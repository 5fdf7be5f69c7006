/** The ingest Lambda: AWS adapters wired to the transport-free ingest. */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { readConfigFile } from '../core/config/file';
import { resolveConfig } from '../core/config/load';
import { HookError } from '../core/errors';
import { SubscriptionCache } from '../core/ingest/subscription-cache';
import { createIngest, type Ingest } from '../core/ingest/service';
import { escapingLogger, type Logger } from '../core/log';
import { systemClock } from '../core/ports';
import { DynamoDedupStore } from '../aws/dedup-store';
import { DynamoLeaseStore } from '../aws/lease-store';
import { createDynamoClient } from '../aws/dynamo';
import { deploymentFromEnv } from '../aws/environment';
import { DynamoEventLog } from '../aws/event-log';
import { DynamoRequestLog } from '../aws/request-log';
import { DynamoDebounceStore } from '../aws/debounce-store';
import { S3PayloadStore } from '../aws/s3-payload-store';
import { SqsEventQueue } from '../aws/sqs-queue';
import { SsmSecretSource } from '../aws/ssm-secrets';
import { DynamoSubscriptionStore } from '../aws/subscription-store';
import { apiGatewayHandler } from './api-gateway';

const SUBSCRIPTION_CACHE_MS = 5_000;

const powertools = new PowertoolsLogger({ serviceName: 'hookagent-ingest' });
// Powertools writes strings raw: escape control characters first (payload text reaches logs).
const logger: Logger = escapingLogger({
  debug: (message, fields) => powertools.debug(message, fields ?? {}),
  info: (message, fields) => powertools.info(message, fields ?? {}),
  warn: (message, fields) => powertools.warn(message, fields ?? {}),
  error: (message, fields) => powertools.error(message, fields ?? {}),
});

let ingest: Promise<Ingest> | undefined;

async function start(): Promise<Ingest> {
  const deployment = deploymentFromEnv();
  const parsed = readConfigFile(deployment.configDir);
  if (!parsed.ok) throw new HookError('config_invalid', parsed.error.message);
  const secrets = new SsmSecretSource(new SSMClient({}), deployment.stage);
  const resolved = await resolveConfig(parsed.value, secrets, ['webhooks']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const dynamo = createDynamoClient({ region: deployment.region });
  return createIngest({
    config: resolved.value,
    subscriptions: new SubscriptionCache(new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions), SUBSCRIPTION_CACHE_MS, systemClock),
    queue: new SqsEventQueue(new SQSClient({}), deployment.queueUrl),
    dedup: new DynamoDedupStore(dynamo, deployment.tables.dedup, systemClock),
    // Release claims for events held while a resume ran (issue 14 item 4).
    leases: new DynamoLeaseStore(dynamo, deployment.tables.dedup, systemClock),
    events: new DynamoEventLog(dynamo, deployment.tables.events),
    requests: new DynamoRequestLog(dynamo, deployment.tables.requests, systemClock),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, systemClock),
    payloads: new S3PayloadStore(new S3Client({}), deployment.payloadBucket),
    clock: systemClock,
    logger,
  });
}

export const handler = apiGatewayHandler(() => {
  // A failed start is retried on the next request rather than cached forever.
  ingest ??= start().catch((error: unknown) => {
    ingest = undefined;
    throw error;
  });
  return ingest;
}, logger);
