/**
 * The local store's schema: one SQLite database, `{data}/hookagent.db`. Each migration
 * runs once, in order, inside a transaction; `PRAGMA user_version` records how far a
 * database has come. Append new migrations at the end; never edit a released one.
 */
import type { Database } from 'better-sqlite3';

const MIGRATIONS: string[] = [
  `
  CREATE TABLE subscriptions (name TEXT PRIMARY KEY, body TEXT NOT NULL);
  -- A change counter per table, bumped by triggers whatever connection writes: serve's
  -- subscription cache compares it instead of re-reading the table on every request.
  CREATE TABLE versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL);
  INSERT INTO versions VALUES ('subscriptions', 0);
  CREATE TRIGGER subscriptions_ins AFTER INSERT ON subscriptions BEGIN UPDATE versions SET version = version + 1 WHERE name = 'subscriptions'; END;
  CREATE TRIGGER subscriptions_upd AFTER UPDATE ON subscriptions BEGIN UPDATE versions SET version = version + 1 WHERE name = 'subscriptions'; END;
  CREATE TRIGGER subscriptions_del AFTER DELETE ON subscriptions BEGIN UPDATE versions SET version = version + 1 WHERE name = 'subscriptions'; END;

  CREATE TABLE dedup (key TEXT PRIMARY KEY, event_id TEXT NOT NULL, claimed_at INTEGER NOT NULL, committed INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL);

  -- One row per (event, subscription); its queue message (which may carry the payload) is
  -- in event_messages, written once: status changes rewrite the small events row only.
  CREATE TABLE events (
    event_id TEXT NOT NULL, subscription TEXT NOT NULL, received_at TEXT NOT NULL, status TEXT NOT NULL,
    data TEXT NOT NULL, expires_at INTEGER NOT NULL,
    PRIMARY KEY (event_id, subscription)
  ) WITHOUT ROWID;
  CREATE TABLE event_messages (event_id TEXT NOT NULL, subscription TEXT NOT NULL, message TEXT NOT NULL, UNIQUE (event_id, subscription));
  CREATE INDEX events_by_subscription ON events (subscription, received_at, event_id);

  CREATE TABLE queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL, body TEXT NOT NULL,
    visible_at INTEGER NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, receipt INTEGER NOT NULL DEFAULT 0, sent_at INTEGER NOT NULL,
    event_key TEXT
  );
  CREATE INDEX queue_by_visibility ON queue (visible_at, id);
  CREATE INDEX queue_by_event ON queue (event_key) WHERE event_key IS NOT NULL;
  CREATE TABLE dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL, body TEXT NOT NULL,
    receive_count INTEGER NOT NULL, reason TEXT, dead_at INTEGER NOT NULL
  );

  CREATE TABLE payloads (key TEXT PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE leases (event_id TEXT NOT NULL, subscription TEXT NOT NULL, holder TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (event_id, subscription)) WITHOUT ROWID;
  CREATE TABLE counters (key TEXT PRIMARY KEY, value REAL NOT NULL, expires_at INTEGER NOT NULL);
  CREATE TABLE debounce (subscription TEXT NOT NULL, subject_key TEXT NOT NULL, event_id TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (subscription, subject_key)) WITHOUT ROWID;
  CREATE TABLE requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, received_at INTEGER NOT NULL, endpoint TEXT NOT NULL, outcome TEXT NOT NULL, body TEXT NOT NULL
  );
  CREATE INDEX requests_by_time ON requests (received_at);
  `,
  // The prompt and reply (kilobytes each) move to a table of their own: SQLite rewrites a
  // whole row on any change, so the worker's status changes now rewrite a small row only.
  `
  CREATE TABLE event_texts (
    event_id TEXT NOT NULL, subscription TEXT NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL,
    UNIQUE (event_id, subscription, name)
  );
  `,
  // Which queue rows are held by a receive (in flight), as against waiting out a delay: a
  // paced retry (changeVisibility, a Retry-After) or a delayed send (debounce). serve makes
  // only the former visible when it starts; it used to release every row not yet visible.
  // Rows received before this migration keep the old behaviour (taken as in flight).
  `
  ALTER TABLE queue ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;
  UPDATE queue SET in_flight = 1 WHERE receive_count > 0;
  `,
  // Retention runs while serve runs (housekeeping.ts), a bounded batch at a time: what has
  // expired is found through these instead of a scan of the whole table per batch (a
  // payload's created_at lies after its body, which a scan reads through). Records still
  // waiting (held, queued, processing) never expire; the partial index finds the payloads
  // they need.
  `
  CREATE INDEX events_by_expiry ON events (expires_at);
  CREATE INDEX events_waiting ON events (status) WHERE status IN ('held', 'queued', 'processing');
  CREATE INDEX payloads_by_age ON payloads (created_at, key);
  `,
  // The requests each subscription's payload filters turned away (request-log.ts, written in
  // the entry's transaction): `webhook events <name>` lists them by subscription and time
  // instead of looking among the newest entries of the whole log (hunt 11 D3). Deleting an
  // entry (housekeeping) deletes its rows. Entries written before this migration are indexed
  // here, by the same rule as core/request-filtered.ts: a verdict not matched, `filter …`.
  `
  CREATE TABLE request_filtered (
    subscription TEXT NOT NULL, received_at INTEGER NOT NULL, request_row INTEGER NOT NULL,
    PRIMARY KEY (subscription, received_at, request_row)
  ) WITHOUT ROWID;
  CREATE INDEX request_filtered_by_row ON request_filtered (request_row);
  CREATE TRIGGER requests_filtered_del AFTER DELETE ON requests BEGIN DELETE FROM request_filtered WHERE request_row = old.id; END;
  INSERT OR IGNORE INTO request_filtered (subscription, received_at, request_row)
    SELECT json_extract(c.value, '$.subscription'), r.received_at, r.id
    FROM requests r, json_each(r.body, '$.candidates') c
    WHERE r.body LIKE '%"reason":"filter %' AND json_extract(c.value, '$.matched') = 0
      AND substr(json_extract(c.value, '$.reason'), 1, 7) = 'filter ';
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database up to the current schema; refuses a database written by a newer hookagent. */
export function migrate(db: Database, where: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(`${where} was written by a newer hookagent (schema ${current}, this one knows ${SCHEMA_VERSION}); upgrade hookagent`);
  }
  if (current === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Re-read inside the write lock: another process may have migrated meanwhile.
    const seen = db.pragma('user_version', { simple: true }) as number;
    for (let v = seen; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v] as string);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
