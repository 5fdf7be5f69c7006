/**
 * What `webhook test --send` prints of the event's record once it is final or `--wait` ran
 * out: the outcome, or why it is still queued. A queued record with an error is an attempt
 * that failed for a passing reason and waits for its paced retry (worker/outcomes.ts
 * retryLater): its reason is printed as a final failure's is, and it exits 1, since
 * nothing was delivered and the next attempt may fail the same way.
 */
import type { EventRecord, Subscription } from '../../functions/core/types';
import { escapeControl, escapeTerminal } from '../../functions/core/log';
import { RETRY_BASE_SECONDS, RETRY_CAP_SECONDS } from '../../functions/core/worker/retry-schedule';
import { commandName } from '../invocation';
import type { CliContext } from '../context';

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['delivered', 'suppressed', 'failed']);

const errorText = (record: EventRecord): string => (record.error ? ` — ${record.error.code}: ${record.error.message}` : '');

/** Each target's outcome, one indented line each, as the event log holds them. */
function targetLines(record: EventRecord): string {
  const targets = Object.entries(record.targets ?? {}).map(([t, o]) => `${t}: ${o.status}${o.detail ? ` (${o.detail})` : ''}`);
  return targets.length ? `\n  ${targets.join('\n  ')}` : '';
}

/**
 * Seconds until the next attempt of a record whose `attempts`-th attempt failed at
 * `updated_at`: the retry schedule's delay without its ±20 % jitter (a longer Retry-After
 * from the other side is not in the record).
 */
function nextAttemptSeconds(record: EventRecord, now: number): number {
  const delay = Math.min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2 ** Math.max(0, (record.attempts ?? 1) - 1));
  return Math.max(0, Math.round(delay - (now - Date.parse(record.updated_at)) / 1000));
}

export function printSendOutcome(ctx: CliContext, subscription: Subscription, record: EventRecord | undefined, waitMs: number): void {
  const name = subscription.name;
  const events = `'${commandName()} webhook events ${name}'`;
  if (record && FINAL_STATUSES.has(record.status)) {
    ctx.out(escapeTerminal(`Outcome: ${record.status}${errorText(record)}${targetLines(record)}`));
    for (const warning of record.warnings ?? []) ctx.out(`  warning: ${escapeControl(warning)}`);
    if (record.reply) ctx.out(`Reply:\n${escapeTerminal(record.reply)}`);
    if (record.status === 'failed') process.exitCode = 1;
    return;
  }
  if (record?.status === 'queued' && record.error) {
    const retry = `a retry is scheduled in about ${nextAttemptSeconds(record, Date.now())}s; see ${events}`;
    ctx.out(escapeTerminal(`Attempt ${record.attempts ?? 1} failed${errorText(record)}; ${retry}${targetLines(record)}`));
    process.exitCode = 1;
    return;
  }
  // A debounced event is queued for its debounce first: say so when that is why it is not done.
  const debounced = subscription.debounce_seconds && subscription.debounce_seconds * 1000 >= waitMs ? ` ('${name}' debounces each subject for ${subscription.debounce_seconds}s before it runs)` : '';
  ctx.out(`Still ${record?.status ?? 'queued'} after ${waitMs / 1000}s${debounced}; see ${events}.`);
}
