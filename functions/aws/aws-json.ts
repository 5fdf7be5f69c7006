/**
 * A lean client for the AWS JSON 1.0 protocol (DynamoDB, SQS), for the three calls ingest
 * makes on every accepted event (issue 16): the claim transaction, the queue send, the
 * commit with the request log. Measured (`npm run bench -- lambda-ingest-cpu`), the SDK's
 * per-call machinery (a dozen middlewares, its schema-driven serialiser that escapes a
 * 21 KB string one character at a time, response deserialisation) cost two to three times
 * this client's CPU per call, and ingest pays it on every event.
 *
 * It takes from the SDK client it stands beside what must not differ: the credentials
 * provider (the same chain and refresh), the region, a configured endpoint and the number
 * of attempts. What it does itself: the body is built by the caller with JSON.stringify;
 * requests are signed with Signature Version 4 (node:crypto; the signing key is derived
 * once per day, region and service, as the SDK does); one keep-alive agent; answers are
 * parsed with JSON.parse; errors carry the service's error name (`__type`) as `name`
 * and the answer's fields (e.g. `CancellationReasons`), as the SDK's exceptions do;
 * throttling, 5xx and network failures are retried with jittered exponential backoff.
 * The X-Ray trace header of the invocation is passed on as the SDK does in Lambda.
 * Not supported (the SDK would resolve them): FIPS and dual-stack endpoints
 * (AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT); set AWS_ENDPOINT_URL_<SERVICE>
 * to such an endpoint instead. Every other call keeps using the SDK clients.
 */
import { createHash, createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { THROTTLE_ERRORS } from './throttling';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface AwsJsonOptions {
  /** The signing name: `dynamodb`, `sqs`. */
  service: string;
  /** The X-Amz-Target prefix: `DynamoDB_20120810`, `AmazonSQS`. */
  targetPrefix: string;
  region: () => Promise<string>;
  credentials: () => Promise<AwsCredentials>;
  /** Where to send; undefined: `https://<service>.<region>.amazonaws.com`. */
  endpoint?: () => Promise<string | undefined>;
  maxAttempts?: () => Promise<number>;
  /** Per attempt (default 5 s, within ingest's 10 s timeout together with a retry). */
  timeoutMs?: number;
  /** The clock, for tests of the signature. */
  now?: () => number;
}

/** An error answered by the service: `name` is its error code (`ConditionalCheckFailedException`, …). */
export class AwsJsonError extends Error {
  [field: string]: unknown;

  constructor(name: string, message: string, readonly status: number, fields: Record<string, unknown>) {
    super(message);
    Object.assign(this, fields);
    this.name = name;
  }
}

const RETRYABLE = new Set<string>([...THROTTLE_ERRORS, 'TransactionInProgressException', 'InternalServerError', 'InternalFailure', 'ServiceUnavailable']);

const hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** ISO 8601 basic format: 20261123T183443Z. */
function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

export class AwsJsonClient {
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  private signingKey: { scope: string; secret: string; key: Buffer } | undefined;

  constructor(private readonly options: AwsJsonOptions) {}

  /**
   * Calls `operation` with `body` (JSON text: attribute values as DynamoDB JSON, no binary
   * ones) and returns the parsed answer; throws AwsJsonError or a network error.
   * `endpoint`: this call's (SQS sends to its queue URL's origin, as the SDK does).
   */
  async call<T>(operation: string, body: string, endpoint?: string): Promise<T> {
    const attempts = Math.max(1, (await this.options.maxAttempts?.()) ?? 3);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send<T>(operation, body, endpoint);
      } catch (error) {
        const retryable = !(error instanceof AwsJsonError) || error.status >= 500 || RETRYABLE.has(error.name);
        if (!retryable || attempt >= attempts) throw error;
        // Full jitter over 100 ms × 2^attempt, as the SDK's standard retry strategy.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** attempt));
      }
    }
  }

  destroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async send<T>(operation: string, body: string, endpoint: string | undefined): Promise<T> {
    const [region, credentials, configured] = await Promise.all([this.options.region(), this.options.credentials(), endpoint ?? this.options.endpoint?.()]);
    const url = new URL(configured ?? `https://${this.options.service}.${region}.amazonaws.com`);
    const headers: Record<string, string> = {
      'content-type': 'application/x-amz-json-1.0',
      host: url.host,
      'x-amz-date': amzDate((this.options.now ?? Date.now)()),
      'x-amz-target': `${this.options.targetPrefix}.${operation}`,
    };
    if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
    // Encoded once: hashed for the signature and written as is.
    const bytes = Buffer.from(body, 'utf8');
    headers.authorization = this.authorization(headers, url.pathname || '/', bytes, region, credentials);
    headers['content-length'] = String(bytes.length);
    headers['user-agent'] = 'hookagent aws-json/1';
    // Unsigned, as the SDK's recursion detection middleware adds it: X-Ray links the call to the invocation.
    const trace = process.env._X_AMZN_TRACE_ID;
    if (trace && process.env.AWS_LAMBDA_FUNCTION_NAME) headers['x-amzn-trace-id'] = trace;

    const secure = url.protocol === 'https:';
    const response = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)({
        protocol: url.protocol, hostname: url.hostname, port: url.port || (secure ? 443 : 80), path: url.pathname || '/', method: 'POST',
        headers, agent: secure ? this.agents.https : this.agents.http, timeout: this.options.timeoutMs ?? 5_000,
      }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error(`${this.options.service} did not answer within ${this.options.timeoutMs ?? 5_000} ms`), { name: 'TimeoutError' })));
      req.on('error', reject);
      req.end(bytes);
    });
    let parsed: Record<string, unknown> = {};
    try {
      parsed = response.text ? (JSON.parse(response.text) as Record<string, unknown>) : {};
    } catch {
      if (response.status < 300) throw new AwsJsonError('InvalidResponse', `${this.options.service} answered ${response.status} with a body that is not JSON`, 500, {});
    }
    if (response.status >= 200 && response.status < 300) return parsed as T;
    const type = String(parsed.__type ?? parsed.code ?? `Http${response.status}`);
    const name = type.slice(type.lastIndexOf('#') + 1);
    const message = String(parsed.message ?? parsed.Message ?? `${this.options.service} answered ${response.status}`);
    const { __type: _type, message: _m, Message: _M, ...fields } = parsed;
    throw new AwsJsonError(name, message, response.status, fields);
  }

  /** Signature Version 4 of a POST with these headers (all signed) and body. */
  private authorization(headers: Record<string, string>, path: string, body: Buffer, region: string, credentials: AwsCredentials): string {
    const stamp = headers['x-amz-date'] as string;
    const day = stamp.slice(0, 8);
    const scope = `${day}/${region}/${this.options.service}/aws4_request`;
    const names = Object.keys(headers).sort();
    const canonical = [
      'POST', path, '',
      ...names.map((name) => `${name}:${(headers[name] as string).trim().replace(/\s+/g, ' ')}`), '',
      names.join(';'), hex(body),
    ].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', stamp, scope, hex(canonical)].join('\n');
    if (this.signingKey?.scope !== scope || this.signingKey.secret !== credentials.secretAccessKey) {
      const kDate = createHmac('sha256', `AWS4${credentials.secretAccessKey}`).update(day).digest();
      const kRegion = createHmac('sha256', kDate).update(region).digest();
      const kService = createHmac('sha256', kRegion).update(this.options.service).digest();
      this.signingKey = { scope, secret: credentials.secretAccessKey, key: createHmac('sha256', kService).update('aws4_request').digest() };
    }
    const signature = createHmac('sha256', this.signingKey.key).update(toSign).digest('hex');
    return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  }
}

