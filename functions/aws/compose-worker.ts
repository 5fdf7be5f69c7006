/**
 * The worker's half of the Lambda wiring (runtime.ts has the shared parts, compose-ingest.ts
 * the ingest half): a module of its own so the ingest bundle never carries the agent, the
 * tools or the delivery targets, and it imports nothing of ingest's, so the worker bundle
 * never carries the ingest path (nor ipaddr.js, 13 KB, for allowed_ips).
 */
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { leanSqsClient } from './sdk-clients';
import { resolveConfig } from '../core/config/resolve';
import { createDeliveryTargets } from '../core/delivery/targets';
import { HookError } from '../core/errors';
import { countedDeadLetters, observedEventLog } from '../core/metrics/observed-event-log';
import { systemClock } from '../core/ports';
import { PreparedSkills } from '../core/skills/prepared';
import type { WorkerDeps } from '../core/worker/process';
import { createAgent } from '../worker/agent-factory';
import { agentsByModel } from '../worker/agents-by-model';
import type { WorkerHandlerOptions } from '../worker/batch';
import { readConfig, type Runtime } from './runtime';
import { DynamoCounterStore } from './counter-store';
import { SqsDeadLetters } from './dead-letters';
import { DynamoDebounceStore } from './debounce-store';
import { createDynamoClient } from './dynamo';
import type { Deployment } from './environment';
import { DynamoEventLog } from './event-log';
import { lazyPayloadStore, lazySecretSource } from './lazy-clients';
import { DynamoLeaseStore } from './lease-store';
import { DynamoSubscriptionStore } from './subscription-store';

export async function composeWorker({ deployment, logger, metrics, clock = systemClock }: Runtime): Promise<WorkerDeps> {
  const resolved = await resolveConfig(readConfig(deployment), lazySecretSource(deployment.stage), ['agent', 'delivery']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const config = resolved.value;
  const dynamo = createDynamoClient({ region: deployment.region });
  // One lease store for the worker leases and the sticky comments' (serialised per pull request across containers).
  const leases = new DynamoLeaseStore(dynamo, deployment.tables.dedup, clock);
  return {
    // The worker's metrics are read off the records it writes (functions/core/metrics/observed-event-log.ts).
    events: observedEventLog(new DynamoEventLog(dynamo, deployment.tables.events), metrics, clock),
    payloads: lazyPayloadStore(deployment.payloadBucket),
    subscriptions: new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions),
    agent: createAgent(config.agent, config.delivery, deployment.region),
    agentFor: agentsByModel(config.agent, config.delivery, deployment.region),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, clock),
    counters: new DynamoCounterStore(dynamo, deployment.tables.dedup, clock),
    leases,
    skills: new PreparedSkills(deployment.configDir),
    targets: createDeliveryTargets(config.delivery, undefined, undefined, { leases }),
    config,
    clock,
    logger,
    maxReceiveCount: Number(process.env.MAX_RECEIVE_COUNT) || 5,
    ...(deployment.deadLetterQueueUrl ? { deadLetters: countedDeadLetters(new SqsDeadLetters(leanSqsClient(), deployment.deadLetterQueueUrl), metrics) } : {}),
  };
}

/** The batch handler's SQS side: paced retries come back after the retry schedule's delay, not the visibility timeout. */
export function workerHandlerOptions(deployment: Deployment): Pick<WorkerHandlerOptions, 'changeVisibility'> {
  const sqs = leanSqsClient();
  return {
    changeVisibility: async (record, seconds) => {
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: deployment.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: seconds }));
    },
  };
}

