/** Builders of API Gateway HTTP API (v2) events, signed the way each sender signs. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { signHub, signStandardWebhooks } from '../../functions/core/auth/signatures';

export interface EventOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  base64?: boolean;
  sourceIp?: string;
}

export function apiEvent(options: EventOptions): APIGatewayProxyEventV2 {
  const raw = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
  const base64 = options.base64 ?? (raw !== undefined && Buffer.isBuffer(options.body));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: options.path,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012', apiId: 'api', domainName: 'example.com', domainPrefix: 'example',
      http: { method: options.method ?? 'POST', path: options.path, protocol: 'HTTP/1.1', sourceIp: options.sourceIp ?? '140.82.115.1', userAgent: 'test' },
      requestId: 'req', routeKey: '$default', stage: '$default', time: '', timeEpoch: 0,
    },
    body: raw === undefined ? undefined : base64 ? raw.toString('base64') : raw.toString('utf8'),
    isBase64Encoded: base64,
  };
}

export function githubEvent(event: string, body: string, secret: string, extra: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return apiEvent({
    path: '/webhooks/github',
    body,
    headers: {
      'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': `d-${Math.random().toString(36).slice(2)}`,
      'x-hub-signature-256': signHub(body, secret), ...extra,
    },
  });
}

export function standardHeaders(body: string, secret: string, id: string, timestamp: number): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signStandardWebhooks(body, secret, id, timestamp) };
}
