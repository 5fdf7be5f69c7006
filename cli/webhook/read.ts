/** `list`, `show` and `events`: read-only views; secrets only with --show-secret. */
import { HookError } from '../../functions/core/errors';
import type { EventRecord } from '../../functions/core/types';
import { describeSubscription, eventJson, eventRow, subscriptionJson, subscriptionRow, table } from '../output';
import { baseUrl, withStores, type CliContext } from '../context';
import { senderSetup } from '../setup-hints';
import { commandName } from '../invocation';

export async function list(ctx: CliContext, json: boolean): Promise<void> {
  const subscriptions = await withStores(ctx, (stores) => stores.subscriptions.list());
  if (json) return ctx.out(JSON.stringify(subscriptions.map((s) => subscriptionJson(s)), null, 2));
  if (subscriptions.length === 0) {
    return ctx.out(`No subscriptions yet. Create one with: ${commandName()} webhook subscribe <name> --events pull_request --prompt 'Review {pull_request.html_url}'`);
  }
  ctx.out(table(['NAME', 'STATE', 'EVENTS', 'DELIVER', 'SKILLS', 'CREATED'], subscriptions.map(subscriptionRow)));
}

export async function show(ctx: CliContext, name: string, json: boolean, showSecret: boolean): Promise<void> {
  const subscription = await withStores(ctx, (stores) => stores.subscriptions.get(name));
  if (!subscription) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
  if (json) return ctx.out(JSON.stringify(subscriptionJson(subscription, showSecret), null, 2));
  ctx.out([describeSubscription(subscription, showSecret), 'endpoints:', ...senderSetup(ctx.config, baseUrl(ctx.config), subscription, false)].join('\n'));
}

export async function events(ctx: CliContext, name: string, limit: number, json: boolean, beforeId?: string): Promise<void> {
  const records = await withStores(ctx, async (stores) => {
    if (!(await stores.subscriptions.get(name))) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
    let before: EventRecord | undefined;
    if (beforeId !== undefined) {
      before = await stores.events.get(beforeId, name);
      if (!before) throw new HookError('event_not_found', `No event '${beforeId}' for '${name}'; --before takes an event id from an earlier page of 'hookagent webhook events ${name}'`);
    }
    return stores.events.listBySubscription(name, limit, before);
  });
  if (json) return ctx.out(JSON.stringify(records.map(eventJson), null, 2));
  if (records.length === 0) return ctx.out(beforeId ? `No earlier events for '${name}'.` : `No events recorded for '${name}' in the last 14 days.`);
  ctx.out(table(['RECEIVED', 'EVENT ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'DETAIL'], records.map(eventRow)));
  const last = records[records.length - 1];
  if (records.length === limit && last) ctx.out(`\nOlder events: hookagent webhook events ${name} --limit ${limit} --before ${last.event_id}`);
}
