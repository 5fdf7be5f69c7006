/**
 * The console's search over the local event log: one subscription's records newest first
 * through the `events_by_subscription` index (subscription, received_at, event_id), the
 * filters evaluated in SQL on the small `events` row (status is a column; the source and
 * delivery id are read from its `data`), stopping after `limit` matches or `examine`
 * rows. Only the matches' `data` is returned; messages, prompts and replies are not read.
 * The names records are kept under come from the same index, one lookup per name (a
 * loose index scan), so deleted subscriptions' names are found without reading their records.
 */
import type { EventSearch, EventSearchPage, ListedEvent, RecordedSubscriptions } from '../../core/ports';
import type { EventRecord } from '../../core/types';
import type { StoreDb } from './db';

/** Above every stored received_at and event id (ASCII): "no upper bound". */
const TOP = '\uffff';

interface Row {
  event_id: string;
  received_at: string;
  /** Set only for matching rows. */
  data: string | null;
}

export class SqliteEventSearch {
  private readonly walk;
  private readonly stamp;
  private readonly names;

  constructor(private readonly store: StoreDb) {
    const db = store.db;
    this.walk = db.prepare(`SELECT event_id, received_at,
        CASE WHEN (@status IS NULL OR status = @status)
          AND (@source IS NULL OR json_extract(data, '$.source') = @source)
          AND (@text IS NULL OR instr(lower(event_id), @text) > 0 OR instr(lower(json_extract(data, '$.delivery_id')), @text) > 0)
        THEN data END AS data
      FROM events
      WHERE subscription = @subscription AND received_at >= @since AND (received_at, event_id) < (@before_at, @before_id)
      ORDER BY received_at DESC, event_id DESC`);
    this.stamp = db.prepare(`SELECT json_extract(message, '$.subscription_created_at') FROM event_messages WHERE event_id = ? AND subscription = ?`).pluck();
    this.names = db.prepare(`WITH RECURSIVE names(name) AS (
        SELECT (SELECT min(subscription) FROM events)
        UNION ALL SELECT (SELECT min(subscription) FROM events WHERE subscription > name) FROM names WHERE name IS NOT NULL
      ) SELECT name FROM names WHERE name IS NOT NULL`).pluck();
  }

  search(subscription: string, search: EventSearch): EventSearchPage {
    return this.store.read('The event log', () => {
      const before = search.before;
      const rows = this.walk.iterate({
        subscription, since: search.since ?? '', status: search.status ?? null, source: search.source ?? null,
        text: search.text ? search.text.toLowerCase() : null,
        before_at: before?.received_at ?? TOP,
        // `(a, b) < (t, id + NUL)` is `(a, b) <= (t, id)`: no stored id lies between id and id + NUL.
        before_id: before ? (before.inclusive ? `${before.event_id}\u0000` : before.event_id) : TOP,
      }) as IterableIterator<Row>;
      const matched: string[] = [];
      const examine = Math.max(1, search.examine);
      let examined = 0;
      let stoppedAt: Row | undefined;
      for (const row of rows) {
        examined += 1;
        if (row.data !== null) matched.push(row.data);
        if (matched.length >= search.limit || examined >= examine) {
          // Stopped early: say where, unless that row was the subscription's last one in range.
          if (!rows.next().done) stoppedAt = row;
          rows.return?.();
          break;
        }
      }
      // After the walk: the connection runs one statement at a time.
      const records = matched.map((data) => this.listed(data, subscription));
      return { records, examined, ...(stoppedAt ? { last: { received_at: stoppedAt.received_at, event_id: stoppedAt.event_id } } : {}) };
    });
  }

  /** Every name the log holds records under, the deleted subscriptions' too. */
  recorded(known: string[]): RecordedSubscriptions {
    const names = this.store.read('The event log', () => this.names.all() as string[]);
    return { names: [...new Set([...known, ...names])] };
  }

  private listed(data: string, subscription: string): ListedEvent {
    // A record stored before event_texts existed kept its prompt and reply in data.
    const { message: _message, prompt: _prompt, reply: _reply, ...summary } = JSON.parse(data) as EventRecord;
    const stamp = this.stamp.get(summary.event_id, subscription) as string | null | undefined;
    return { ...summary, ...(typeof stamp === 'string' ? { subscription_created_at: stamp } : {}) };
  }
}
