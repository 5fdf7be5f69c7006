/**
 * The console's list of the whole event log, newest first. Neither store has one index
 * over every subscription's records by time, both have one per subscription: this merges
 * those walks (EventLog.searchSubscription, filtered in the store) over every name the log
 * holds records under, deleted subscriptions' included (EventLog.recordedSubscriptions).
 *
 * Order: (received_at, event_id, subscription), newest first; one event's records for two
 * subscriptions share a time and an id. A cursor is a position in that order and the next
 * page starts strictly below it, so paging never repeats or skips a record.
 *
 * A search reads at most `budget` records per answer. When it stops there it answers what
 * it found at or above the point every unfinished walk has read down to, with that point as
 * the cursor and a note saying how far it searched: the next page goes on from there.
 */
import { HookError } from '../../functions/core/errors';
import type { EventLog, EventSearch, EventSearchPage, ListedEvent } from '../../functions/core/ports';
import { SUBSCRIPTION_NAME_PATTERN, type EventStatus, type Source } from '../../functions/core/types';

export interface Position {
  received_at: string;
  event_id: string;
  subscription: string;
}

export interface LogQuery {
  since?: string;
  status?: EventStatus;
  source?: Source;
  text?: string;
  limit: number;
  /** Only records strictly below this position. */
  after?: Position;
}

export interface LogPage {
  records: ListedEvent[];
  /** Where the next page starts; absent when nothing further matches. */
  next?: Position;
  /** Records read for this page. */
  examined: number;
  /** Set when the search stopped at its budget: `next` is how far back every subscription was searched. */
  stoppedAt?: Position;
}

const compare = (a: Position, b: Position): number =>
  a.received_at !== b.received_at ? (a.received_at < b.received_at ? -1 : 1)
    : a.event_id !== b.event_id ? (a.event_id < b.event_id ? -1 : 1)
      : a.subscription === b.subscription ? 0 : a.subscription < b.subscription ? -1 : 1;

const positionOf = (r: Pick<ListedEvent, 'received_at' | 'event_id' | 'subscription'>): Position => ({ received_at: r.received_at, event_id: r.event_id, subscription: r.subscription });

export const encodeCursor = (p: Position): string => Buffer.from(JSON.stringify([p.received_at, p.event_id, p.subscription])).toString('base64url');

export function decodeCursor(text: string): Position {
  let value: unknown;
  try {
    value = /^[A-Za-z0-9_-]{1,1400}$/.test(text) ? JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) : undefined;
  } catch {
    value = undefined;
  }
  const [at, id, name] = Array.isArray(value) && value.length === 3 ? (value as unknown[]) : [];
  // Shaped as the store writes them: anything else did not come from an answer's 'next'.
  if (typeof at !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(at) || typeof id !== 'string' || !/^evt_[0-9a-z_]{1,60}$/.test(id)
    || typeof name !== 'string' || !SUBSCRIPTION_NAME_PATTERN.test(name)) {
    throw new HookError('bad_request', "Malformed 'cursor': pass the 'next' value of an earlier answer as it is");
  }
  return { received_at: at, event_id: id, subscription: name };
}

type Search = (subscription: string, search: EventSearch) => Promise<EventSearchPage>;

/** For an EventLog without searchSubscription: its per-subscription list, filtered here. */
function searchByListing(events: EventLog): Search {
  return async (subscription, search) => {
    const read = Math.max(1, Math.min(search.examine, Math.max(search.limit, 50)));
    const before = search.before && { received_at: search.before.received_at, event_id: search.before.inclusive ? `${search.before.event_id}\u0000` : search.before.event_id };
    const listed = await events.listBySubscription(subscription, read, before);
    const text = search.text?.toLowerCase();
    const records: ListedEvent[] = [];
    let examined = 0;
    for (const record of listed) {
      if (search.since && record.received_at < search.since) return { records, examined };
      examined += 1;
      const { message, prompt: _prompt, reply: _reply, ...summary } = record;
      if ((!search.status || record.status === search.status) && (!search.source || record.source === search.source)
        && (!text || record.event_id.toLowerCase().includes(text) || record.delivery_id.toLowerCase().includes(text))) {
        records.push({ ...summary, ...(message.subscription_created_at ? { subscription_created_at: message.subscription_created_at } : {}) });
      }
      if (records.length >= search.limit) return { records, examined, last: { received_at: record.received_at, event_id: record.event_id } };
    }
    const end = listed[listed.length - 1];
    return { records, examined, ...(listed.length === read && end ? { last: { received_at: end.received_at, event_id: end.event_id } } : {}) };
  };
}

