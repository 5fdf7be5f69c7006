/** `list`, `show` and `events`: read-only views; secrets only with --show-secret. */
import { HookError } from '../../functions/core/errors';
import type { EventRecord } from '../../functions/core/types';
import { describeSubscription, eventJson, eventRow, subscriptionJson, subscriptionRow, table } from '../output';
import { withStores, type CliContext } from '../context';
import { filteredFor, filteredJson, filteredRow, type FilteredEvent } from './filtered';

export async function list(ctx: CliContext, json: boolean): Promise<void> {
  const subscriptions = await withStores(ctx, (stores) => stores.subscriptions.list());
  if (json) return ctx.out(JSON.stringify(subscriptions.map((s) => subscriptionJson(s)), null, 2));
  if (subscriptions.length === 0) {
    return ctx.out("No subscriptions yet. Create one with: hookagent webhook subscribe <name> --events pull_request --prompt 'Review {pull_request.html_url}'");
  }
  ctx.out(table(['NAME', 'STATE', 'EVENTS', 'DELIVER', 'SKILLS', 'CREATED'], subscriptions.map(subscriptionRow)));
}

export async function show(ctx: CliContext, name: string, json: boolean, showSecret: boolean): Promise<void> {
  const subscription = await withStores(ctx, (stores) => stores.subscriptions.get(name));
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  ctx.out(json ? JSON.stringify(subscriptionJson(subscription, showSecret), null, 2) : describeSubscription(subscription, showSecret));
}

export async function events(ctx: CliContext, name: string, limit: number, json: boolean): Promise<void> {
  const [records, filtered] = await withStores(ctx, async (stores) => {
    if (!(await stores.subscriptions.get(name))) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
    return Promise.all([stores.events.listBySubscription(name, limit), filteredFor(stores, name, limit)]);
  });
  // Events and the requests its payload filters turned away (from the request log), newest first.
  type Row = { at: string; record?: EventRecord; filtered?: FilteredEvent };
  const merged = [...records.map((r): Row => ({ at: r.received_at, record: r })), ...filtered.map((f): Row => ({ at: f.received_at, filtered: f }))]
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
  if (json) return ctx.out(JSON.stringify(merged.map((m) => (m.record ? eventJson(m.record) : filteredJson(m.filtered as FilteredEvent))), null, 2));
  if (merged.length === 0) return ctx.out(`No events recorded for '${name}' in the last 14 days.`);
  ctx.out(table(['RECEIVED', 'EVENT ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'DETAIL'], merged.map((m) => (m.record ? eventRow(m.record) : filteredRow(m.filtered as FilteredEvent)))));
}
