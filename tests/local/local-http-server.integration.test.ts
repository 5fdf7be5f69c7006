/**
 * serve's HTTP side in front of the real ingest handler (stores on dynalite), over real
 * HTTP on 127.0.0.1: bodies reach ingest as exactly the bytes sent, as text when they are
 * valid UTF-8 and base64 otherwise, and every kind of body gets the answer it got when all
 * bodies travelled base64.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signHub } from '../../functions/core/auth/signatures';
import { silentLogger } from '../../functions/core/log';
import { createLocalHttpServer } from '../../cli/local/http-server';
import { GITHUB_SECRET, startHarness, type Harness } from '../support/ingest-harness';

let h: Harness;
let url: string;
let close: () => Promise<void>;
const seen: APIGatewayProxyEventV2[] = [];

beforeAll(async () => {
  h = await startHarness();
  await h.addSubscription({ name: 'all', events: ['*'] });
  const server = createLocalHttpServer({
    handler: (event) => {
      seen.push(event);
      return h.handler(event);
    },
    maxBodyBytes: 64 * 1024, trustProxy: false, logger: silentLogger,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await close();
  await h.close();
});

let delivery = 0;
function post(body: Buffer): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': `d-${delivery++}`, 'x-hub-signature-256': signHub(body, GITHUB_SECRET) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The bytes the handler received, decoded from the event as API Gateway's consumers do. */
const bytesOf = (event: APIGatewayProxyEventV2) => Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');

test('valid UTF-8 arrives as text, byte for byte, and its characters reach the queued payload', async () => {
  const body = Buffer.from(JSON.stringify({ action: 'opened', issue: { title: 'café 😀 — ünïcode', number: 7 } }));
  const answer = await post(body);
  expect(answer.status).toBe(202);
  const event = seen.at(-1)!;
  expect(event.isBase64Encoded).toBe(false);
  expect(bytesOf(event).equals(body)).toBe(true);
  const sent = h.queue.sent.find((m) => m.event_id === answer.json.event_id);
  expect(sent?.payload).toMatchObject({ issue: { title: 'café 😀 — ünïcode' } });
});

test('a body that starts with a byte order mark arrives as base64 and is accepted, as before', async () => {
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"action":"opened","issue":{"number":8}}')]);
  const answer = await post(body);
  expect(answer.status).toBe(202);
  const event = seen.at(-1)!;
  expect(event.isBase64Encoded).toBe(true);
  expect(bytesOf(event).equals(body)).toBe(true);
});

test.each([
  ['a byte that is never UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])],
  ['an encoded lone surrogate', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])],
  ['an overlong encoding', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])],
  ['a character cut off at the end', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82])],
])('%s arrives as base64, exact, and is refused as not valid UTF-8 (signed, so it is the body that is refused)', async (_name, body) => {
  const answer = await post(body);
  expect(answer.status).toBe(400);
  expect(answer.json).toMatchObject({ code: 'invalid_json' });
  expect(String(answer.json.message)).toContain('UTF-8');
  const event = seen.at(-1)!;
  expect(event.isBase64Encoded).toBe(true);
  expect(bytesOf(event).equals(body)).toBe(true);
});

test('an empty body arrives as empty text and is refused as malformed JSON', async () => {
  const answer = await post(Buffer.alloc(0));
  expect(answer.status).toBe(400);
  expect(answer.json).toMatchObject({ code: 'invalid_json' });
  expect(seen.at(-1)).toMatchObject({ body: '', isBase64Encoded: false });
});
