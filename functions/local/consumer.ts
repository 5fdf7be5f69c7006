/**
 * Feeds the worker handler from the local queue exactly as the SQS event source mapping
 * does on AWS: batches of SQS records, partial batch responses honoured (failed messages
 * come back after the visibility timeout), woken at once when a message is sent.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { describeError } from '../core/errors';
import type { Logger } from '../core/log';
import { recordLogger } from '../core/worker/given-back';
import { handOver } from '../core/worker/message';
import type { ReceivedMessage, SqliteQueue } from './sqlite/queue';

export type BatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface ConsumerOptions {
  batchSize: number;
  /** Batches processed at the same time. */
  concurrency: number;
  /** A safety net for wake-ups missed across processes; normal sends wake the consumer at once. */
  idleCheckMs: number;
  logger: Logger;
  queueArn?: string;
}

export function toSqsRecord(message: ReceivedMessage, queueArn: string): SQSRecord {
  const now = Date.now();
  const record: SQSRecord = {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: 'hookagent-local',
      ApproximateFirstReceiveTimestamp: String(now),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'local',
  };
  if (message.message) handOver(record, message.message);
  // Nothing in the worker reads it: hashing a 20 KB body per message waits until something does.
  let md5: string | undefined;
  Object.defineProperty(record, 'md5OfBody', { enumerable: true, get: () => (md5 ??= createHash('md5').update(message.body).digest('hex')) });
  return record;
}

export class QueueConsumer {
  private stopping = false;
  /** Messages still in flight when the grace period ended, given back to the queue at once. */
  returned = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly unfinished = new Map<string, ReceivedMessage>();
  private loop: Promise<void> | undefined;
  /**
   * What ends the current wait when the consumer stops. Each wait removes its own entry:
   * racing every wait against one promise that settles only at stop would leave a
   * reaction on it per wait (one per batch under load, one per idle check when idle).
   */
  private readonly onStop = new Set<() => void>();

  constructor(private readonly queue: SqliteQueue, private readonly handler: BatchHandler, private readonly options: ConsumerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops receiving, waits for in-flight batches up to `graceMs`, then requeues what is left. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const end of [...this.onStop]) end();
    this.queue.wake();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
    clearTimeout(timer);
    for (const message of this.unfinished.values()) {
      await this.queue.changeVisibility(message.receiptHandle, 0).then(() => {
        this.returned += 1;
      }, () => undefined);
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    const arn = this.options.queueArn ?? 'arn:aws:sqs:local:000000000000:hookagent-local-queue';
    while (!this.stopping) {
      if (this.inFlight.size >= this.options.concurrency) {
        await this.wait((end) => {
          // Reactions on in-flight batches go with them when they settle.
          for (const work of this.inFlight) void work.then(end, end);
          return () => {};
        });
        continue;
      }
      let batch: ReceivedMessage[];
      try {
        batch = await this.queue.receive(this.options.batchSize);
      } catch (error) {
        this.options.logger.error('local queue receive failed', { error: describeError(error) });
        await this.idle(this.options.idleCheckMs);
        continue;
      }
      if (batch.length === 0) {
        const next = await this.queue.nextVisibleIn().catch(() => undefined);
        await this.idle(next === undefined ? this.options.idleCheckMs : Math.min(next + 1, this.options.idleCheckMs));
        continue;
      }
      const work = this.process(batch, arn).finally(() => this.inFlight.delete(work));
      this.inFlight.add(work);
    }
  }

  private async idle(ms: number): Promise<void> {
    if (this.stopping) return;
    await this.wait((end) => {
      const timer = setTimeout(end, ms);
      const cancel = this.queue.onNextMessages(end);
      return () => {
        clearTimeout(timer);
        cancel();
      };
    });
  }

  /**
   * Resolves at the first call of `end` (given to `start`) or when the consumer stops, and
   * then undoes what `start` registered (the function it returns) and its stop entry.
   */
  private wait(start: (end: () => void) => () => void): Promise<void> {
    return new Promise<void>((resolve) => {
      let cleanup: (() => void) | undefined;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        this.onStop.delete(end);
        cleanup?.();
        resolve();
      };
      this.onStop.add(end);
      cleanup = start(end);
      if (ended) cleanup();
    });
  }

  private async process(batch: ReceivedMessage[], arn: string): Promise<void> {
    for (const message of batch) this.unfinished.set(message.messageId, message);
    let failed: Set<string>;
    try {
      const response = await this.handler({ Records: batch.map((m) => toSqsRecord(m, arn)) });
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A handler that throws fails the whole batch, as with Lambda: a line per message, with its ids.
      for (const message of batch) recordLogger(this.options.logger, message).error('worker batch failed', { error: describeError(error), messages: batch.length });
      failed = new Set(batch.map((m) => m.messageId));
    }
    // Failed messages stay invisible until the visibility timeout, then come back. The
    // deletes are queued together: one transaction, not one per message.
    await Promise.all(batch.map(async (message) => {
      this.unfinished.delete(message.messageId);
      if (!failed.has(message.messageId)) await this.queue.delete(message.receiptHandle).catch((error: unknown) => {
        recordLogger(this.options.logger, message).error('local queue delete failed', { error: describeError(error) });
      });
    }));
  }
}
