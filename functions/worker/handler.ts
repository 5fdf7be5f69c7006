/** The worker Lambda: functions/aws/compose-worker.ts wires it (runtime.ts the shared parts); here the Lambda context, batch shape and metrics. */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deploymentFromEnv, lambdaLogger, refreshing } from '../aws/runtime';
import { composeWorker, workerHandlerOptions } from '../aws/compose-worker';
import { emfMetrics } from '../aws/emf-metrics';
import { METRIC } from '../core/metrics/metrics';
import { createWorkerHandler } from './batch';

const logger = lambdaLogger('hookagent-worker');
const metrics = emfMetrics('hookagent-worker', process.env.HOOKAGENT_STAGE ?? 'unknown');
const maxReceiveCount = Number(process.env.MAX_RECEIVE_COUNT) || 5;
/** The invocation being handled: a container runs one at a time. */
let invocation: Pick<Context, 'getRemainingTimeInMillis'> | undefined;
const ready = refreshing(async () => {
  const deployment = deploymentFromEnv();
  return createWorkerHandler(await composeWorker({ deployment, logger, metrics }), {
    ...workerHandlerOptions(deployment),
    // Messages whose turn (agent.concurrency) comes too late to finish are given back, not cut off.
    remainingMs: () => invocation?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
  });
}, logger);

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  invocation = context;
  logger.withContext(context);
  metrics.coldStart();
  try {
    // A configuration error fails the whole batch: the messages stay in the queue until it is fixed.
    const response = await (await ready())(event);
    // Each failed item goes back to the queue: another attempt, or on its last receive the queue's redrive to the DLQ.
    for (const failure of response.batchItemFailures) {
      const record = event.Records.find((r) => r.messageId === failure.itemIdentifier);
      const receives = Number(record?.attributes.ApproximateReceiveCount) || 1;
      metrics.add(receives >= maxReceiveCount ? METRIC.deadLetters : METRIC.retries, 'Count', 1);
    }
    return response;
  } finally {
    metrics.flush();
  }
}
