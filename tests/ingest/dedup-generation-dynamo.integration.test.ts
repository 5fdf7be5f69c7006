/**
 * A custom endpoint's delivery ids are claimed per subscription, not per name: a
 * subscription deleted and created again under its name (a new `created_at`) takes a
 * delivery id the deleted one took, while repeats to either are still `duplicate`. Before,
 * the claim `custom/<name>#<id>` outlived the subscription for 24 h and the new one
 * answered `duplicate` to a sender reusing its ids (a restarted counter, a fixed test id),
 * and nothing ran. The ingest Lambda's handler over the DynamoDB adapters (dynalite), wired
 * as the stage wires them: the claim with the records in one transaction, the commit with
 * the request-log entry.
 */
import { GITHUB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';
import { apiEvent, githubEvent } from '../support/requests';
import type { Subscription } from '../../functions/core/types';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

/** A custom endpoint's request with a sender-chosen delivery id (`X-Request-Id`). */
async function send(subscription: Subscription, deliveryId: string, body: unknown): Promise<Record<string, unknown>> {
  const result = await h.handler(apiEvent({
    path: `/webhooks/custom/${subscription.name}`, body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${subscription.secret}`, 'x-request-id': deliveryId },
  }));
  return { http: result.statusCode, ...bodyOf(result) };
}

test('a subscription created again under the name takes a delivery id the deleted one took; repeats to each are duplicates', async () => {
  const first = await h.addSubscription({ name: 'alerts', events: [] });
  const accepted = await send(first, 'alert-1', { type: 'DiskFull', n: 1 });
  expect(accepted).toMatchObject({ http: 202, status: 'accepted', delivery_id: 'alert-1', subscriptions: ['alerts'] });
  expect(await send(first, 'alert-1', { type: 'DiskFull', n: 1 })).toEqual({ http: 200, status: 'duplicate', delivery_id: 'alert-1' });
  // Its log line names the event the delivery id is a duplicate of.
  expect(h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === 'duplicate delivery').at(-1)).toMatchObject({ event_id: accepted.event_id, delivery_id: 'alert-1' });

  await h.subscriptions.delete('alerts');
  h.clock.advance(5_000);
  const again = await h.addSubscription({ name: 'alerts', events: [], secret: 'whsec_YWdhaW5hZ2FpbmFnYWluYWdhaW5hZ2FpbmFnYWluMTI=' });
  expect(again.created_at).not.toBe(first.created_at);
  h.queue.sent.length = 0;
  const taken = await send(again, 'alert-1', { type: 'DiskFull', n: 2 });
  expect(taken).toMatchObject({ http: 202, status: 'accepted', delivery_id: 'alert-1', subscriptions: ['alerts'] });
  expect(taken.event_id).not.toBe(accepted.event_id);
  expect(h.queue.sent).toEqual([expect.objectContaining({ event_id: taken.event_id, subscription: 'alerts', subscription_created_at: again.created_at, payload: { type: 'DiskFull', n: 2 } })]);
  // Committed with the request log's entry under the same key: a repeat is a duplicate, not 503 in_progress.
  expect(await send(again, 'alert-1', { type: 'DiskFull', n: 2 })).toEqual({ http: 200, status: 'duplicate', delivery_id: 'alert-1' });
  expect(h.queue.sent).toHaveLength(1);

  const log = await h.requests.list({ endpoint: 'custom/alerts', limit: 10 });
  expect(log.map((e) => [e.outcome, e.delivery_id, e.event_id ?? null]).reverse()).toEqual([
    ['accepted', 'alert-1', accepted.event_id], ['duplicate', 'alert-1', null], ['accepted', 'alert-1', taken.event_id], ['duplicate', 'alert-1', null],
  ]);
  expect(await h.events.getEvent(taken.event_id as string)).toEqual([expect.objectContaining({ subscription: 'alerts', status: 'queued', delivery_id: 'alert-1' })]);
});

test('the 24 h window and other endpoints are as before: an id is free again after it, and a code host\'s ids are not per subscription', async () => {
  const sub = await h.addSubscription({ name: 'window', events: [] });
  expect(await send(sub, 'w-1', { n: 1 })).toMatchObject({ http: 202, status: 'accepted' });
  h.clock.advance(24 * 3600 * 1000 - 1_000);
  expect(await send(sub, 'w-1', { n: 1 })).toMatchObject({ http: 200, status: 'duplicate' });
  h.clock.advance(2_000);
  expect(await send(sub, 'w-1', { n: 1 })).toMatchObject({ http: 202, status: 'accepted' });

  // GitHub's delivery ids stay claimed per endpoint: a new subscription does not take a delivery GitHub sent before.
  const pr = JSON.stringify({ action: 'opened', number: 4, pull_request: { number: 4 }, repository: { full_name: 'o/r' } });
  await h.addSubscription({ name: 'prs', events: ['pull_request'] });
  expect(bodyOf(await h.handler(githubEvent('pull_request', pr, GITHUB_SECRET, { 'x-github-delivery': 'gh-1' })))).toMatchObject({ status: 'accepted', subscriptions: ['prs'] });
  await h.subscriptions.delete('prs');
  h.clock.advance(1_000);
  await h.addSubscription({ name: 'prs', events: ['pull_request'] });
  expect(bodyOf(await h.handler(githubEvent('pull_request', pr, GITHUB_SECRET, { 'x-github-delivery': 'gh-1' })))).toEqual({ status: 'duplicate', delivery_id: 'gh-1' });
});
