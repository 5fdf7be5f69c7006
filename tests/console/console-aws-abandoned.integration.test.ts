/**
 * Over an AWS deployment, a request that died after its records were written and before its
 * event was queued (its dedup claim never committed) is `abandoned` in `webhook events`
 * (README, "When it did not fire"). The console over the same tables showed it `queued` for
 * ever: "Not rendered yet", and the status filter `abandoned` found nothing (hunt 10 D2). It
 * now runs the same check: the event page for the records it shows, the list for each
 * subscription at most once a minute.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { ABANDONED_REASON, dedupKeyOf } from '../../functions/core/ingest/abandoned';
import type { EventRecord } from '../../functions/core/types';
import { AbandonedCheck, ABANDONED_CHECK_MS } from '../../cli/console/abandoned-check';
import { BIN, buildCli, runCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { eventually } from '../support/serve';
import { record } from './fixture';

let dynamo: TestDynamo;
let events: DynamoEventLog;
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
}, 60_000);
afterAll(async () => dynamo.close());

async function subscribe(name: string): Promise<void> {
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name, events: [], skills: [], deliver: ['log'], state: 'active', secret: 'whsec_cmVtb3Rlc2VjcmV0cmVtb3Rlc2VjcmV0cmVtb3RlMTI=',
    created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z',
  });
}

/** A `queued` record, attempts 0, whose request claimed its delivery id `agoMs` ago; committed: the event was queued (SQS holds it). */
async function recorded(name: string, agoMs: number, committed = false): Promise<EventRecord> {
  const at = Date.now() - agoMs;
  const r = { ...record(name, at, 'queued'), attempts: 0 };
  const dedup = new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, { now: () => at });
  expect((await dedup.claim(dedupKeyOf(r), { eventId: r.event_id, ttlSeconds: 86_400, staleBefore: at - 60_000 })).kind).toBe('new');
  if (committed) await dedup.commit(dedupKeyOf(r));
  await events.putAll([r]);
  return r;
}

test('a request that died before queueing: abandoned on the event page and in the list, as in webhook events', async () => {
  await subscribe('remote');
  // Ingest wrote the claim and the records, then died (no SQS send, no commit).
  const older = await recorded('remote', 6 * 60_000);
  const dead = await recorded('remote', 5 * 60_000);
  // Controls: an event SQS holds (claim committed), and a request that may still be running (within the lease).
  const accepted = await recorded('remote', 4 * 60_000, true);
  const young = await recorded('remote', 1_000);

  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-abandoned-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' };
  const child = spawn(process.execPath, [BIN, '--config-dir', dir, 'console', '--port', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  type Shown = { records: Array<{ status: string; error: { message: string } | null }> };
  const status = new Map<string, string>();
  let page: Shown;
  let filtered: string[];
  try {
    await eventually(() => /console on http:\/\/127\.0\.0\.1:\d+\/console/.test(out), 'the console to listen');
    const base = /(http:\/\/127\.0\.0\.1:\d+)\/console/.exec(out)![1]!;
    // The event page first, before any list ran the check: it checks the records it shows.
    page = (await (await fetch(`${base}/console/api/events/${dead.event_id}`)).json()) as Shown;
    const list = (await (await fetch(`${base}/console/api/events`)).json()) as { events: Array<{ event_id: string; status: string }> };
    for (const e of list.events) status.set(e.event_id, e.status);
    filtered = ((await (await fetch(`${base}/console/api/events?status=abandoned`)).json()) as { events: Array<{ event_id: string }> }).events.map((e) => e.event_id);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);

  expect(page.records.map((r) => [r.status, r.error?.message])).toEqual([['abandoned', ABANDONED_REASON]]);
  expect(Object.fromEntries(status)).toEqual({ [older.event_id]: 'abandoned', [dead.event_id]: 'abandoned', [accepted.event_id]: 'queued', [young.event_id]: 'queued' });
  expect(filtered.sort()).toEqual([older.event_id, dead.event_id].sort());

  // The CLI over the same tables says the same.
  const cli = await runCli(['--config-dir', dir, 'webhook', 'events', 'remote', '--json'], env);
  expect(cli.code).toBe(0);
  expect(Object.fromEntries((JSON.parse(cli.stdout) as Array<{ event_id: string; status: string }>).map((e) => [e.event_id, e.status]))).toEqual(Object.fromEntries(status));
}, 120_000);

test('webhook event <id> runs the same check: a request that died before queueing reads abandoned, a queued one stays queued', async () => {
  await subscribe('single');
  const dead = await recorded('single', 5 * 60_000);
  const accepted = await recorded('single', 5 * 60_000, true);
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-event-abandoned-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' };
  const statusOf = async (id: string) => {
    const cli = await runCli(['--config-dir', dir, 'webhook', 'event', id, '--json'], env);
    expect(cli.code).toBe(0);
    return (JSON.parse(cli.stdout) as Array<{ status: string }>).map((story) => story.status);
  };
  expect(await statusOf(dead.event_id)).toEqual(['abandoned']);
  expect(await statusOf(accepted.event_id)).toEqual(['queued']);
}, 60_000);

test('the list checks each subscription at most once a minute (it polls every 2 s)', async () => {
  await subscribe('polled');
  let now = Date.now();
  const check = new AbandonedCheck({ now: () => now });
  const stores = { events, dedup: new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, { now: () => now }) };
  const statusOf = async (r: EventRecord) => (await events.get(r.event_id, r.subscription))?.status;

  const first = await recorded('polled', 5 * 60_000);
  await check.subscriptions(stores, ['polled']);
  expect(await statusOf(first)).toBe('abandoned');

  const second = await recorded('polled', 5 * 60_000);
  now += ABANDONED_CHECK_MS - 1;
  await check.subscriptions(stores, ['polled']);
  expect(await statusOf(second)).toBe('queued');
  now += 1;
  await check.subscriptions(stores, ['polled']);
  expect(await statusOf(second)).toBe('abandoned');
});

test('locally (no dedup claims to read) the console leaves records to serve\'s sweep', async () => {
  await subscribe('local-like');
  const r = await recorded('local-like', 5 * 60_000);
  const check = new AbandonedCheck();
  await check.subscriptions({ events }, ['local-like']);
  expect(await check.shown({ events }, [r])).toEqual([r]);
  expect((await events.get(r.event_id, 'local-like'))?.status).toBe('queued');
});
