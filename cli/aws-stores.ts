/**
 * The stores of an AWS deployment (cli/context.ts's openStores): its DynamoDB tables, SQS
 * queue and S3 payloads. A module of its own so that the AWS SDK loads only for commands
 * that act on a deployment (`import()` in context.ts): local commands start ~40% faster.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../functions/core/config/types';
import type { EventQueue } from '../functions/core/ports';
import { systemClock } from '../functions/core/ports';
import { createDynamoClient } from '../functions/aws/dynamo';
import { DynamoDebounceStore } from '../functions/aws/debounce-store';
import { DynamoDedupStore } from '../functions/aws/dedup-store';
import { DynamoEventLog } from '../functions/aws/event-log';
import { DynamoLeaseStore } from '../functions/aws/lease-store';
import { DynamoRequestLog } from '../functions/aws/request-log';
import { S3PayloadStore } from '../functions/aws/s3-payload-store';
import { SqsEventQueue } from '../functions/aws/sqs-queue';
import { DynamoSubscriptionStore } from '../functions/aws/subscription-store';
import { deploymentTables, type AwsDeployment } from './aws-deployment';
import type { Stores } from './context';
import { queueName, queueUrl } from './operations/deployment';

export function openAwsStores(config: Config, deployment: AwsDeployment): Stores {
  const { stage, region } = deployment;
  const tables = deploymentTables(config, stage);
  const dynamo = createDynamoClient({ region });
  const sqs = new SQSClient({ region });
  let queue: SqsEventQueue | undefined;
  const lazyQueue: EventQueue = {
    send: async (messages) => {
      if (!queue) {
        // A missing queue says which and where to look (not the SDK's bare "does not exist").
        queue = new SqsEventQueue(sqs, await queueUrl(sqs, queueName(stage)));
      }
      await queue.send(messages);
    },
  };
  return {
    subscriptions: new DynamoSubscriptionStore(dynamo, tables.subscriptions),
    events: new DynamoEventLog(dynamo, tables.events),
    requests: new DynamoRequestLog(dynamo, tables.requests, systemClock),
    queue: lazyQueue,
    payloads: s3Payloads(region),
    leases: new DynamoLeaseStore(dynamo, tables.dedup, systemClock),
    debounce: new DynamoDebounceStore(dynamo, tables.dedup, systemClock),
    // SQS cannot be looked into: the dedup claims tell which records were never accepted.
    dedup: new DynamoDedupStore(dynamo, tables.dedup, systemClock),
    where: `the AWS deployment '${stage}' in ${region}`,
    close: async () => {
      dynamo.destroy();
      sqs.destroy();
    },
  };
}

/** Reading only: each pointer names its bucket. */
export function s3Payloads(region: string | undefined): S3PayloadStore {
  return new S3PayloadStore(new S3Client(region ? { region } : {}), '');
}
