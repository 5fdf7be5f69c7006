/**
 * The HTTP side of `hookagent serve`: each request becomes an API Gateway HTTP API (v2)
 * event for the same ingest handler as on AWS. The source address is the socket's peer;
 * `X-Forwarded-For` counts only with --trust-proxy, and then only the entry the trusted
 * proxy appended (see forwarded.ts). Bodies are read up to one byte past the limit, so an
 * oversized upload is refused without being held in memory. A request target that cannot
 * be parsed is the client's fault: 400, never 503.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { isUtf8 } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { describeError } from '../../functions/core/errors';
import { RETRY_AFTER_SECONDS } from '../../functions/core/ingest/responses';
import type { Logger } from '../../functions/core/log';
import { forwardedClient, parseRequestTarget, trustedHops } from './forwarded';
import { httpDrain } from './http-drain';

export type ApiHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export interface LocalHttpOptions {
  handler: ApiHandler;
  /** A function when the limit can change while serving (configuration reloads). */
  maxBodyBytes: number | (() => number);
  /** false: the socket's peer; true or N: the address appended by the Nth proxy from us (true = 1). */
  trustProxy: boolean | number;
  logger: Logger;
  /** Answers a request itself when it returns true (the console at /console); else the handler gets it. */
  before?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

function sourceIp(req: IncomingMessage, trustProxy: boolean | number): string {
  const peer = req.socket.remoteAddress ?? '';
  const hops = trustedHops(trustProxy);
  return hops === 0 ? peer : forwardedClient(req.headers['x-forwarded-for'], hops) ?? peer;
}

/** Reads at most `limit` bytes; the rest of an oversized body is discarded as it arrives. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size >= limit) return;
      const room = limit - size;
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(piece);
      size += piece.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function toApiGatewayEvent(req: IncomingMessage, body: Buffer, trustProxy: boolean | number): APIGatewayProxyEventV2 {
  const url = parseRequestTarget(req.url) ?? new URL('http://localhost/');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    requestContext: {
      accountId: 'local', apiId: 'local', domainName: headers.host ?? 'localhost', domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp: sourceIp(req, trustProxy), userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(), routeKey: '$default', stage: '$default', time: new Date(now).toISOString(), timeEpoch: now,
    },
    ...bodyOf(body),
  };
}

const BOM = [0xef, 0xbb, 0xbf];

/**
 * The exact bytes reach the handler either way. Valid UTF-8 (webhook JSON) travels as text,
 * as API Gateway passes text bodies: decoding it is exact both ways, and it spares a base64
 * encoding here and a decoding in ingest (~8 µs of a 20 KB body). Other bytes travel base64,
 * as API Gateway passes binary bodies; so does a body that starts with a byte order mark,
 * which ingest's decoder of bytes drops and a text body would keep.
 */
function bodyOf(body: Buffer): { body: string; isBase64Encoded: boolean } {
  const bom = body.length >= 3 && BOM.every((byte, i) => body[i] === byte);
  if (!bom && isUtf8(body)) return { body: body.toString('utf8'), isBase64Encoded: false };
  return { body: body.toString('base64'), isBase64Encoded: true };
}

function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(result.body ?? '');
}

/** A 503 the sender retries (Retry-After), as ingest's own. */
const unavailable = (message: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 503, headers: { 'content-type': 'application/json', 'retry-after': String(RETRY_AFTER_SECONDS) }, body: JSON.stringify({ status: 'error', code: 'unavailable', message }),
});

const jsonError = (status: number, code: string, message: string) =>
  `HTTP/1.1 ${status} ${message}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ status: 'error', code, message })}`;

export interface LocalHttpServer extends Server {
  /** The graceful stop of SIGINT/SIGTERM (http-drain.ts): resolves when every connection is closed, within `graceMs`. */
  drain(graceMs: number): Promise<void>;
}

export function createLocalHttpServer(options: LocalHttpOptions): LocalHttpServer {
  const server = createServer({ requestTimeout: 30_000 }, (req, res) => {
    drain.track(res);
    if (drain.stopping) {
      // Came on a kept-alive connection after the stop: refused, never reset. The body is read first, so closing does not reset the answer.
      req.on('error', () => undefined).on('end', () => send(res, unavailable('serve is stopping; retry in a moment'))).resume();
      return;
    }
    void (async () => {
      if (!parseRequestTarget(req.url)) {
        options.logger.warn('refused: request target cannot be parsed', { target: String(req.url).slice(0, 200) });
        res.setHeader('connection', 'close');
        send(res, { statusCode: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'error', code: 'bad_request', message: 'Request target cannot be parsed' }) });
        return;
      }
      try {
        if (options.before && (await options.before(req, res))) return;
        const body = await readBody(req, (typeof options.maxBodyBytes === 'function' ? options.maxBodyBytes() : options.maxBodyBytes) + 1);
        send(res, await options.handler(toApiGatewayEvent(req, body, options.trustProxy)));
      } catch (error) {
        options.logger.error('local request failed', { error: describeError(error) });
        if (!res.headersSent) send(res, unavailable('Service temporarily unavailable; retry later'));
      }
    })();
  });
  // Malformed requests and oversized headers get JSON too, never an empty or HTML answer.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    socket.end(tooLarge ? jsonError(431, 'headers_too_large', 'Request headers too large') : jsonError(400, 'bad_request', 'Malformed HTTP request'));
  });
  const drain = httpDrain(server);
  return Object.assign(server, { drain: (graceMs: number) => drain.stop(graceMs) });
}
