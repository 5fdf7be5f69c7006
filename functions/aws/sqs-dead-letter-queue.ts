/**
 * The dead-letter queue for operators (CLI): SQS has no "peek", so listing receives every
 * message for a short visibility timeout and then makes them visible again at once;
 * redriving sends each chosen message to the event queue and only then deletes it from the
 * dead-letter queue (at worst a copy is queued twice; the worker's record check makes the
 * second a no-op).
 *
 * A letter's `receive_count` is how many times the worker received the message, never the
 * DLQ's ApproximateReceiveCount, which each listing raises (hunt 3, D12):
 * - the worker's own letters carry the receive they failed on (dead-letters.ts);
 * - a letter the queue's redrive policy moved (SQS marks it with DeadLetterQueueSourceArn;
 *   it has no reason of ours) was received exactly maxReceiveCount times: SQS counts
 *   receives across queues, so its DLQ count is that plus the listings'. The policy is
 *   read from the event queue (AWS_MAX_RECEIVE_COUNT when it cannot be);
 * - a letter an older worker sent without the count: 1, the least it can be.
 *
 * A letter's time: SentTimestamp is when the message was sent to the queue it is in only
 * for a letter the worker sent (so `dead_at`, the time it was dead-lettered). A letter the
 * redrive policy moved keeps the SentTimestamp of its original send to the event queue
 * (standard queues keep the enqueue timestamp on the move), and no message attribute tells
 * when it moved: its SentTimestamp is `queued_at`, and it has no `dead_at`.
 *
 * One listing receives at most 1,000 letters (a terminal's worth; SQS has no count but an
 * approximate one): `listing()` says when it stopped there, with that count. A redrive goes
 * on in batches of up to 1,000 until a receive finds no letter it has not seen: the moved
 * ones are deleted, and those it leaves stay hidden until it ends, so each batch reaches
 * letters behind them.
 */
import {
  ChangeMessageVisibilityBatchCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type Message, type QueueAttributeName, type SQSClient,
} from '@aws-sdk/client-sqs';
import { HookError } from '../core/errors';
import { RECEIVE_COUNT_ATTRIBUTE } from './dead-letters';
import { describeBody, type DeadLetter, type DeadLetterListing, type DeadLetterQueue } from '../core/operations/dead-letters';

/** Letters one receive gathers: enough for any backlog an operator would read in a terminal; `listing()` reports more as a cap. */
export const MAX_MESSAGES = 1000;
/** A listing makes what it received visible again at once; this only bounds a listing cut off. */
const HIDE_SECONDS = 30;
/**
 * A redrive keeps the letters it leaves hidden until it ends (then visible at once), so the
 * next batch reaches those behind them: long enough for batches of 1,000 moves.
 */
const REDRIVE_HIDE_SECONDS = 300;

/** Letters received and hidden, oldest first, with their receipt handles; `capped`: it stopped at MAX_MESSAGES. */
interface Received {
  letters: Array<[DeadLetter, string]>;
  capped: boolean;
}

function failure(action: string, error: unknown): HookError {
  if (error instanceof HookError) return error;
  const name = error instanceof Error ? error.name : 'Error';
  return new HookError('unavailable', `Could not ${action} (${name}: ${error instanceof Error ? error.message : String(error)})`, { retryable: true, cause: error });
}

/** The event queue's redrive (serverless.yml `custom.maxReceiveCount`); keep in step. */
export const AWS_MAX_RECEIVE_COUNT = 5;

export class SqsDeadLetterQueue implements DeadLetterQueue {
  constructor(private readonly client: SQSClient, private readonly deadLetterQueueUrl: string, private readonly queueUrl: string, readonly maxReceiveCount = AWS_MAX_RECEIVE_COUNT) {}

  private deployedMax: Promise<number> | undefined;

