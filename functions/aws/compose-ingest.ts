/**
 * The ingest function's wiring: configuration, secrets and the DynamoDB, SQS and S3
 * adapters behind the ingest path. The handler only adds the Lambda context and metrics
 * flushing; what both functions share is in runtime.ts.
 */
import { SubscriptionCache } from '../core/ingest/subscription-cache';
import { createIngest, type Ingest } from '../core/ingest/service';
import { systemClock } from '../core/ports';
import { readConfig, type Runtime } from './runtime';
import { resolveParts } from './resolve-parts';
import { DynamoDedupStore } from './dedup-store';
import { createDynamoClient } from './dynamo';
import { deploymentFromEnv, type Deployment } from './environment';
import { DynamoEventLog } from './event-log';
import { lazyPayloadStore, lazySecretSource } from './lazy-clients';
import { SqsEventQueue } from './sqs-queue';
import { DynamoSubscriptionStore } from './subscription-store';
import { leanSqsClient } from './sdk-clients';
import { DynamoDebounceStore } from './debounce-store';
import { DynamoLeaseStore } from './lease-store';
import { DynamoRequestLog } from './request-log';

const SUBSCRIPTION_CACHE_MS = 5_000;

export async function composeIngest({ deployment, logger }: Runtime): Promise<Ingest> {
  // A source whose secret is not set is left without one: its endpoint refuses every request (401, fail closed).
  const resolved = await resolveParts(readConfig(deployment), lazySecretSource(deployment.stage), ['webhooks'], [['webhooks', 'github'], ['webhooks', 'gitlab']]);
  for (const [part, reason] of resolved.unresolved) logger.error(`${part} is unusable: its endpoint refuses every request (401) until the secret is set`, { reason });
  const dynamo = createDynamoClient({ region: deployment.region });
  return createIngest({
    config: resolved.config,
    subscriptions: new SubscriptionCache(new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions), SUBSCRIPTION_CACHE_MS, systemClock),
    queue: new SqsEventQueue(leanSqsClient(), deployment.queueUrl),
    // The claim and the records in one transaction; the commit in the request log's write (issue 16).
    dedup: new DynamoDedupStore(dynamo, deployment.tables.dedup, systemClock, deployment.tables.events),
    events: new DynamoEventLog(dynamo, deployment.tables.events),
    // Release claims for events held while a resume ran (issue 14 item 4).
    leases: new DynamoLeaseStore(dynamo, deployment.tables.dedup, systemClock),
    requests: new DynamoRequestLog(dynamo, deployment.tables.requests, systemClock, deployment.tables.dedup),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, systemClock),
    payloads: lazyPayloadStore(deployment.payloadBucket),
    clock: systemClock,
    logger,
  });
}

