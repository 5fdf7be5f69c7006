/** API Gateway HTTP API (payload v2) ⇄ the transport-free ingest. Shared by Lambda and `serve`. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { InboundRequest, Ingest } from '../core/ingest/service';
import { errorReply, errors, type Reply } from '../core/ingest/responses';
import { describeError } from '../core/errors';
import type { Logger } from '../core/log';

/** Throws a TypeError for anything but an HTTP API payload 2.0 event (a test invoke, a REST API event). */
export function toInboundRequest(event: APIGatewayProxyEventV2): InboundRequest {
  if (typeof event?.requestContext?.http?.method !== 'string' || typeof event.rawPath !== 'string') throw new TypeError('no requestContext.http.method or rawPath');
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    headers,
    body: event.body,
    isBase64Encoded: event.isBase64Encoded,
    sourceIp: event.requestContext.http.sourceIp,
  };
}

export function toResult(response: Reply): APIGatewayProxyStructuredResultV2 {
  return { statusCode: response.status, headers: response.headers, body: JSON.stringify(response.body) };
}

/**
 * Never lets an exception become API Gateway's HTML-less 500: the answer is always our JSON.
 * Three failures kept apart, so the log sends the operator to the right place: ingest could
 * not start (configuration, secrets), the event is not an HTTP API payload 2.0 request
 * (400: a test invoke, a REST API event), or handling the request failed unexpectedly (with
 * its path). The first and the last answer 503, which senders retry.
 */
export function apiGatewayHandler(getIngest: () => Promise<Ingest>, logger: Logger) {
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    let ingest: Ingest;
    try {
      ingest = await getIngest();
    } catch (error) {
      logger.error('ingest could not start', { error: describeError(error) });
      return toResult(errors.unavailable());
    }
    let request: InboundRequest;
    try {
      request = toInboundRequest(event);
    } catch (error) {
      logger.error('not an API Gateway HTTP API request (payload format 2.0)', { error: describeError(error), version: (event as { version?: unknown } | null)?.version });
      return toResult(errorReply(400, 'bad_request', 'Not an API Gateway HTTP API request (payload format 2.0)'));
    }
    try {
      return toResult(await ingest(request));
    } catch (error) {
      // Still 503: nothing was accepted, and a store failure that escaped is worth the sender's retry.
      logger.error('request failed', { method: request.method, path: request.path, error: describeError(error) });
      return toResult(errors.unavailable());
    }
  };
}