/** What a resolved SDK client configuration offers (DynamoDBClient, SQSClient). */
interface SdkClientLike {
  config: {
    region: () => Promise<string>;
    credentials: () => Promise<AwsCredentials>;
    endpoint?: () => Promise<{ protocol?: string; hostname?: string; port?: number; path?: string; url?: URL }>;
    maxAttempts?: () => Promise<number>;
  };
}

const clients = new WeakMap<object, AwsJsonClient>();

function endpointText(endpoint: { protocol?: string; hostname?: string; port?: number; path?: string; url?: URL }): string {
  if (endpoint.url) return endpoint.url.toString();
  return `${endpoint.protocol ?? 'https:'}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path ?? '/'}`;
}

/**
 * The lean client beside an SDK client (one per SDK client): the same credentials, region,
 * attempts and configured endpoint; else the SDK's environment variables
 * (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL); else the service's regional endpoint.
 */
export function awsJsonBeside(sdk: object, service: 'dynamodb' | 'sqs', env: NodeJS.ProcessEnv = process.env): AwsJsonClient {
  let client = clients.get(sdk);
  if (!client) {
    const config = (sdk as SdkClientLike).config;
    const fromEnv = env[`AWS_ENDPOINT_URL_${service.toUpperCase()}`] ?? env.AWS_ENDPOINT_URL;
    client = new AwsJsonClient({
      service, targetPrefix: service === 'dynamodb' ? 'DynamoDB_20120810' : 'AmazonSQS',
      region: () => config.region(), credentials: () => config.credentials(),
      endpoint: async () => (config.endpoint ? endpointText(await config.endpoint()) : fromEnv),
      ...(config.maxAttempts ? { maxAttempts: config.maxAttempts } : {}),
    });
    clients.set(sdk, client);
  }
  return client;
}
