/**
 * Resume from the console runs the CLI's code with the same stores (hunt 8 D2): a held event
 * whose payload is kept in the payload store (`payload_ref`, bodies over 200 KiB) is checked
 * against the subscription's filters as they are now, as `hookagent webhook resume` does.
 */
import { resume as cliResume } from '../../cli/webhook/state';
import type { CliContext, Stores } from '../../cli/context';
import type { EventRecord } from '../../functions/core/types';
import { record, startConsoleFixture, type ConsoleFixture } from './fixture';

let fx: ConsoleFixture;
beforeAll(async () => { fx = await startConsoleFixture(); }, 30_000);
afterAll(async () => fx.close());

/** A held pull_request.opened for 'pr-review' whose payload (a draft, over 200 KiB) is kept in the payload store. */
async function heldDraft(atMs: number): Promise<EventRecord> {
  const subscription = (await fx.subscriptions.get('pr-review'))!;
  const base = record('pr-review', atMs, 'held');
  const body = JSON.stringify({ action: 'opened', number: 9, pull_request: { draft: true, title: 'WIP' }, padding: 'x'.repeat(210 * 1024) });
  const ref = await fx.store.payloads.put(base.event_id, body);
  const { payload: _inline, ...message } = base.message;
  const held: EventRecord = { ...base, message: { ...message, action: 'opened', payload_ref: ref, subscription_created_at: subscription.created_at } };
  await fx.events.putAll([held]);
  return held;
}

/** Paused, with a payload filter (as `webhook update --filter` sets it) that the draft does not pass. */
async function pauseWithFilter(): Promise<void> {
  const subscription = (await fx.subscriptions.get('pr-review'))!;
  const at = new Date().toISOString();
  await fx.subscriptions.put({ ...subscription, state: 'paused', filters: ['pull_request.draft == false'], updated_at: at, routing_changed_at: at });
}

test('the CLI resume does not run a held draft the filters no longer take (the behaviour the console must match)', async () => {
  await pauseWithFilter();
  const held = await heldDraft(Date.now() - 60_000);
  const lines: string[] = [];
  const stores: Stores = { subscriptions: fx.subscriptions, events: fx.events, queue: fx.queue, payloads: fx.store.payloads, where: 'the local store', close: async () => {} };
  const ctx = { out: (t: string) => lines.push(t), warn: (t: string) => lines.push(t), openStores: async () => stores } as unknown as CliContext;
  await cliResume(ctx, 'pr-review', false);
  expect((await fx.events.get(held.event_id, 'pr-review'))!.status).toBe('suppressed');
  expect(lines.join('\n')).toContain('1 held event(s) were not run');
});

test('Resume from the console reads the held payload from the payload store and does not run the draft either', async () => {
  await pauseWithFilter();
  const held = await heldDraft(Date.now() - 30_000);
  const page = await fetch(`${fx.url}/console`);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())![1]!;
  const answer = await fetch(`${fx.url}/console/api/subscriptions/pr-review/resume`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: '{}' });
  expect(answer.status).toBe(200);
  const { messages } = (await answer.json()) as { messages: string[] };
  expect({ status: (await fx.events.get(held.event_id, 'pr-review'))!.status, messages }).toEqual({
    status: 'suppressed', messages: [expect.stringContaining('1 held event(s) were not run')],
  });
  // Nothing was sent to the worker for it.
  expect((await fx.queue.receive(10)).map((m) => (JSON.parse(m.body) as { event_id: string }).event_id)).not.toContain(held.event_id);
});
