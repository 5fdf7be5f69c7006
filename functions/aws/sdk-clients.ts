/**
 * What the SDK's clients cost per call, and what the functions keep of it (issue 16,
 * measured by `npm run bench -- lambda-ingest-cpu`):
 * - `cacheMiddleware`: a command's middleware stack is resolved once per command class,
 *   not on every send (our clients never change their stacks after their first call);
 * - the logger middleware goes: with the SDK's default no-op logger it still ran the
 *   schema-walking filters over every input and output, for a log line nobody writes
 *   (our adapters report failures themselves);
 * - SQS's MD5 check of each sent body is off (`md5: false`): the connection is TLS, which
 *   already guarantees SQS received what was sent, and the check hashed every 21 KB body.
 * Signing, retries, endpoints, the user agent and the X-Ray trace header
 * (recursion detection) are kept.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';

function withoutLogger<T extends { middlewareStack: { remove(name: string): boolean } }>(client: T): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

export function leanDynamoClient(config: DynamoDBClientConfig): DynamoDBClient {
  return withoutLogger(new DynamoDBClient({ ...config, cacheMiddleware: true }));
}

export function leanSqsClient(config: SQSClientConfig = {}): SQSClient {
  return withoutLogger(new SQSClient({ ...config, cacheMiddleware: true, md5: false }));
}
