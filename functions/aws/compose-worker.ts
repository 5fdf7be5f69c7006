/**
 * The worker's half of the Lambda wiring (runtime.ts has the shared parts, compose-ingest.ts
 * the ingest half): a module of its own so the ingest bundle never carries the agent, the
 * tools or the delivery targets, and it imports nothing of ingest's, so the worker bundle
 * never carries the ingest path (nor ipaddr.js, 13 KB, for allowed_ips).
 */
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { leanSqsClient } from './sdk-clients';
import { createDeliveryTargets } from '../core/delivery/targets';
import { countedDeadLetters, observedEventLog } from '../core/metrics/observed-event-log';
import { systemClock } from '../core/ports';
import { PreparedSkills } from '../core/skills/prepared';
import type { WorkerDeps } from '../core/worker/process';
import { createAgent } from '../worker/agent-factory';
import { agentsByModel } from '../worker/agents-by-model';
import type { WorkerHandlerOptions } from '../worker/batch';
import { readConfig, type Runtime } from './runtime';
import { resolveParts } from './resolve-parts';
import { unusableAgent, withUnusableTargets, WORKER_PARTS } from './unusable-parts';
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
  const prepared = readConfig(deployment);
  // A part whose secret is not set fails only the events that need it (unusable-parts.ts), not every batch.
  const resolved = await resolveParts(prepared, lazySecretSource(deployment.stage), ['agent', 'delivery'], WORKER_PARTS);
  for (const [part, reason] of resolved.unresolved) logger.error(`${part} is unusable until its secret is set: events that need it are retried, then fail with this reason`, { reason });
  const agentUnusable = resolved.unresolved.get('agent');
  // Its timeouts and limits still apply; its ${VAR}s stay unresolved.
  const config = agentUnusable ? { ...resolved.config, agent: prepared.agent } : resolved.config;
  const dynamo = createDynamoClient({ region: deployment.region });
  // One lease store for the worker leases and the sticky comments' (serialised per pull request across containers).
  const leases = new DynamoLeaseStore(dynamo, deployment.tables.dedup, clock);
  return {
    // The worker's metrics are read off the records it writes (functions/core/metrics/observed-event-log.ts).
    events: observedEventLog(new DynamoEventLog(dynamo, deployment.tables.events), metrics, clock),
    payloads: lazyPayloadStore(deployment.payloadBucket),
    subscriptions: new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions),
    agent: agentUnusable ? unusableAgent(agentUnusable) : createAgent(config.agent, config.delivery, deployment.region),
    agentFor: agentUnusable ? () => unusableAgent(agentUnusable) : agentsByModel(config.agent, config.delivery, deployment.region),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, clock),
    counters: new DynamoCounterStore(dynamo, deployment.tables.dedup, clock),
    leases,
    skills: new PreparedSkills(deployment.configDir),
    targets: withUnusableTargets(createDeliveryTargets(config.delivery, undefined, undefined, { leases }), resolved.unresolved),
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

