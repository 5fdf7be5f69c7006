/**
 * One group commit's transaction (db.ts): every write queued during a turn runs in it, each
 * in a savepoint of its own, so one that throws is undone alone and the others commit.
 */
import type Database from 'better-sqlite3';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The statements a connection prepares once for its transactions. */
export interface TransactionStatements {
  begin: Database.Statement;
  commit: Database.Statement;
  rollback: Database.Statement;
  savepoint: Database.Statement;
  release: Database.Statement;
  rollbackTo: Database.Statement;
}

export function transactionStatements(db: Database.Database): TransactionStatements {
  return {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT write'),
    release: db.prepare('RELEASE write'),
    rollbackTo: db.prepare('ROLLBACK TO write'),
  };
}

/**
 * Runs `runs` in one transaction and commits it. Returns each run's outcome, or (nothing
 * committed) the error every run fails with: BEGIN or COMMIT failed, or SQLite rolled the
 * whole transaction back under a run (a full disk), which is then the cause reported.
 */
export function runInTransaction(db: Database.Database, stmts: TransactionStatements, runs: Array<() => unknown>): { outcomes: Outcome[] } | { failed: unknown } {
  try {
    stmts.begin.run();
  } catch (error) {
    return { failed: error };
  }
  const outcomes: Outcome[] = [];
  let rolledBackBy: unknown;
  for (const run of runs) {
    // Nothing more runs in a transaction SQLite rolled back; COMMIT below fails them all with its cause.
    if (!db.inTransaction) break;
    try {
      stmts.savepoint.run();
    } catch (error) {
      outcomes.push({ ok: false, error });
      continue;
    }
    try {
      const value = run();
      stmts.release.run();
      outcomes.push({ ok: true, value });
    } catch (error) {
      try {
        stmts.rollbackTo.run();
        stmts.release.run();
      } catch {
        rolledBackBy = error;
      }
      outcomes.push({ ok: false, error });
    }
  }
  try {
    stmts.commit.run();
  } catch (error) {
    try {
      if (db.inTransaction) stmts.rollback.run();
    } catch {
      // SQLite rolled it back already.
    }
    return { failed: rolledBackBy ?? error };
  }
  return { outcomes };
}
