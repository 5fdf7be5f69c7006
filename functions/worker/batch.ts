/**
 * The SQS batch handler shared by the worker Lambda and `hookagent serve`: records of a
 * batch run concurrently (a batch holds at most 10), and only the failed ones are
 * reported (ReportBatchItemFailures), through Powertools' batch processor.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processMessage, type WorkerDeps } from '../core/worker/process';

export function createWorkerHandler(deps: WorkerDeps) {
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
    const outcome = await processMessage(record.body, receiveCount, deps);
    // Throwing marks this record as a batch item failure; SQS delivers it again later.
    if (outcome.kind === 'retry') throw new Error(outcome.reason);
  };
  return async (event: SQSEvent): Promise<SQSBatchResponse> =>
    // A processor per batch: it keeps per-batch state, and `serve` runs batches side by side.
    processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), { throwOnFullBatchFailure: false, processInParallel: true });
}
