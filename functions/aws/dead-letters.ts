/** Sends a permanently failed message straight to the SQS dead-letter queue, with its reason and the receive it failed on. */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { HookError } from '../core/errors';
import type { DeadLetterSink } from '../core/ports';

/**
 * The message attribute holding the worker's receive count: in the dead-letter queue the
 * message is a new one, whose ApproximateReceiveCount counts only the listings' receives.
 */
export const RECEIVE_COUNT_ATTRIBUTE = 'receive_count';

export class SqsDeadLetters implements DeadLetterSink {
  constructor(private readonly client: SQSClient, private readonly queueUrl: string) {}

  async send(body: string, reason: string, receiveCount?: number): Promise<void> {
    try {
      await this.client.send(new SendMessageCommand({
        QueueUrl: this.queueUrl, MessageBody: body,
        MessageAttributes: {
          reason: { DataType: 'String', StringValue: reason.slice(0, 1000) },
          ...(receiveCount !== undefined ? { [RECEIVE_COUNT_ATTRIBUTE]: { DataType: 'Number', StringValue: String(receiveCount) } } : {}),
        },
      }));
    } catch (error) {
      throw new HookError('unavailable', `The dead-letter queue is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });
    }
  }
}
