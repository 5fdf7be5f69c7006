/** `list`, `show` and `events`: read-only views; secrets only with --show-secret. */
import { HookError } from '../../functions/core/errors';
import type { EventRecord } from '../../functions/core/types';
import { settleAbandoned } from '../../functions/core/ingest/abandoned';
import { describeSubscription, eventJson, eventRow, subscriptionJson, subscriptionRow, table } from '../output';
import { printedBaseUrl, withStores, type CliContext, type Stores } from '../context';
import { senderSetup } from '../setup-hints';
import { commandName } from '../invocation';
import { filteredFor, filteredJson, filteredRow, type FilteredEvent } from './filtered';

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
  ctx.out([describeSubscription(subscription, showSecret), 'endpoints:', ...senderSetup(ctx.config, printedBaseUrl(ctx), subscription, false, ctx.deployment)].join('\n'));
}

/** Records of one subscription, newest first, from `before` on; with `status`, pages on until `limit` match (bounded). */
async function page(stores: Stores, name: string, limit: number, before: EventRecord | undefined, status: string | undefined): Promise<EventRecord[]> {
  if (!status) return stores.events.listBySubscription(name, limit, before);
  const found: EventRecord[] = [];
  let cursor = before;
  for (let pages = 0; pages < 50 && found.length < limit; pages++) {
    const batch = await stores.events.listBySubscription(name, 200, cursor);
    found.push(...batch.filter((r) => r.status === status));
    cursor = batch[batch.length - 1];
    if (batch.length < 200) break;
  }
  return found.slice(0, limit);
}

/** `webhook events <name>` without --follow: a page of events, and the command for the next one. */
export async function printEvents(ctx: CliContext, stores: Stores, name: string, options: { limit: number; json: boolean; status?: string; before?: string }): Promise<void> {
  const { limit } = options;
  // `filtered` rows are requests the filters turned away (the request log), not stored events.
  const onlyFiltered = options.status === 'filtered';
  const status = onlyFiltered ? undefined : options.status;
  if (!(await stores.subscriptions.get(name))) {
    // A deleted subscription's event log stays 14 days (as `delete` says): it can still be listed.
    if ((await stores.events.listBySubscription(name, 1)).length === 0) throw new HookError('subscription_not_found', `No subscription named '${name}'`);
    ctx.warn(`('${name}' was deleted; its events stay in the event log for 14 days.)`);
  }
  let before: EventRecord | undefined;
  if (options.before !== undefined) {
    before = await stores.events.get(options.before, name);
    if (!before) throw new HookError('event_not_found', `No event '${options.before}' for '${name}'; --before takes an event id from an earlier page of 'hookagent webhook events ${name}'`);
  }
  // On AWS, records of requests that died before their event was queued are found here (locally serve sweeps them).
  await settleAbandoned(stores, name);
  const records = onlyFiltered ? [] : await page(stores, name, limit, before, status);
  // On the first page, the requests its payload filters turned away (from the request log) too, newest first.
  const filtered = status || before ? [] : await filteredFor(stores, name, limit, (text) => ctx.warn(text));
  type Row = { at: string; record?: EventRecord; filtered?: FilteredEvent };
  const merged = [...records.map((r): Row => ({ at: r.received_at, record: r })), ...filtered.map((f): Row => ({ at: f.received_at, filtered: f }))]
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
  // Paging follows the event records: a first page full of newer filtered requests still
  // shows the newest record (in place of the oldest filtered row: `--status filtered` lists
  // them all), so the next page's --before has a record to start from.
  if (records.length > 0 && !merged.some((m) => m.record)) merged[merged.length - 1] = { at: records[0]!.received_at, record: records[0] };
  // The last record shown, not the last fetched: records cut from a page shared with
  // filtered rows are older than it, so the next page (--before is exclusive) starts with them.
  const shown = merged.flatMap((m) => (m.record ? [m.record] : []));
  const last = shown[shown.length - 1];
  // On stderr in both forms: `--json` keeps stdout a JSON array, and a script can still tell a full page.
  const olderHint = () => {
    if ((records.length === limit || shown.length < records.length) && last) ctx.warn(`Older events: ${commandName()} webhook events ${name} --limit ${limit}${status ? ` --status ${status}` : ''} --before ${last.event_id}`);
  };
  if (options.json) {
    ctx.out(JSON.stringify(merged.map((m) => (m.record ? eventJson(m.record) : filteredJson(m.filtered as FilteredEvent))), null, 2));
    return olderHint();
  }
  const which = options.status ? `${options.status} ` : '';
  if (merged.length === 0) return ctx.out(options.before ? `No earlier ${which}events for '${name}'.` : `No ${which}events recorded for '${name}' in the last 14 days.`);
  ctx.out(table(['RECEIVED', 'EVENT ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'DETAIL'], merged.map((m) => (m.record ? eventRow(m.record) : filteredRow(m.filtered as FilteredEvent)))));
  olderHint();
}