  /**
   * The event queue's redrive maxReceiveCount as deployed; `maxReceiveCount` when it cannot be
   * read. Read once per instance (the receive limit records of SQS-moved letters are settled with).
   */
  redriveCount(): Promise<number> {
    return (this.deployedMax ??= this.client.send(new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ['RedrivePolicy'] }))
      .then((answer) => Number((JSON.parse(answer.Attributes?.RedrivePolicy ?? '{}') as { maxReceiveCount?: unknown }).maxReceiveCount))
      .then((count) => (Number.isInteger(count) && count > 0 ? count : this.maxReceiveCount), () => this.maxReceiveCount));
  }

  async list(): Promise<DeadLetter[]> {
    return (await this.listing()).letters;
  }

  /** The first MAX_MESSAGES letters received and, when there may be more, the queue's approximate count. */
  async listing(): Promise<DeadLetterListing> {
    const { letters, capped } = await this.receiveAll(HIDE_SECONDS);
    await this.release(letters.map(([, handle]) => handle));
    const listed = letters.map(([letter]) => letter);
    if (!capped) return { letters: listed };
    const approximateTotal = await this.approximateCount();
    return { letters: listed, truncated: approximateTotal === undefined ? {} : { approximateTotal: Math.max(approximateTotal, listed.length) } };
  }

  async redrive(select: (letter: DeadLetter) => boolean, beforeRequeue: (letter: DeadLetter) => Promise<void>): Promise<DeadLetter[]> {
    const moved: DeadLetter[] = [];
    // Letters left in place, by id: the latest receipt handle (one may come back once its hide runs out).
    const keep = new Map<string, string>();
    let firstError: unknown;
    let unreached = false;
    try {
      for (;;) {
        const { letters, capped } = await this.receiveAll(REDRIVE_HIDE_SECONDS);
        let fresh = 0;
        for (const [letter, handle] of letters) {
          if (keep.has(letter.id)) {
            keep.set(letter.id, handle);
            continue;
          }
          fresh += 1;
          if (!select(letter) || firstError) {
            keep.set(letter.id, handle);
            continue;
          }
          try {
            await beforeRequeue(letter);
            await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: letter.body }));
            await this.client.send(new DeleteMessageCommand({ QueueUrl: this.deadLetterQueueUrl, ReceiptHandle: handle }));
            moved.push(letter);
          } catch (error) {
            firstError = error;
            keep.set(letter.id, handle);
          }
        }
        if (firstError || !capped) break;
        // A full batch of letters already left in place: those behind them cannot be reached now.
        if (fresh === 0) {
          unreached = true;
          break;
        }
      }
    } catch (error) {
      firstError = error;
    } finally {
      await this.release([...keep.values()]).catch((error: unknown) => (firstError ??= error));
    }
    if (firstError) throw failure(`redrive every dead letter; ${moved.length} moved before the failure`, firstError);
    if (unreached) {
      throw new HookError('unavailable', `Could not reach every dead letter: ${moved.length} moved, but the ${keep.size} left in place (not selected) came back and filled a whole receive; run the command again`);
    }
    return moved;
  }

  /** The dead-letter queue's approximate size (visible and hidden); undefined when it cannot be read. */
  private async approximateCount(): Promise<number | undefined> {
    try {
      const answer = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: this.deadLetterQueueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
      const count = (name: QueueAttributeName) => Number(answer.Attributes?.[name] ?? Number.NaN);
      const total = count('ApproximateNumberOfMessages') + count('ApproximateNumberOfMessagesNotVisible');
      return Number.isFinite(total) ? total : undefined;
    } catch {
      return undefined;
    }
  }

  private async receiveAll(hideSeconds: number): Promise<Received> {
    const byId = new Map<string, [DeadLetter, string]>();
    const redriveCount = await this.redriveCount();
    let capped = true;
    try {
      while (byId.size < MAX_MESSAGES) {
        const page = await this.client.send(new ReceiveMessageCommand({
          QueueUrl: this.deadLetterQueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: hideSeconds, WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['SentTimestamp', 'DeadLetterQueueSourceArn'], MessageAttributeNames: ['reason', RECEIVE_COUNT_ATTRIBUTE],
        }));
        const messages = page.Messages ?? [];
        if (messages.length === 0) {
          capped = false;
          break;
        }
        for (const message of messages) if (message.MessageId && message.ReceiptHandle) byId.set(message.MessageId, [this.toLetter(message, redriveCount), message.ReceiptHandle]);
      }
    } catch (error) {
      await this.release([...byId.values()].map(([, handle]) => handle)).catch(() => undefined);
      throw failure('read the dead-letter queue', error);
    }
    const letters = [...byId.values()].sort(([a], [b]) => (a.dead_at ?? a.queued_at ?? '').localeCompare(b.dead_at ?? b.queued_at ?? ''));
    return { letters, capped };
  }

  private toLetter(message: Message, redriveCount: number): DeadLetter {
    const body = message.Body ?? '';
    const sent = Number(message.Attributes?.SentTimestamp);
    const reason = message.MessageAttributes?.reason?.StringValue;
    const recorded = Number(message.MessageAttributes?.[RECEIVE_COUNT_ATTRIBUTE]?.StringValue);
    const redriven = reason === undefined || message.Attributes?.DeadLetterQueueSourceArn !== undefined;
    const time = Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : undefined;
    return {
      id: message.MessageId ?? '', ...describeBody(body),
      reason: reason ?? `the queue gave up after ${redriveCount} receives`,
      receive_count: Number.isInteger(recorded) && recorded > 0 ? recorded : redriven ? redriveCount : 1,
      // SentTimestamp: the dead-lettering for the worker's letters; the original send for the redrive's.
      ...(time === undefined ? {} : redriven ? { queued_at: time } : { dead_at: time }),
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
