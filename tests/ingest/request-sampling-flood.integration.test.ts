/**
 * The request log's sampling under a scanner's flood, on the real local store (SQLite)
 * through the ingest Lambda's handler: a custom name that names no subscription is
 * recorded under `custom/?`, so made-up names share one sampling window, whatever the
 * method; and a flood of new names never resets a real endpoint's window nor loses its
 * skipped count (README "Request log").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { REJECTION_SAMPLES } from '../../functions/core/ingest/request-log';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import type { Subscription } from '../../functions/core/types';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { ManualClock } from '../support/recording-queue';
import { apiEvent, type EventOptions } from '../support/requests';

const FLOOD = 2000;
let dir: string;
let runtime: LocalRuntime;
let clock: ManualClock;
let send: (options: EventOptions) => Promise<number>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'request-sampling-'));
  clock = new ManualClock();
  runtime = await openLocalRuntime(dir, { role: 'serve', clock });
  const ingest = createIngest(runtime.ingestDeps({ webhooks: { github: { secret: ['gh'] }, max_payload_size: 1024 * 1024 } }, silentLogger));
  const handler = apiGatewayHandler(async () => ingest, silentLogger);
  send = async (options) => ((await handler(apiEvent({ body: '{}', ...options, headers: { 'content-type': 'application/json', ...options.headers } }))) as APIGatewayProxyStructuredResultV2).statusCode!;
});
afterEach(async () => {
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

const subscription = (name: string): Subscription => ({ name, events: [], skills: [], deliver: [], state: 'active', created_at: '', updated_at: '', secret: 'whsec-alerts' });
const standsFor = (rows: Array<{ count?: number }>) => rows.reduce((n, r) => n + (r.count ?? 1), 0);

test('2,000 POSTs to made-up custom names in a minute: 10 rows under custom/?, and the next minute\'s first row stands for the rest', async () => {
  const statuses = new Set<number>();
  for (let i = 0; i < FLOOD; i++) statuses.add(await send({ path: `/webhooks/custom/scan${i}` }));
  expect([...statuses]).toEqual([404]);
  const rows = await runtime.requests.list({ limit: 10_000 });
  expect(rows).toHaveLength(REJECTION_SAMPLES);
  expect(new Set(rows.map((r) => r.endpoint))).toEqual(new Set(['custom/?']));
  // The name is still in the message: a user can tell which name the sender used.
  expect(rows.find((r) => r.message === "No subscription named 'scan0'")).toMatchObject({ outcome: 'not_found', status: 404 });

  clock.advance(60_000);
  expect(await send({ path: '/webhooks/custom/scan-late' })).toBe(404);
  const after = await runtime.requests.list({ limit: 10_000, endpoint: 'custom/?' });
  expect(after).toHaveLength(REJECTION_SAMPLES + 1);
  expect(after[0]).toMatchObject({ count: FLOOD - REJECTION_SAMPLES + 1 });
  expect(standsFor(after)).toBe(FLOOD + 1);
});

test('GETs to made-up custom names (405) share custom/? too; a real subscription keeps its own endpoint and window', async () => {
  await runtime.subscriptions.create(subscription('alerts'));
  for (let i = 0; i < 100; i++) expect(await send({ method: 'GET', path: `/webhooks/custom/probe${i}`, body: undefined })).toBe(405);
  for (let i = 0; i < 3; i++) expect(await send({ method: 'GET', path: '/webhooks/custom/alerts', body: undefined })).toBe(405);
  expect(await send({ path: '/webhooks/custom/alerts', headers: { authorization: 'Bearer wrong' } })).toBe(401);

  const made = await runtime.requests.list({ limit: 1000, endpoint: 'custom/?' });
  expect(made).toHaveLength(REJECTION_SAMPLES);
  expect(made.every((r) => r.outcome === 'method_not_allowed')).toBe(true);
  const real = await runtime.requests.list({ limit: 1000, endpoint: 'custom/alerts' });
  expect(real.map((r) => r.outcome).sort()).toEqual(['method_not_allowed', 'method_not_allowed', 'method_not_allowed', 'rejected_signature']);
  expect(await runtime.requests.list({ limit: 1000 })).toHaveLength(REJECTION_SAMPLES + 4);
});

test('2,000 bad signatures to /webhooks/github, each followed by a made-up custom name: 10 github rows, and none of the 2,000 lost', async () => {
  const badSignature = { path: '/webhooks/github', headers: { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00' } };
  for (let i = 0; i < FLOOD; i++) {
    expect(await send(badSignature)).toBe(401);
    expect(await send({ path: `/webhooks/custom/scan${i}` })).toBe(404);
  }
  expect(await runtime.requests.list({ limit: 10_000, endpoint: 'github' })).toHaveLength(REJECTION_SAMPLES);

  clock.advance(60_000);
  expect(await send(badSignature)).toBe(401);
  const github = await runtime.requests.list({ limit: 10_000, endpoint: 'github' });
  expect(github).toHaveLength(REJECTION_SAMPLES + 1);
  expect(github[0]).toMatchObject({ outcome: 'rejected_signature', count: FLOOD - REJECTION_SAMPLES + 1 });
  expect(standsFor(github)).toBe(FLOOD + 1);
});
