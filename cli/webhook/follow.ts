/**
 * `webhook events <name> [--status s] [--follow]`: the recent events, then (with --follow)
 * every new event and every change of status as it happens, until Ctrl-C.
 */
import { asInvoked } from '../invocation';
import { HookError } from '../../functions/core/errors';
import type { EventRecord } from '../../functions/core/types';
import { type CliContext } from '../context';
import { printEvents } from './read';
import { clip, eventJson, eventRow, outputStyle, paint, table, type OutputStyle } from '../output';
import { escapeControl } from '../../functions/core/log';

export interface EventsOptions {
  limit: number;
  json: boolean;
  status?: string;
  follow: boolean;
  /** How often --follow reads the event log, in ms. */
  intervalMs?: number;
  /** Only events older than this event id (the next page; not with --follow). */
  before?: string;
  /** Stops following (tests; Ctrl-C otherwise). */
  signal?: AbortSignal;
}

const HEADERS = ['RECEIVED', 'EVENT ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'DETAIL'];
/** Streamed rows cannot be measured in advance: fixed columns, the detail cut to the terminal. */
const WIDTHS = [19, 30, 26, 12, 8];

function fixedRow(cells: string[], style: OutputStyle): string {
  const head = WIDTHS.map((w, i) => {
    const text = escapeControl(cells[i] ?? '').slice(0, w);
    const padded = text.padEnd(w);
    return i === 3 && style.color ? paint(style, cells[i] === 'delivered' ? 'green' : cells[i] === 'failed' ? 'red' : 'yellow', text) + padded.slice(text.length) : padded;
  }).join('  ');
  const room = Math.max(10, style.columns - WIDTHS.reduce((a, b) => a + b + 2, 0));
  return `${head}  ${clip(escapeControl(cells[5] ?? ''), room)}`.trimEnd();
}

export async function eventsCommand(ctx: CliContext, name: string, options: EventsOptions): Promise<void> {
  const stores = await ctx.openStores();
  try {
    // printEvents checks the name (a deleted subscription's events can still be listed); following needs a live one.
    if (options.follow && !(await stores.subscriptions.get(name))) {
      // A deleted subscription takes no new events: its stored ones are listed without --follow.
      const held = (await stores.events.listBySubscription(name, 1)).length > 0;
      throw new HookError('subscription_not_found', held
        ? asInvoked(`'${name}' was deleted, so no new events come to follow; 'hookagent webhook events ${name}' lists the ones it left (kept 14 days)`)
        : `No subscription named '${name}'`);
    }
    const read = async () => (await stores.events.listBySubscription(name, Math.max(options.limit, 200)))
      .filter((r) => !options.status || r.status === options.status);
    if (!options.follow) return await printEvents(ctx, stores, name, options);
    const known = await read();
    await follow(ctx, name, known.slice(0, options.limit), read, options, known);
  } finally {
    await stores.close();
  }
}

/** Prints the oldest first, then new records and status changes, one line (or JSON line) each. */
async function follow(ctx: CliContext, name: string, first: EventRecord[], read: () => Promise<EventRecord[]>, options: EventsOptions, known: EventRecord[] = first): Promise<void> {
  const style = outputStyle();
  const seen = new Map<string, string>();
  // Everything read so far counts as seen, printed or not: `--limit N` prints the N newest,
  // and the older ones read beside them are not news a second later.
  for (const r of known) seen.set(r.event_id, `${r.status}/${r.updated_at}`);
  const print = (records: EventRecord[]) => {
    for (const r of records) {
      seen.set(r.event_id, `${r.status}/${r.updated_at}`);
      if (options.json) ctx.out(JSON.stringify(eventJson(r)));
      else ctx.out(style.tty ? fixedRow(eventRow(r), style) : table(HEADERS, [eventRow(r)], style).split('\n')[1] ?? '');
    }
  };
  if (!options.json) ctx.out(style.tty ? paint(style, 'bold', fixedRow(HEADERS, { ...style, color: false })) : table(HEADERS, [], style));
  print([...first].reverse());
  if (!options.json && style.tty) ctx.warn(`Following '${name}'${options.status ? ` (status ${options.status})` : ''}; Ctrl-C stops.`);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  options.signal?.addEventListener('abort', onSignal);
  try {
    while (!stop.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs ?? 1000);
        stop.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
      if (stop.signal.aborted) break;
      const changed = (await read()).filter((r) => seen.get(r.event_id) !== `${r.status}/${r.updated_at}`);
      print(changed.reverse());
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
