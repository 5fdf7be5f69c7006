/**
 * The SQS batch handler shared by the worker Lambda and `hookagent serve`: records of a
 * batch run concurrently (a batch holds at most 10), and only the failed ones are
 * reported (ReportBatchItemFailures), through Powertools' batch processor.
 *
 * Agent runs are bounded per process by a limiter shared by every batch; a message waits
 * for a slot before it takes its lease. A message that should be retried is paced: a
 * short `Retry-After` (≤ 10 s) is waited out in-process, otherwise the message's
 * visibility is changed to the retry schedule's delay before it is given back.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describeError, isHookError } from '../core/errors';
import { childLogger } from '../core/log';
import type { Config } from '../core/config/types';
import { createLimiter, type Limiter } from '../core/worker/limiter';
import { noteGivenBack, recordLogger } from '../core/worker/given-back';
import { handedOver } from '../core/worker/message';
import { agentBudgetMs, NOT_STARTED, processMessage, secretsOf, type Late, type MessageOutcome, type WorkerDeps } from '../core/worker/process';
import { redactSecrets } from '../core/redact';
import { IN_PROCESS_RETRIES, IN_PROCESS_WAIT_LIMIT_MS, INVOCATION_MARGIN_MS, retryDelaySeconds } from '../core/worker/retry-schedule';

/** Agent runs at once per process when `agent.concurrency` is not set. */
export const DEFAULT_AGENT_CONCURRENCY = 4;

/** The most agent runs at once in a process that runs with `config`. */
export const agentConcurrency = (config: Pick<Config, 'agent'>): number => config.agent.concurrency ?? DEFAULT_AGENT_CONCURRENCY;

export interface WorkerHandlerOptions {
  /** SQS ChangeMessageVisibility (or the local queue's): the message comes back after `seconds`. */
  changeVisibility?: (record: SQSRecord, seconds: number) => Promise<void>;
  /** Injected so tests do not wait for real. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /**
   * Milliseconds left in this invocation (Lambda's `getRemainingTimeInMillis`). A message
   * whose turn comes too late to finish (agent.timeout + 3 × delivery.timeout) is given
   * back at once instead of being cut off by the function timeout.
   */
  remainingMs?: () => number;
  /**
   * The process's limiter, when it outlives this handler: `serve` rebuilds the handler on each
   * configuration reload while batches of the previous one still run, and every one of them
   * must count against the same bound. By default the handler has its own, of agentConcurrency.
   */
  limiter?: Limiter;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A store that failed for a moment (a full disk, a lock) is tried again this soon, in-process. */
export const STORE_RETRY_MS = 1_000;

/**
 * processMessage, with a retryable failure of a store (it throws `unavailable`, e.g. the
 * local disk filled up mid-message) answered as a short retry: waited out in-process
 * like a short Retry-After, instead of leaving the message invisible for the queue's
 * whole visibility timeout. processMessage is idempotent under redelivery, so running
 * it again is safe.
 */
async function attempt(record: SQSRecord, receiveCount: number, deps: WorkerDeps): Promise<Attempted> {
  try {
    // Every line carries the SQS message id too (`webhook dead-letters --json` shows it as `id`).
    return await processMessage(record.body, receiveCount, { ...deps, logger: childLogger(deps.logger, { message_id: record.messageId }) }, handedOver(record));
  } catch (error) {
    if (isHookError(error) && error.retryable) {
      // The record does not say this (the write may be what failed): the log line and noteGivenBack do.
      recordLogger(deps.logger, record).warn('a store failed', { code: error.code, reason: redactSecrets(error.message, secretsOf(deps.config)), attempt: receiveCount });
      return { kind: 'retry', reason: error.message, retryAfterMs: STORE_RETRY_MS, unrecorded: error.code };
    }
    throw error;
  }
}

/** A retry whose reason the event record does not hold: `unrecorded` is its error code. */
type Attempted = MessageOutcome | { kind: 'retry'; reason: string; retryAfterMs?: number; unrecorded: string };

/** A message given back to the queue on purpose, its reason logged (and recorded) already. */
class GivenBack extends Error {}

export function createWorkerHandler(deps: WorkerDeps, options: WorkerHandlerOptions = {}) {
  const limiter = options.limiter ?? createLimiter(agentConcurrency(deps.config));
  const sleep = options.sleep ?? realSleep;
  const budgetMs = agentBudgetMs(deps);
  // processMessage checks again with the subscription's own --timeout once it has read it.
  const workerDeps: WorkerDeps = options.remainingMs ? { ...deps, remainingMs: options.remainingMs } : deps;

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
    try {
      await handleAttempts(record, receiveCount);
    } catch (error) {
      if (!(error instanceof GivenBack)) {
        // Unexpected (a bug, a non-retryable store error): the queue retries it; say so, and why.
        await noteGivenBack(deps, record, { code: isHookError(error) ? error.code : 'internal', reason: describeError(error), receiveCount });
      }
      throw error;
    }
  };

