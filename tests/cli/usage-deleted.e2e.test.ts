/**
 * `webhook usage` counts the tokens of subscriptions deleted since: their records stay in
 * the event log for 14 days, and the daily budgets counted their tokens. Before, they
 * vanished from the table and its total, and `webhook usage <deleted-name>` refused with
 * "No subscription named". Through the built CLI on the local store.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../functions/core/ports';
import type { QueueMessage } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { openLocalRuntime } from '../../functions/local/compose';
import { buildCli, runCli, tempConfigDir } from '../support/cli';

test('webhook usage counts the tokens of a subscription deleted since', async () => {
  buildCli();
  const dir = tempConfigDir('agent:\n  provider: echo\n', 'hookagent-usage-deleted-');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const hk = (...args: string[]) => runCli(['--config-dir', dir, ...args]);
  for (const name of ['keep', 'gone']) {
    expect(await hk('webhook', 'subscribe', name, '--events', 'pull_request', '--deliver', 'log', '--prompt', 'x')).toMatchObject({ code: 0 });
  }
  const store = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock });
  try {
    const now = new Date().toISOString();
    const subs = Object.fromEntries((await store.subscriptions.list()).map((s) => [s.name, s]));
    const records = ['keep', 'gone'].map((name, i) => {
      const m: QueueMessage = { v: 1, event_id: `evt_usage_${i}`, subscription: name, subscription_created_at: subs[name]!.created_at, source: 'github', event: 'pull_request', delivery_id: `d${i}`, received_at: now, payload: {} };
      return { ...eventRecord(m, 'delivered', now), usage: { provider: 'anthropic', model: 'claude-test', input_tokens: 100, output_tokens: 50, cache_read_tokens: 1000, steps: 1 } };
    });
    await store.events.putAll(records);
  } finally {
    await store.close();
  }
  const before = JSON.parse((await hk('webhook', 'usage', '--json')).stdout) as { total: { total_tokens: number } };
  expect(before.total.total_tokens).toBe(2300);

  expect(await hk('webhook', 'delete', 'gone')).toMatchObject({ code: 0 });
  // The deleted subscription's event is still in the log...
  expect((await hk('webhook', 'event', 'evt_usage_1')).code).toBe(0);
  // ...and its tokens were spent today: the total does not shrink because it was deleted.
  const after = JSON.parse((await hk('webhook', 'usage', '--json')).stdout) as { total: { total_tokens: number }; rows: Array<{ subscription: string; total_tokens: number; deleted?: boolean }> };
  expect(after.total.total_tokens).toBe(2300);
  expect(after.rows.map((r) => [r.subscription, r.total_tokens, r.deleted ?? false])).toEqual([['gone', 1150, true], ['keep', 1150, false]]);
  const table = await hk('webhook', 'usage');
  expect(table.stdout).toMatch(/^gone \(deleted\)\s+anthropic\s+claude-test\s+1\s+100\s+50\s+1000\s+0\s+1150/m);
  expect(table.stdout).toContain('(deleted): a subscription deleted since');
  // Asked for by its name while the log holds its records.
  const one = await hk('webhook', 'usage', 'gone', '--json');
  expect(one).toMatchObject({ code: 0, stderr: '' });
  expect((JSON.parse(one.stdout) as { total: { total_tokens: number } }).total.total_tokens).toBe(1150);
  // A name that never had events is still an error, saying why.
  const none = await hk('webhook', 'usage', 'never-was');
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("No subscription named 'never-was', and the event log holds no events under that name");
}, 90_000);
