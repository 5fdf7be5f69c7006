/** The worker Lambda: functions/aws/compose.ts wires it; here the Lambda context, batch shape and metrics. */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { composeWorker, deploymentFromEnv, lambdaLogger, refreshing } from '../aws/compose';
import { emfMetrics } from '../aws/emf-metrics';
import { METRIC } from '../core/metrics/metrics';
import { createWorkerHandler } from './batch';

const logger = lambdaLogger('hookagent-worker');
const metrics = emfMetrics('hookagent-worker', process.env.HOOKAGENT_STAGE ?? 'unknown');
const maxReceiveCount = Number(process.env.MAX_RECEIVE_COUNT) || 5;
const ready = refreshing(async () => createWorkerHandler(await composeWorker({ deployment: deploymentFromEnv(), logger, metrics })), logger);

export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
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
