/**
 * Issue 17's gates before a subscription's agent runs: debounce (only the latest event
 * of a subject's burst runs; earlier ones are `superseded`) and max runs per hour
 * (beyond the cap, `rate_limited`, replayable).
 */
import type { CounterStore, DebounceStore } from '../ports';
import type { EventRecord, QueueMessage, Subscription } from '../types';
import type { RecordWriter } from './record';

/** The debounce record outlives the longest delay, so a late copy still finds it. */
export const DEBOUNCE_TTL_SECONDS = 2 * 900 + 3600;

export type Gate = { status: 'superseded'; superseded_by: string } | { status: 'rate_limited'; runs: number } | undefined;

/** The millisecond an event id was made (ids sort by arrival: ids.ts); undefined for ids of another form. */
function arrivalOf(eventId: string): number | undefined {
  const match = /^evt_([0-9a-z]{9})[0-9a-f]{16}$/.exec(eventId);
  return match ? parseInt(match[1] as string, 36) : undefined;
}

/**
 * Superseded when a later event of the same subject was recorded after this one. Replays
 * always run. A latest event that arrived before this one does not supersede it: this
 * event's own record as the latest was lost (a crash between queueing it and recording
 * it, see ingest/debounce.ts), and it is the later of the two.
 */
export async function debounceGate(message: QueueMessage, subscription: Subscription, store: DebounceStore | undefined): Promise<Gate> {
  // An event accepted under debounce (it has a subject key) stays debounced when the setting changes before it runs.
  if (!store || !message.subject_key || message.replay_of) return undefined;
  const latest = await store.getLatest(subscription.name, message.subject_key);
  if (!latest || latest === message.event_id) return undefined;
  const [latestAt, thisAt] = [arrivalOf(latest), arrivalOf(message.event_id)];
  if (latestAt !== undefined && thisAt !== undefined && latestAt < thisAt) return undefined;
  return { status: 'superseded', superseded_by: latest };
}

/** The UTC hour of `nowMs`, as run counters and `run_counted` name it (`2026-11-24T10`). */
const hourOf = (nowMs: number): string => new Date(nowMs).toISOString().slice(0, 13);
const hourKey = (subscription: string, hour: string): string => `runs#${subscription}#${hour}`;

/** The counter key of a subscription's runs in the hour of `nowMs` (UTC). */
export function runsKey(subscription: string, nowMs: number): string {
  return hourKey(subscription, hourOf(nowMs));
}

/** A run counter outlives its hour, so a give-back late in the hour still finds it. */
const RUNS_TTL_SECONDS = 2 * 3600;

/** The record being moved along (record.ts's RecordWriter): what is staged goes out with its next write. */
export type StagedRecord = Pick<RecordWriter, 'current' | 'stage'>;

/**
 * Counts this event's run in its hour and refuses it beyond the cap. Direct delivery
 * (`agent: none`) spends no model budget and is not capped. The hour counted is staged on
 * the record (`run_counted`, written with its next write): a record without it is counted
 * and checked, whatever its attempts (one retried before this gate, e.g. after a payload
 * read that failed, was once neither); a record with it is not counted twice. Only runs that
 * happen count: a refused event gives its count back at once, so raising the cap lets a
 * replay run in the same hour, and `runs` is the hour's real count. Adding before comparing
 * keeps the cap under concurrency: of two workers at cap - 1, one sees cap + 1.
 */
export async function runCapGate(record: StagedRecord, subscription: Subscription, counters: CounterStore | undefined, nowMs: number): Promise<Gate> {
  const cap = subscription.max_runs_per_hour;
  if (!counters || !cap || subscription.agent === 'none' || record.current.run_counted) return undefined;
  const hour = hourOf(nowMs);
  const key = hourKey(subscription.name, hour);
  const runs = await counters.add(key, 1, RUNS_TTL_SECONDS);
  if (runs > cap) return { status: 'rate_limited', runs: await counters.add(key, -1, RUNS_TTL_SECONDS) };
  record.stage({ run_counted: hour });
  return undefined;
}

/**
 * Gives back the run `runCapGate` counted for an event whose agent is not called after all
 * (its token budget is spent, its prompt cannot be rendered), to the hour it was counted
 * in (the record's `run_counted`; the counter outlives its hour). Given the record writer,
 * it also clears `run_counted` with the record's next write, so a redriven event is counted
 * again; given only the record, the count is given back and the record keeps the hour.
 * Not when an earlier attempt of the event called the agent (the record has its `usage`,
 * written for every run, failed ones too): that run happened, and a retry that ends
 * before the agent (over budget after it) must not leave the hour one run too few.
 */
export async function giveBackRun(record: EventRecord | StagedRecord, subscription: Subscription, counters: CounterStore | undefined): Promise<void> {
  const current = 'stage' in record ? record.current : record;
  const hour = current.run_counted;
  if (!counters || !hour || current.usage !== undefined) return;
  await counters.add(hourKey(subscription.name, hour), -1, RUNS_TTL_SECONDS);
  if ('stage' in record) record.stage({ run_counted: undefined });
}
