/** The ingest Lambda: functions/aws/compose-ingest.ts wires it (runtime.ts the shared parts); here the Lambda context and metrics. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { composeIngest } from '../aws/compose-ingest';
import { deploymentFromEnv, lambdaLogger, refreshing } from '../aws/runtime';
import { emfMetrics } from '../aws/emf-metrics';
import { METRIC } from '../core/metrics/metrics';
import { apiGatewayHandler } from './api-gateway';

const logger = lambdaLogger('hookagent-ingest');
const metrics = emfMetrics('hookagent-ingest', process.env.HOOKAGENT_STAGE ?? 'unknown');
const answer = apiGatewayHandler(refreshing(() => composeIngest({ deployment: deploymentFromEnv(), logger, metrics }), logger), logger);

/** The endpoint family (never the custom name: one dimension value per family). */
function endpointOf(path: string): string {
  const match = /^\/(?:webhooks\/(github|gitlab|custom)(?:\/|$)|(health)$)/.exec(path);
  return match?.[1] ?? match?.[2] ?? 'other';
}

export async function handler(event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> {
  logger.withContext(context);
  const result = await answer(event);
  try {
    const body = JSON.parse(String(result.body ?? '{}')) as { status?: string; code?: string };
    const outcome = body.status === 'error' ? (body.code ?? 'error') : (body.status ?? 'unknown');
    metrics.add(METRIC.requests, 'Count', 1, { endpoint: endpointOf(event.rawPath ?? ''), outcome });
    metrics.flush();
  } catch (error) {
    logger.warn('could not emit request metrics', { error: error instanceof Error ? error.message : String(error) });
  }
  return result;
}
