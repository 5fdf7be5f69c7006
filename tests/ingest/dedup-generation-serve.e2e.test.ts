/**
 * A custom endpoint's delivery ids are claimed per subscription, not per name, end to end
 * through `hookagent serve` (the SQLite store's one-write accept) over HTTP on 127.0.0.1,
 * the built CLI and a local Telegram server: a subscription deleted and created again
 * under its name runs an alert whose delivery id the deleted one took, while repeats to
 * either answer `duplicate`. Before, the new subscription answered `duplicate` for 24 h to
 * a sender reusing its ids, and nothing ran.
 */
import { eventually } from '../support/serve';
import { useServeWithTelegram } from '../support/serve-telegram';

const GH_SECRET = 'dedup-generation-github-secret';
const h = useServeWithTelegram({ prefix: 'hookagent-dedup-generation-', webhooks: '{ github: { secret: ${GH_SECRET} } }', env: { GH_SECRET } });
const { cli, texts } = h;

/** `alerts` created (again): its custom endpoint's secret. */
async function subscribe(): Promise<string> {
  const created = await cli('webhook', 'subscribe', 'alerts', '--agent', 'none', '--deliver', 'messenger', '--prompt', 'ALERT {n}');
  expect([created.code, created.stderr]).toEqual([0, expect.any(String)]);
  return /whsec_\S+/.exec(created.stdout)![0];
}

async function send(secret: string, deliveryId: string, n: number): Promise<Record<string, unknown>> {
  const response = await fetch(`${h.serve.url}/webhooks/custom/alerts`, {
    method: 'POST', body: JSON.stringify({ n }), headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, 'x-request-id': deliveryId },
  });
  return { http: response.status, ...((await response.json()) as Record<string, unknown>) };
}

async function status(eventId: string): Promise<string> {
  const shown = await cli('webhook', 'event', eventId, '--json');
  expect(shown.code).toBe(0);
  return (JSON.parse(shown.stdout) as Array<{ status: string }>)[0]!.status;
}

test('a subscription created again under the name runs an alert whose delivery id the deleted one took; repeats stay duplicates', async () => {
  const secret = await subscribe();
  const first = await send(secret, 'alert-1', 1);
  expect(first).toMatchObject({ http: 202, status: 'accepted', subscriptions: ['alerts'] });
  expect(await send(secret, 'alert-1', 1)).toEqual({ http: 200, status: 'duplicate', delivery_id: 'alert-1' });
  await eventually(() => texts().includes('ALERT 1'), 'the first alert to be delivered');

  expect((await cli('webhook', 'delete', 'alerts')).code).toBe(0);
  const again = await subscribe();
  const second = await send(again, 'alert-1', 2);
  expect(second).toMatchObject({ http: 202, status: 'accepted', delivery_id: 'alert-1', subscriptions: ['alerts'] });
  expect(await send(again, 'alert-1', 2)).toEqual({ http: 200, status: 'duplicate', delivery_id: 'alert-1' });
  await eventually(async () => (await status(second.event_id as string)) === 'delivered', 'the new subscription\'s alert to be delivered');
  expect(texts()).toEqual(['ALERT 1', 'ALERT 2']);

  // The request log, `webhook event` and `webhook replay` read the events as before.
  const log = JSON.parse((await cli('webhook', 'requests', '--endpoint', 'custom/alerts', '--json')).stdout) as Array<{ outcome: string; delivery_id: string; event_id?: string }>;
  expect(log.map((e) => [e.outcome, e.delivery_id, e.event_id ?? null]).reverse()).toEqual([
    ['accepted', 'alert-1', first.event_id], ['duplicate', 'alert-1', null], ['accepted', 'alert-1', second.event_id], ['duplicate', 'alert-1', null],
  ]);
  const replayed = await cli('webhook', 'replay', second.event_id as string);
  expect([replayed.code, replayed.stdout]).toEqual([0, expect.stringContaining(`for 'alerts' (a replay of ${second.event_id as string})`)]);
  await eventually(() => texts().length === 3, 'the replay to be delivered');
  expect(texts()).toEqual(['ALERT 1', 'ALERT 2', 'ALERT 2']);
}, 90_000);
