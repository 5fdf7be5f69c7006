/**
 * After an agent run (answered or failed): its usage and transcript go into the event
 * record, and its tokens into today's budget counters (the usage says when: `spent_at`).
 * Storing them never fails the event: a store that is down costs the transcript or the
 * charge, logged, not the reply.
 */
import { usageEstimated, type AgentRun, type RecordedUsage } from '../agent/run-record';
import { loadTranscript, storeTranscript } from '../agent/transcript-store';
import type { Transcript } from '../agent/run-record';
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { Clock, CounterStore, PayloadStore } from '../ports';
import type { AgentUsage, EventRecord, QueueMessage } from '../types';
import { chargeBudget, tokensOf } from './budget';

export interface RunRecordDeps {
  payloads: PayloadStore;
  counters?: CounterStore;
  clock: Clock;
  logger: Logger;
}

/**
 * `earlier`: what the event's earlier attempts used (a run that failed after spending
 * tokens, then retried). The record keeps the sum, as the daily budget counts every
 * attempt: `webhook usage` and the budget then agree. Provider and model are the latest run's.
 * `earlierTranscript`: the record's transcript from those attempts; the new one keeps it
 * (`Transcript.earlier`), so the story shows every run the usage counts.
 */
export async function recordAgentRun(deps: RunRecordDeps, message: QueueMessage, run: AgentRun | undefined, earlier?: AgentUsage, earlierTranscript?: string): Promise<Partial<EventRecord>> {
  if (!run) return {};
  const log = { event_id: message.event_id, subscription: message.subscription };
  const now = deps.clock.now();
  // Stamped with the budget's time for the tokens, so `webhook usage --since` counts them when they were
  // spent, not when the event arrived; a run that spent none leaves an earlier one's stamp.
  const spentAt = tokensOf(run.usage) > 0 || !earlier?.spent_at ? new Date(now).toISOString() : earlier.spent_at;
  const changes: Partial<EventRecord> = { usage: { ...(earlier ? addUsage(earlier, run.usage) : run.usage), spent_at: spentAt } };
  const transcript = await withEarlier(deps, run.transcript, earlierTranscript, log);
  // Side by side: two independent writes (in the local store, one transaction).
  await Promise.all([
    chargeBudget(deps.counters, message.subscription, run.usage, now).catch((error: unknown) => {
      deps.logger.warn('token usage not counted against the budget', { ...log, reason: describeError(error) });
    }),
    storeTranscript(deps.payloads, message.event_id, message.subscription, transcript).then((ref) => {
      changes.transcript_ref = ref;
    }, (error: unknown) => {
      deps.logger.warn('transcript not stored', { ...log, reason: describeError(error) });
    }),
  ]);
  deps.logger.info('agent usage', {
    ...log, provider: run.usage.provider, model: run.usage.model, input_tokens: run.usage.input_tokens, output_tokens: run.usage.output_tokens,
    cache_read_tokens: run.usage.cache_read_tokens ?? 0, cache_write_tokens: run.usage.cache_write_tokens ?? 0, steps: run.usage.steps,
    ...(run.usage.estimated ? { estimated: true } : {}),
  });
  return changes;
}

function addUsage(a: AgentUsage, b: RecordedUsage): RecordedUsage {
  const sum = (x: number | undefined, y: number | undefined) => (x ?? 0) + (y ?? 0);
  // Estimated when any attempt's tokens were (an earlier one's mark must not be lost).
  const estimated = usageEstimated(a) || usageEstimated(b);
  const cacheRead = sum(a.cache_read_tokens, b.cache_read_tokens);
  const cacheWrite = sum(a.cache_write_tokens, b.cache_write_tokens);
  const tools = [...(a.tool_calls ?? []), ...(b.tool_calls ?? [])];
  return {
    ...b, input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens, steps: a.steps + b.steps,
    ...(cacheRead ? { cache_read_tokens: cacheRead } : {}), ...(cacheWrite ? { cache_write_tokens: cacheWrite } : {}), ...(tools.length > 0 ? { tool_calls: tools } : {}),
    ...(estimated ? { estimated: true as const } : {}),
  };
}

/** `current` with the earlier runs' transcripts before it; an earlier one that cannot be read is left out, logged. */
async function withEarlier(deps: RunRecordDeps, current: Transcript, earlierRef: string | undefined, log: Record<string, string>): Promise<Transcript> {
  if (!earlierRef) return current;
  try {
    const earlier = await loadTranscript(deps.payloads, earlierRef);
    if (!earlier) return current;
    const { earlier: before = [], ...last } = earlier;
    return { ...current, earlier: [...before, last] };
  } catch (error) {
    deps.logger.warn("the earlier runs' transcript could not be read; this run's is kept alone", { ...log, reason: describeError(error) });
    return current;
  }
}
