/**
 * The event page's request (HTTP answer, header names, candidate verdicts) comes from the
 * request log, which keeps 7 days. It is found in a window around the event's own time, at
 * its endpoint, among the outcomes that store events, not among the newest 1,000 entries of
 * every kind (hunt 8 D6): on the local store's SQLite request log and on DynamoDB's
 * (dynalite). What came after the window is not read (`RequestQuery.until`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { systemClock, type RequestLog } from '../../functions/core/ports';
import type { RequestRecord } from '../../functions/core/types';
import { createConsoleHandler } from '../../cli/console/handler';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { startConsoleFixture, type ConsoleFixture } from './fixture';

let fx: ConsoleFixture;
let dynamo: TestDynamo;
beforeAll(async () => {
  fx = await startConsoleFixture();
  dynamo = await startDynalite('prod');
}, 30_000);
afterAll(async () => {
  await dynamo?.close();
  await fx?.close();
});

/** The event page's `request`, from a console over the fixture's stores and `requests`. */
async function requestShown(requests: RequestLog, eventId: string): Promise<{ request_id: string; outcome: string } | null> {
  const handler = createConsoleHandler({ subscriptions: fx.subscriptions, events: fx.events, queue: fx.queue, payloads: fx.store.payloads, requests, publicUrl: '', where: 'the local store' });
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/console/api/events/${eventId}`);
    return ((await answer.json()) as { request: { request_id: string; outcome: string } | null }).request;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const logs: Array<[string, () => RequestLog]> = [
  ['SQLite', () => fx.store.requests],
  ['DynamoDB (dynalite)', () => new DynamoRequestLog(dynamo.client, dynamo.tables.requests, systemClock)],
];

test.each(logs)("%s: an event's request is found after more than 1,000 newer requests, a later duplicate delivery among them", async (_name, open) => {
  const requests = open();
  const at = Date.parse(fx.rich.received_at);
  const entry = (i: number, extra: Partial<RequestRecord>): RequestRecord => ({
    request_id: `req_n${String(i).padStart(5, '0')}`, received_at: new Date(at + 50 + i * 100).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'not_handled', event: 'push', header_names: [], ...extra,
  });
  await requests.record({
    request_id: 'req_event', received_at: new Date(at + 40).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', event: 'pull_request', action: 'opened',
    delivery_id: fx.rich.delivery_id, event_id: fx.rich.event_id, header_names: ['x-github-event', 'x-hub-signature-256'],
    candidates: [{ subscription: 'pr-review', matched: true, reason: 'event pull_request.opened matches' }],
  });
  const later: RequestRecord[] = [];
  // Pushes and check runs nothing takes, and events stored for another endpoint, within the 7 days kept.
  for (let i = 1; i <= 1001; i++) later.push(entry(i, {}));
  for (let i = 1002; i <= 1300; i++) later.push(entry(i, { endpoint: 'gitlab', outcome: 'accepted', event: 'merge_request', event_id: `evt_other${i}` }));
  for (const request of later) await requests.record(request);
  expect(await requestShown(requests, fx.rich.event_id)).toMatchObject({ request_id: 'req_event', outcome: 'accepted' });
  // GitHub delivering it again, answered as a duplicate with the same event id: the request shown is still the one that stored it.
  await requests.record(entry(1301, { request_id: 'req_dup', outcome: 'duplicate', status: 200, event: 'pull_request', event_id: fx.rich.event_id }));
  expect(await requestShown(requests, fx.rich.event_id)).toMatchObject({ request_id: 'req_event', outcome: 'accepted' });
}, 120_000);

test('an event that came from no request (a replay) shows none', async () => {
  const replay = await fx.addEvent({ subscription: 'pr-review', status: 'queued' });
  await fx.events.putAll([{ ...replay, message: { ...replay.message, replay_of: fx.rich.event_id } }]);
  expect(await requestShown(fx.store.requests, replay.event_id)).toBeNull();
});

test('SQLite: found after more than 10,000 newer requests that stored events at the same endpoint (only the window around it is read)', async () => {
  const requests = fx.store.requests;
  const event = await fx.addEvent({ subscription: 'pr-review', status: 'delivered' });
  const at = Date.parse(event.received_at);
  await requests.record({ request_id: 'req_window', received_at: new Date(at).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', event: 'pull_request', event_id: event.event_id, header_names: [] });
  for (let i = 1; i <= 10_050; i++) {
    await requests.record({ request_id: `req_w${String(i).padStart(6, '0')}`, received_at: new Date(at + 61_000 + i).toISOString(), endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted', event: 'pull_request', event_id: `evt_w${i}`, header_names: [] });
  }
  expect(await requestShown(requests, event.event_id)).toMatchObject({ request_id: 'req_window' });
}, 120_000);

test.each(logs)('%s: list({ since, until }) reads only that window, newest first', async (_name, open) => {
  const requests = open();
  const base = Date.now() - 3_600_000;
  const times = [0, 1_000, 2_000, 3_000].map((d) => base + d);
  for (const [i, t] of times.entries()) await requests.record({ request_id: `req_u${i}`, received_at: new Date(t).toISOString(), endpoint: 'custom/until', method: 'POST', status: 202, outcome: 'accepted', header_names: [] });
  const listed = await requests.list({ endpoint: 'custom/until', since: base + 1_000, until: base + 2_000, limit: 10 });
  expect(listed.map((r) => r.request_id)).toEqual(['req_u2', 'req_u1']);
  expect(await requests.list({ endpoint: 'custom/until', since: base + 2_500, until: base + 1_500, limit: 10 })).toEqual([]);
});
