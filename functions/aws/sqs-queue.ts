/**
 * EventQueue over SQS: SendMessageBatch in chunks of at most 10 entries and at most
 * 256 KiB of bodies per request; entries SQS reports as failed are sent once more. Sent by
 * the lean client beside the SDK client (aws-json.ts: one of ingest's three calls per
 * event), to the queue URL's origin as the SDK does. Messages whose records are in the
 * event log already go by reference (`sendRecorded`): a few hundred bytes each, the worker
 * reading the payload with the record it reads anyway. Debounced messages go so too, with
 * their `DelaySeconds` (ingest stored their records first, as every other's).
 */
import type { BatchResultErrorEntry, SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import { awsJsonBeside } from './aws-json';
import { HookError } from '../core/errors';
import { messageJson, recordedMessageJson } from '../core/message-json';
import type { EventQueue, SendOptions } from '../core/ports';
import type { QueueMessage } from '../core/types';

const MAX_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;

export class SqsEventQueue implements EventQueue {
  private readonly origin: string | undefined;

  constructor(private readonly client: SQSClient, private readonly queueUrl: string) {
    this.origin = URL.canParse(queueUrl) ? new URL(queueUrl).origin : undefined;
  }

  async send(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    await this.sendBodies(messages.map(messageJson), options);
  }

  /** Debounced messages too, with their delay: a withdrawn record's message then finds it gone (worker/process.ts). */
  async sendRecorded(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    await this.sendBodies(messages.map(recordedMessageJson), options);
  }

  private async sendBodies(bodies: string[], options: SendOptions): Promise<void> {
    const delay = options.delaySeconds ? Math.min(900, Math.max(0, Math.round(options.delaySeconds))) : 0;
    const entries = bodies.map((body, index) => ({ Id: String(index), MessageBody: body, ...(delay ? { DelaySeconds: delay } : {}) }));
    for (const chunk of chunkEntries(entries)) await this.sendChunk(chunk);
  }

  private async sendChunk(entries: SendMessageBatchRequestEntry[]): Promise<void> {
    let pending = entries;
    for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
      let failed: string[];
      try {
        const result = await awsJsonBeside(this.client, 'sqs').call<{ Failed?: BatchResultErrorEntry[] }>(
          'SendMessageBatch', JSON.stringify({ QueueUrl: this.queueUrl, Entries: pending }), this.origin,
        );
        failed = (result.Failed ?? []).map((f) => f.Id ?? '');
        if (failed.length > 0 && (result.Failed ?? []).some((f) => f.SenderFault)) {
          const first = (result.Failed ?? []).find((f) => f.SenderFault);
          // A message SQS refuses by itself (not a service outage): its own, permanent code.
          throw new HookError('queue_rejected', `The queue refused a message (${first?.Code ?? 'unknown'}: ${first?.Message ?? ''})`);
        }
      } catch (error) {
        if (error instanceof HookError) throw error;
        const name = error instanceof Error ? error.name : 'Error';
        throw new HookError('unavailable', `The queue is unavailable (${name})`, { retryable: true, cause: error });
      }
      pending = pending.filter((entry) => failed.includes(entry.Id ?? ''));
    }
    if (pending.length > 0) throw new HookError('unavailable', `The queue did not accept ${pending.length} message(s)`, { retryable: true });
  }
}

/** Splits entries into SendMessageBatch requests that respect both SQS limits. */
export function chunkEntries(entries: SendMessageBatchRequestEntry[]): SendMessageBatchRequestEntry[][] {
  const chunks: SendMessageBatchRequestEntry[][] = [];
  let current: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.MessageBody ?? '');
    if (current.length === MAX_ENTRIES || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
