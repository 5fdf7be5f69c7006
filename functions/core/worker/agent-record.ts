/**
 * After an agent run (answered or failed): its usage and transcript go into the event
 * record, and its tokens into today's budget counters. Storing them never fails the
 * event: a store that is down costs the transcript or the charge, logged, not the reply.
 */
import type { AgentRun } from '../agent/run-record';
import { storeTranscript } from '../agent/transcript-store';
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { Clock, CounterStore, PayloadStore } from '../ports';
import type { EventRecord, QueueMessage } from '../types';
import { chargeBudget } from './budget';

export interface RunRecordDeps {
  payloads: PayloadStore;
  counters?: CounterStore;
  clock: Clock;
  logger: Logger;
}

export async function recordAgentRun(deps: RunRecordDeps, message: QueueMessage, run: AgentRun | undefined): Promise<Partial<EventRecord>> {
  if (!run) return {};
  const log = { event_id: message.event_id, subscription: message.subscription };
  const changes: Partial<EventRecord> = { usage: run.usage };
  // Side by side: two independent writes (in the local store, one transaction).
  await Promise.all([
    chargeBudget(deps.counters, message.subscription, run.usage, deps.clock.now()).catch((error: unknown) => {
      deps.logger.warn('token usage not counted against the budget', { ...log, reason: describeError(error) });
    }),
    storeTranscript(deps.payloads, message.event_id, message.subscription, run.transcript).then((ref) => {
      changes.transcript_ref = ref;
    }, (error: unknown) => {
      deps.logger.warn('transcript not stored', { ...log, reason: describeError(error) });
    }),
  ]);
  deps.logger.info('agent usage', {
    ...log, provider: run.usage.provider, model: run.usage.model, input_tokens: run.usage.input_tokens, output_tokens: run.usage.output_tokens,
    cache_read_tokens: run.usage.cache_read_tokens ?? 0, cache_write_tokens: run.usage.cache_write_tokens ?? 0, steps: run.usage.steps,
  });
  return changes;
}
