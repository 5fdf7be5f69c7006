/**
 * Hunt 3, D11: the API Gateway adapter tells apart an event that is no HTTP API request
 * (400, logged as such), a request whose handling failed (logged as "request failed" with
 * its path) and an ingest that could not start: before, all three were logged "ingest
 * could not start", which sends the operator looking for a configuration problem.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createIngest } from '../../functions/core/ingest/service';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { jsonLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { MemoryDedupStore, MemoryEventLog, MemoryPayloadStore, MemoryQueue, MemorySubscriptionStore } from '../support/memory';
import { apiEvent } from '../support/requests';

function setup(ingestOverride?: () => Promise<never>) {
  const logs: Array<Record<string, unknown>> = [];
  const logger = jsonLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  const ingest = createIngest({
    config: { webhooks: { max_payload_size: 1024 * 1024 } },
    subscriptions: new SubscriptionCache(new MemorySubscriptionStore(), 0, systemClock), queue: new MemoryQueue(), dedup: new MemoryDedupStore(systemClock), events: new MemoryEventLog(),
    payloads: new MemoryPayloadStore(), clock: systemClock, logger,
  });
  return { handler: apiGatewayHandler(async () => ingestOverride ?? ingest, logger), logs };
}

test.each([
  ['an empty event', {}],
  ['null', null],
  ['a REST API (payload format 1.0) event', { version: '1.0', httpMethod: 'GET', path: '/health', requestContext: { httpMethod: 'GET' } }],
])('%s: 400 bad_request, logged as not an HTTP API request', async (_name, event) => {
  const { handler, logs } = setup();
  const answer = await handler(event as unknown as APIGatewayProxyEventV2);
  expect(answer.statusCode).toBe(400);
  expect(JSON.parse(answer.body as string)).toMatchObject({ status: 'error', code: 'bad_request' });
  expect(logs).toEqual([expect.objectContaining({ level: 'error', message: 'not an API Gateway HTTP API request (payload format 2.0)' })]);
});

test('a request whose handling throws: 503 (the sender retries), logged as "request failed" with the method and path', async () => {
  const { handler, logs } = setup(async () => { throw new TypeError('something broke'); });
  const answer = await handler(apiEvent({ path: '/webhooks/github', body: '{}' }));
  expect(answer.statusCode).toBe(503);
  expect(logs).toEqual([expect.objectContaining({ level: 'error', message: 'request failed', method: 'POST', path: '/webhooks/github', error: 'TypeError: something broke' })]);
});

test('an ingest that cannot start is still logged as such (503)', async () => {
  const logs: string[] = [];
  const handler = apiGatewayHandler(async () => { throw new Error('config missing'); }, jsonLogger((line) => logs.push(line)));
  expect((await handler(apiEvent({ method: 'GET', path: '/health' }))).statusCode).toBe(503);
  expect(logs.join('')).toContain('ingest could not start');
});
