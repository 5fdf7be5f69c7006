/**
 * The dead-letter queue for operators (CLI): SQS has no "peek", so listing receives every
 * message for a short visibility timeout and then makes them visible again at once;
 * redriving sends each chosen message to the event queue and only then deletes it from the
 * dead-letter queue (at worst a copy is queued twice; the worker's record check makes the
 * second a no-op).
 */
import {
  ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, type Message, type SQSClient,
} from '@aws-sdk/client-sqs';
import { HookError } from '../core/errors';
import { describeBody, type DeadLetter, type DeadLetterQueue } from '../core/operations/dead-letters';

/** Enough for any backlog an operator would read in a terminal; more is reported as a cap. */
const MAX_MESSAGES = 1000;
const HIDE_SECONDS = 30;

function failure(action: string, error: unknown): HookError {
  if (error instanceof HookError) return error;
  const name = error instanceof Error ? error.name : 'Error';
  return new HookError('unavailable', `Could not ${action} (${name}: ${error instanceof Error ? error.message : String(error)})`, { retryable: true, cause: error });
}

/** The event queue's redrive (serverless.yml `custom.maxReceiveCount`); keep in step. */
export const AWS_MAX_RECEIVE_COUNT = 5;

export class SqsDeadLetterQueue implements DeadLetterQueue {
  constructor(private readonly client: SQSClient, private readonly deadLetterQueueUrl: string, private readonly queueUrl: string, readonly maxReceiveCount = AWS_MAX_RECEIVE_COUNT) {}

  async list(): Promise<DeadLetter[]> {
    const received = await this.receiveAll();
    await this.release(received.map(([, handle]) => handle));
    return received.map(([letter]) => letter);
  }

  async redrive(select: (letter: DeadLetter) => boolean, beforeRequeue: (letter: DeadLetter) => Promise<void>): Promise<DeadLetter[]> {
    const received = await this.receiveAll();
    const moved: DeadLetter[] = [];
    const keep: string[] = [];
    let firstError: unknown;
    for (const [letter, handle] of received) {
      if (!select(letter) || firstError) {
        keep.push(handle);
        continue;
      }
      try {
        await beforeRequeue(letter);
        await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: letter.body }));
        await this.client.send(new DeleteMessageCommand({ QueueUrl: this.deadLetterQueueUrl, ReceiptHandle: handle }));
        moved.push(letter);
      } catch (error) {
        firstError = error;
        keep.push(handle);
      }
    }
    await this.release(keep);
    if (firstError) throw failure(`redrive every dead letter; ${moved.length} moved before the failure`, firstError);
    return moved;
  }

  private async receiveAll(): Promise<Array<[DeadLetter, string]>> {
    const byId = new Map<string, [DeadLetter, string]>();
    try {
      while (byId.size < MAX_MESSAGES) {
        const page = await this.client.send(new ReceiveMessageCommand({
          QueueUrl: this.deadLetterQueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: HIDE_SECONDS, WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'], MessageAttributeNames: ['reason'],
        }));
        const messages = page.Messages ?? [];
        if (messages.length === 0) break;
        for (const message of messages) if (message.MessageId && message.ReceiptHandle) byId.set(message.MessageId, [this.toLetter(message), message.ReceiptHandle]);
      }
    } catch (error) {
      await this.release([...byId.values()].map(([, handle]) => handle)).catch(() => undefined);
      throw failure('read the dead-letter queue', error);
    }
    return [...byId.values()].sort(([a], [b]) => (a.dead_at ?? '').localeCompare(b.dead_at ?? ''));
  }

  private toLetter(message: Message): DeadLetter {
    const body = message.Body ?? '';
    const sent = Number(message.Attributes?.SentTimestamp);
    return {
      id: message.MessageId ?? '', ...describeBody(body),
      reason: message.MessageAttributes?.reason?.StringValue ?? `the queue gave up after ${this.maxReceiveCount} receives`,
      receive_count: Number(message.Attributes?.ApproximateReceiveCount) || 0,
      ...(Number.isFinite(sent) && sent > 0 ? { dead_at: new Date(sent).toISOString() } : {}),
      body,
    };
  }

  /** Makes messages visible again at once. */
  private async release(handles: string[]): Promise<void> {
    for (let i = 0; i < handles.length; i += 10) {
      const chunk = handles.slice(i, i + 10);
      await this.client.send(new ChangeMessageVisibilityBatchCommand({
        QueueUrl: this.deadLetterQueueUrl, Entries: chunk.map((handle, n) => ({ Id: String(n), ReceiptHandle: handle, VisibilityTimeout: 0 })),
      }));
    }
  }
}