interface Walk {
  name: string;
  buffer: ListedEvent[];
  before?: EventSearch['before'];
  /** Everything of this subscription at or above this position has been read (or lies above the page). */
  frontier?: Position;
  done: boolean;
  pageSize: number;
}

/** The newest `query.limit` records of `names` below `query.after`, reading at most about `budget` records. */
export async function searchLog(events: EventLog, names: string[], query: LogQuery, budget: number): Promise<LogPage> {
  const search: Search = events.searchSubscription ? events.searchSubscription.bind(events) : searchByListing(events);
  const after = query.after;
  const firstPage = Math.min(query.limit, Math.max(10, Math.ceil((2 * query.limit) / Math.max(1, names.length))));
  const walks: Walk[] = names.map((name) => ({
    name, buffer: [], done: false, pageSize: firstPage,
    ...(after ? { frontier: after, before: { received_at: after.received_at, event_id: after.event_id, inclusive: name < after.subscription } } : {}),
  }));
  let examined = 0;
  const readMore = async (walk: Walk, examine: number) => {
    const page = await search(walk.name, {
      limit: walk.pageSize, examine, ...(walk.before ? { before: walk.before } : {}), ...(query.since ? { since: query.since } : {}),
      ...(query.status ? { status: query.status } : {}), ...(query.source ? { source: query.source } : {}), ...(query.text ? { text: query.text } : {}),
    });
    examined += page.examined;
    walk.buffer.push(...page.records);
    if (page.last) {
      walk.before = { ...page.last, inclusive: false };
      walk.frontier = { ...page.last, subscription: walk.name };
    } else {
      walk.done = true;
    }
    walk.pageSize = Math.min(query.limit, walk.pageSize * 2);
  };
  const records: ListedEvent[] = [];
  /** The walk with the newest buffered record, at or above `above` when given. */
  const newestHead = (above?: Position): Walk | undefined => {
    let best: Walk | undefined;
    for (const walk of walks) {
      const head = walk.buffer[0];
      if (head && (!above || compare(positionOf(head), above) >= 0) && (!best || compare(positionOf(head), positionOf(best.buffer[0]!)) > 0)) best = walk;
    }
    return best;
  };
  while (records.length < query.limit) {
    const needy = walks.filter((w) => w.buffer.length === 0 && !w.done);
    if (needy.length > 0) {
      const left = budget - examined;
      // Every walk has read at least once before the budget counts (its frontier is known).
      if (left <= 0 && needy.every((w) => w.frontier)) {
        // Out of budget: what lies at or above every unfinished walk's frontier is complete. Every
        // one counts, not only the needy: one that still holds records can run empty while they
        // go out, and what it has not read lies below its frontier (hunt 8 D1).
        const stop = walks.filter((w) => !w.done && w.frontier).map((w) => w.frontier!).reduce((a, b) => (compare(a, b) > 0 ? a : b));
        for (let walk = newestHead(stop); walk && records.length < query.limit; walk = newestHead(stop)) records.push(walk.buffer.shift()!);
        if (records.length >= query.limit) break;
        return { records, next: stop, examined, stoppedAt: stop };
      }
      await Promise.all(needy.map((w) => readMore(w, Math.max(1, Math.floor(left / needy.length)))));
      continue;
    }
    const walk = newestHead();
    if (!walk) return { records, examined };
    records.push(walk.buffer.shift()!);
  }
  const more = walks.some((w) => w.buffer.length > 0 || !w.done);
  const last = records[records.length - 1];
  return { records, examined, ...(more && last ? { next: positionOf(last) } : {}) };
}