  /** Given back at once for another invocation to start: no failure until the last receive (only then is the reason recorded). */
  const giveBackLate = async (record: SQSRecord, receiveCount: number, late: Late): Promise<never> => {
    await options.changeVisibility?.(record, 0).catch(() => undefined);
    await noteGivenBack(deps, record, { code: 'not_started', reason: `${NOT_STARTED} (${late.leftMs} ms left, ${late.neededMs} ms needed)`, receiveCount, recordOnLastOnly: true });
    throw new GivenBack(NOT_STARTED);
  };

  const handleAttempts = async (record: SQSRecord, receiveCount: number): Promise<void> => {
    let late: Late | undefined;
    let outcome: Attempted = await limiter.run(async () => {
      // Waiting for a slot took this invocation's time: better another invocation starts it.
      const leftMs = options.remainingMs?.();
      late = leftMs !== undefined && leftMs < budgetMs ? { leftMs, neededMs: budgetMs } : undefined;
      return late ? { kind: 'retry', reason: NOT_STARTED } : attempt(record, receiveCount, workerDeps);
    });
    if (late) return giveBackLate(record, receiveCount, late);
    // Not into the invocation's last seconds: a message given back then is not cut off by its timeout.
    const leavesTime = (waitMs: number) => (options.remainingMs?.() ?? Number.POSITIVE_INFINITY) - waitMs >= INVOCATION_MARGIN_MS;
    for (let round = 0; round < IN_PROCESS_RETRIES && outcome.kind === 'retry' && outcome.retryAfterMs !== undefined && outcome.retryAfterMs <= IN_PROCESS_WAIT_LIMIT_MS && leavesTime(outcome.retryAfterMs); round++) {
      // Cheaper to wait a few seconds here than to give the message back; the slot is free meanwhile.
      await sleep(outcome.retryAfterMs);
      outcome = await limiter.run(() => attempt(record, receiveCount, workerDeps));
    }
    if (outcome.kind === 'retry' && 'late' in outcome && outcome.late) return giveBackLate(record, receiveCount, outcome.late);
    if (outcome.kind === 'ack') return;
    if (options.changeVisibility) {
      const seconds = retryDelaySeconds(receiveCount, outcome.retryAfterMs, options.random);
      await options.changeVisibility(record, seconds).catch((error: unknown) => {
        // The queue's own visibility timeout applies instead: later, never lost.
        recordLogger(deps.logger, record).warn('could not pace the retry', { error: describeError(error) });
      });
    }
    if ('unrecorded' in outcome) await noteGivenBack(deps, record, { code: outcome.unrecorded, reason: outcome.reason, receiveCount });
    // Throwing marks this record as a batch item failure; the queue delivers it again later.
    throw new GivenBack(outcome.reason);
  };
  return async (event: SQSEvent): Promise<SQSBatchResponse> =>
    // A processor per batch: it keeps per-batch state, and `serve` runs batches side by side.
    processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false, processInParallel: true });
}
