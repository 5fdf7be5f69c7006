/**
 * Issue 17's gates before a subscription's agent runs: debounce (only the latest event
 * of a subject's burst runs; earlier ones are `superseded`) and max runs per hour
 * (beyond the cap, `rate_limited`, replayable).
 */
import type { CounterStore, DebounceStore } from '../ports';
import type { EventRecord, QueueMessage, Subscription } from '../types';

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

/** The counter key of a subscription's runs in the hour of `nowMs` (UTC). */
export function runsKey(subscription: string, nowMs: number): string {
  return `runs#${subscription}#${new Date(nowMs).toISOString().slice(0, 13)}`;
}

/** A run counter outlives its hour, so a give-back late in the hour still finds it. */
const RUNS_TTL_SECONDS = 2 * 3600;

/** Whether `runCapGate` counts this event's run (and so may have to give it back). */
function countsRun(record: EventRecord, subscription: Subscription, counters: CounterStore | undefined): counters is CounterStore {
  return !!counters && !!subscription.max_runs_per_hour && subscription.agent !== 'none' && (record.attempts ?? 0) <= 1;
}

/**
 * Counts this event's run in its hour (once: only on its first attempt) and refuses it
 * beyond the cap. Direct delivery (`agent: none`) spends no model budget and is not capped.
 * Only runs that happen count: a refused event gives its count back at once, so raising the
 * cap lets a replay run in the same hour, and `runs` is the hour's real count. Adding before
 * comparing keeps the cap under concurrency: of two workers at cap - 1, one sees cap + 1.
 */
export async function runCapGate(record: EventRecord, subscription: Subscription, counters: CounterStore | undefined, nowMs: number): Promise<Gate> {
  const cap = subscription.max_runs_per_hour;
  if (!countsRun(record, subscription, counters) || !cap) return undefined;
  const key = runsKey(subscription.name, nowMs);
  const runs = await counters.add(key, 1, RUNS_TTL_SECONDS);
  return runs > cap ? { status: 'rate_limited', runs: await counters.add(key, -1, RUNS_TTL_SECONDS) } : undefined;
}

/**
 * Gives back the run `runCapGate` counted for an event whose agent is not called after all
 * (its token budget is spent, its prompt cannot be rendered). `sinceMs` is a time before the
 * gate (the receive's start): when the hour turned since, the hour counted is unknown and
 * nothing is given back (one run too many that hour, never one too few).
 */
export async function giveBackRun(record: EventRecord, subscription: Subscription, counters: CounterStore | undefined, sinceMs: number, nowMs: number): Promise<void> {
  if (!countsRun(record, subscription, counters)) return;
  const key = runsKey(subscription.name, sinceMs);
  if (key === runsKey(subscription.name, nowMs)) await counters.add(key, -1, RUNS_TTL_SECONDS);
}
