/** API Gateway HTTP API (payload v2) ⇄ the transport-free ingest. Shared by Lambda and `serve`. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { InboundRequest, Ingest } from '../core/ingest/service';
import { errors, type Reply } from '../core/ingest/responses';
import { describeError } from '../core/errors';
import type { Logger } from '../core/log';

export function toInboundRequest(event: APIGatewayProxyEventV2): InboundRequest {
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

/** Never lets an exception become API Gateway's HTML-less 500: the answer is always our JSON. */
export function apiGatewayHandler(getIngest: () => Promise<Ingest>, logger: Logger) {
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    try {
      const ingest = await getIngest();
      return toResult(await ingest(toInboundRequest(event)));
    } catch (error) {
      logger.error('ingest could not start', { error: describeError(error) });
      return toResult(errors.unavailable());
    }
  };
}
