/**
 * The worker's metrics, read off the records it writes: an EventLog decorator. The worker's
 * code stays free of metric calls, and whatever path it takes (lease, retry, delivery
 * fan-out), the record it saves says what happened:
 * - a record whose first attempt starts (`attempts` becomes 1; written with `processing`,
 *   or with the outcome of an attempt that ended before any agent work): queue-to-start latency;
 * - a record that gained `timings.agent_ms` or tokens: agent duration, and the run's tokens by
 *   model: what it added to `usage` (which sums every run of the event, as the budget counts them);
 * - a record that gained an error after its prompt was saved but without a reply: an agent failure,
 *   once per attempt (a retry's start, `processing`, still holds the last attempt's error:
 *   no failure; nor is a write that ends an attempt without an error of its own, such as
 *   `superseded`);
 * - a target outcome with a new `at`: a delivery by target and outcome.
 * Retries and dead letters are counted where they happen: the batch answer and the
 * dead-letter sink (countedDeadLetters below; the Lambda handler for the queue's redrive).
 */
import type { Clock, DeadLetterSink, EventLog } from '../ports';
import type { EventRecord } from '../types';
import { METRIC, type Metrics } from './metrics';

interface Seen {
  status: EventRecord['status'];
  attempts?: number;
  agentMs?: number;
  /** The record's token counts: a later run's tokens are what it adds to them. */
  tokens?: Tokens;
  error?: string;
  targets: Record<string, string>;
}

interface Tokens { input: number; output: number }
const tokensOf = (record: EventRecord): Tokens | undefined => (record.usage ? { input: record.usage.input_tokens, output: record.usage.output_tokens } : undefined);

const keyOf = (r: { event_id: string; subscription: string }) => `${r.event_id}\u0000${r.subscription}`;
/** An error as one attempt's: the same words on a later attempt are another failure. */
const errorKey = (r: EventRecord) => `${r.attempts ?? 0}:${r.error?.code}:${r.error?.message}`;

export function observedEventLog(inner: EventLog, metrics: Metrics, clock: Clock): EventLog {
  // Last record state written per (event, subscription) by this container; bounded.
  const seen = new Map<string, Seen>();
  /** `errorWritten`: this write set `record.error` (else it is carried over from an earlier attempt). */
  const observe = (record: EventRecord, errorWritten: boolean): void => {
    const key = keyOf(record);
    const before = seen.get(key);
    if (record.attempts === 1 && before?.attempts !== 1) {
      const arrived = Date.parse(record.received_at);
      if (Number.isFinite(arrived)) metrics.add(METRIC.queueToStart, 'Milliseconds', Math.max(0, clock.now() - arrived));
    }
    const agentMs = record.timings?.agent_ms;
    const tokens = tokensOf(record);
    // This run's tokens: a retry's record still holds the earlier runs' (counted when they ran).
    const input = Math.max(0, (tokens?.input ?? 0) - (before?.tokens?.input ?? 0));
    const output = Math.max(0, (tokens?.output ?? 0) - (before?.tokens?.output ?? 0));
    // A run that spent tokens is a run, even when it took as long as the one before.
    if (agentMs !== undefined && (agentMs !== before?.agentMs || input + output > 0)) {
      metrics.add(METRIC.agentDuration, 'Milliseconds', agentMs);
      if (record.usage && input + output > 0) {
        const model = record.usage.model ?? record.usage.provider;
        metrics.add(METRIC.tokens, 'Count', input, { model, kind: 'input' });
        metrics.add(METRIC.tokens, 'Count', output, { model, kind: 'output' });
      }
    }
    // Per attempt: the same error on a later attempt is another failure. Only a write that ends
    // an attempt with its own error counts, and only it replaces the key compared against, so
    // attempt n+1's failure is told from attempt n's even when both say the same.
    const ended = errorWritten && record.status !== 'processing' ? errorKey(record) : undefined;
    if (ended && ended !== before?.error && record.prompt !== undefined && record.reply === undefined) metrics.add(METRIC.agentFailures, 'Count', 1);
    const error = !record.error ? undefined : ended ?? before?.error;
    const targets: Record<string, string> = {};
    for (const [target, outcome] of Object.entries(record.targets ?? {})) {
      targets[target] = outcome.at;
      if (before?.targets[target] !== outcome.at) metrics.add(METRIC.deliveries, 'Count', 1, { target, outcome: outcome.status });
    }
    seen.delete(key);
    seen.set(key, { status: record.status, ...(record.attempts !== undefined ? { attempts: record.attempts } : {}), ...(agentMs !== undefined ? { agentMs } : {}), ...(tokens ? { tokens } : {}), ...(error ? { error } : {}), targets });
    if (seen.size > 1000) seen.delete(seen.keys().next().value as string);
  };
  // The whole record as last read or written, so a small update can be observed as the record it makes.
  const latest = new Map<string, EventRecord>();
  const remember = (record: EventRecord) => {
    latest.delete(keyOf(record));
    latest.set(keyOf(record), record);
    if (latest.size > 1000) latest.delete(latest.keys().next().value as string);
  };
  const putAll: EventLog['putAll'] = async (records) => {
    await inner.putAll(records);
    for (const record of records) {
      // A whole record: its error is this write's unless it is the one it held (the same object, carried over).
      const carried = latest.get(keyOf(record))?.error;
      remember(record);
      observe(record, record.error !== undefined && record.error !== carried);
    }
  };
  const update: EventLog['update'] = async (eventId, subscription, changes, options) => {
    await inner.update(eventId, subscription, changes, options);
    const before = latest.get(keyOf({ event_id: eventId, subscription }));
    if (!before) return;
    const merged = { ...before, ...changes } as EventRecord;
    for (const [key, value] of Object.entries(changes)) if (value === undefined) delete (merged as unknown as Record<string, unknown>)[key];
    remember(merged);
    observe(merged, changes.error !== undefined);
  };
  const get: EventLog['get'] = async (eventId, subscription, known) => {
    const record = await inner.get(eventId, subscription, known);
    if (!record) return record;
    remember(record);
    const key = keyOf(record);
    // What the record already said before this container touched it is not news.
    if (!seen.has(key)) {
      seen.set(key, {
        status: record.status, ...(record.timings?.agent_ms !== undefined ? { agentMs: record.timings.agent_ms } : {}),
        ...(record.error ? { error: errorKey(record) } : {}),
        targets: Object.fromEntries(Object.entries(record.targets ?? {}).map(([t, o]) => [t, o.at])),
      });
    }
    // Nor are the tokens it holds (a consistent read, at the start of an attempt): the runs
    // that spent them were counted, here or in another container; this attempt's adds to them.
    const tokens = tokensOf(record);
    const last = seen.get(key);
    if (last && tokens) last.tokens = tokens;
    return record;
  };
  // Every other method (including ones added to the port later) goes straight to the store.
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'putAll') return putAll;
      if (property === 'get') return get;
      if (property === 'update') return update;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Counts each message sent to the dead-letter queue. */
export function countedDeadLetters(inner: DeadLetterSink, metrics: Metrics): DeadLetterSink {
  return {
    // The receive count goes on: the SQS sink records it with the letter (D12).
    send: async (body, reason, receiveCount) => {
      await inner.send(body, reason, receiveCount);
      metrics.add(METRIC.deadLetters, 'Count', 1);
    },
  };
}
