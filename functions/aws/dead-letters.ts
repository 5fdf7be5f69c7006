/** Sends a permanently failed message straight to the SQS dead-letter queue, with its reason. */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { HookError } from '../core/errors';
import type { DeadLetterSink } from '../core/ports';

export class SqsDeadLetters implements DeadLetterSink {
  constructor(private readonly client: SQSClient, private readonly queueUrl: string) {}

  async send(body: string, reason: string): Promise<void> {
    try {
      await this.client.send(new SendMessageCommand({
        QueueUrl: this.queueUrl, MessageBody: body,
        MessageAttributes: { reason: { DataType: 'String', StringValue: reason.slice(0, 1000) } },
      }));
    } catch (error) {
      throw new HookError('unavailable', `The dead-letter queue is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });
    }
  }
}
