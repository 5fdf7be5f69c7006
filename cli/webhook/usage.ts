/**
 * `webhook usage [<name>] [--since 7d] [--json]`: the tokens the agent used, summed per
 * subscription and model from the event log (kept 14 days), with the events, steps and
 * tool calls behind them. Deleted subscriptions count too: their tokens were spent, and
 * the daily budgets counted them. `--since` selects by when the tokens were spent, as the
 * daily budgets count them, not by when their event arrived (spentAt).
 */
import { HookError } from '../../functions/core/errors';
import { usageEstimated } from '../../functions/core/agent/run-record';
import type { EventRecord } from '../../functions/core/types';
import { table } from '../output';
import { withStores, type CliContext } from '../context';
import { recordedNames } from '../recorded-names';

/** Records read per subscription; the event log keeps 14 days. */
export const USAGE_SCAN_LIMIT = 10_000;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `7d`, `24h`, `90m`, `2w`, or a date/time (`2026-11-01`, ISO 8601): the epoch ms it starts at. */
export function parseSince(value: string, nowMs: number): number {
  const match = /^(\d+)\s*([mhdw])$/.exec(value.trim());
  if (match) return nowMs - Number(match[1]) * (UNITS[match[2] as string] as number);
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
  const at = date ? Date.parse(value.trim()) : Number.NaN;
  // Date.parse rolls 2026-02-30 over to March 2: a day the month does not have is no date.
  if (date && !Number.isNaN(at)) {
    const [, y, m, d] = date.map(Number) as [number, number, number, number];
    const day = new Date(Date.UTC(y, m - 1, d));
    if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) throw new HookError('invalid_since', `--since '${value}': ${date[0]} is not a day of the calendar`);
  }
  if (Number.isNaN(at)) throw new HookError('invalid_since', `--since '${value}' is neither a duration (7d, 24h, 90m, 2w) nor a date (2026-11-01, 2026-11-01T12:00:00Z)`);
  return at;
}

export interface UsageRow {
  subscription: string;
  provider: string;
  model: string;
  events: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  steps: number;
  tool_calls: number;
  /** Events whose tokens are (partly) hookagent's estimate: the provider reported none. Absent when 0. */
  estimated_events?: number;
  /** The subscription was deleted since (its records stay 14 days). Absent otherwise. */
  deleted?: true;
}

/**
 * When a record's tokens were spent (epoch ms): its usage's `spent_at`, the latest run that
 * spent any (the daily budget charged them then); records written before that field, when
 * they arrived. An event held or dead-lettered for days runs after it arrived, never before,
 * so the listing (newest arrivals first, over the whole log) reaches it.
 */
export function spentAt(record: EventRecord): number {
  return Date.parse(record.usage?.spent_at ?? record.received_at);
}

export function sumUsage(records: EventRecord[]): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const r of records) {
    const u = r.usage;
    if (!u) continue;
    const key = `${r.subscription}\u0000${u.provider}\u0000${u.model ?? ''}`;
    const row = rows.get(key) ?? {
      subscription: r.subscription, provider: u.provider, model: u.model ?? '-', events: 0, input_tokens: 0, output_tokens: 0,
      cache_read_tokens: 0, cache_write_tokens: 0, total_tokens: 0, steps: 0, tool_calls: 0,
    };
    row.events += 1;
    row.input_tokens += u.input_tokens;
    row.output_tokens += u.output_tokens;
    row.cache_read_tokens += u.cache_read_tokens ?? 0;
    row.cache_write_tokens += u.cache_write_tokens ?? 0;
    row.total_tokens += u.input_tokens + u.output_tokens + (u.cache_read_tokens ?? 0) + (u.cache_write_tokens ?? 0);
    row.steps += u.steps;
    row.tool_calls += u.tool_calls?.length ?? 0;
    if (usageEstimated(u)) row.estimated_events = (row.estimated_events ?? 0) + 1;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.subscription.localeCompare(b.subscription) || b.total_tokens - a.total_tokens);
}

export async function usage(ctx: CliContext, name: string | undefined, since: string, json: boolean, nowMs = Date.now()): Promise<void> {
  const from = parseSince(since, nowMs);
  const { records, defined, note } = await withStores(ctx, async (stores) => {
    const defined = new Set((await stores.subscriptions.list()).map((s) => s.name));
    let names: string[];
    let note: string | undefined;
    if (name) {
      // A deleted subscription's usage is still asked for by its name, while the log holds its records.
      if (!defined.has(name) && (await stores.events.listBySubscription(name, 1)).length === 0) {
        throw new HookError('subscription_not_found', `No subscription named '${name}', and the event log holds no events under that name`);
      }
      names = [name];
    } else {
      // One run: the scan for deleted names is read to its end (the console pages it over its refreshes).
      ({ names, note } = await recordedNames(stores.events, [...defined], { complete: true }));
    }
    const all: EventRecord[] = [];
    for (const n of names) all.push(...(await stores.events.listBySubscription(n, USAGE_SCAN_LIMIT)).filter((r) => spentAt(r) >= from));
    return { records: all, defined, note };
  });
  const rows = sumUsage(records).map((r) => (defined.has(r.subscription) ? r : { ...r, deleted: true as const }));
  const total = rows.reduce((t, r) => ({
    events: t.events + r.events, input_tokens: t.input_tokens + r.input_tokens, output_tokens: t.output_tokens + r.output_tokens,
    cache_read_tokens: t.cache_read_tokens + r.cache_read_tokens, cache_write_tokens: t.cache_write_tokens + r.cache_write_tokens, total_tokens: t.total_tokens + r.total_tokens,
  }), { events: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, total_tokens: 0 });
  const sinceIso = new Date(from).toISOString();
  if (json) return ctx.out(JSON.stringify({ since: sinceIso, rows, total, ...(note ? { note } : {}) }, null, 2));
  if (rows.length === 0) return ctx.out(`No agent usage recorded since ${sinceIso}${name ? ` for '${name}'` : ''}.${note ? `\n${note}.` : ''}`);
  const n = (v: number) => String(v);
  // Token counts that include estimates carry "~".
  const t = (v: number, estimated: boolean) => (estimated ? `~${v}` : String(v));
  const anyEstimated = rows.some((r) => r.estimated_events);
  ctx.out(table(
    ['SUBSCRIPTION', 'PROVIDER', 'MODEL', 'EVENTS', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'TOTAL', 'STEPS', 'TOOL CALLS'],
    [
      ...rows.map((r) => [r.deleted ? `${r.subscription} (deleted)` : r.subscription, r.provider, r.model, n(r.events), t(r.input_tokens, !!r.estimated_events), t(r.output_tokens, !!r.estimated_events), n(r.cache_read_tokens), n(r.cache_write_tokens), t(r.total_tokens, !!r.estimated_events), n(r.steps), n(r.tool_calls)]),
      ['(all)', '', '', n(total.events), t(total.input_tokens, anyEstimated), t(total.output_tokens, anyEstimated), n(total.cache_read_tokens), n(total.cache_write_tokens), t(total.total_tokens, anyEstimated), '', ''],
    ],
  ));
  ctx.out(`\nSince ${sinceIso}, by when the agent spent them (an event's latest run). Tokens as the providers report them; TOTAL (input + output + cache reads and writes) is what daily budgets count.`);
  if (rows.some((r) => r.deleted)) ctx.out('(deleted): a subscription deleted since; its events stay in the event log for 14 days, and its tokens were spent.');
  if (note) ctx.out(`${note}.`);
  if (anyEstimated) ctx.out('~: estimated, in part: a provider reported no token counts for some runs, so hookagent counted ~4 characters a token of the text sent and received.');
}
