/**
 * Counts per category (fuzz, faults, load, security): what was tried and what failed. Each
 * test file adds to a JSON-lines file in $HOOKAGENT_TALLY_DIR; `npm run test:reliability`
 * prints one summary line per category at the end (tests/reliability/summary.cjs).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

export type Category = 'fuzz' | 'faults' | 'load' | 'security'
  /** Issue 14: copies of one message, resume racing ingest, records over the item limit. */
  | 'copies' | 'resume_races' | 'oversized'
  /** Issue 14 on the SQLite store: repeated kill -9, a full disk. */
  | 'kill-9' | 'disk-full';

export class Tally {
  tried = 0;
  failed = 0;
  constructor(private readonly category: Category) {}

  /** Runs one check; counts it, and counts it failed when it throws (and rethrows). */
  async check<T>(body: () => T | Promise<T>): Promise<T> {
    this.tried += 1;
    try {
      return await body();
    } catch (error) {
      this.failed += 1;
      throw error;
    }
  }

  /** Adds counts taken elsewhere (a loop that checks many cases at once). */
  add(tried: number, failed: number): void {
    this.tried += tried;
    this.failed += failed;
  }

  /** Call from afterAll. */
  flush(): void {
    const dir = process.env.HOOKAGENT_TALLY_DIR;
    if (dir) appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify({ category: this.category, tried: this.tried, failed: this.failed })}\n`);
    else process.stdout.write(`${this.category}: ${this.tried} tried, ${this.failed} failed\n`);
    this.tried = 0;
    this.failed = 0;
  }
}
