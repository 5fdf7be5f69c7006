/** PayloadStore over S3: payloads too large for an SQS message, as `s3://bucket/key` pointers. */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { HookError } from '../core/errors';
import type { PayloadStore } from '../core/ports';

export class S3PayloadStore implements PayloadStore {
  constructor(private readonly client: S3Client, private readonly bucket: string) {}

  async put(key: string, body: string): Promise<string> {
    const objectKey = `payloads/${key}.json`;
    try {
      await this.client.send(new PutObjectCommand({
        Bucket: this.bucket, Key: objectKey, Body: body, ContentType: 'application/json',
      }));
    } catch (error) {
      throw new HookError('unavailable', `The payload store is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });
    }
    return `s3://${this.bucket}/${objectKey}`;
  }

  async get(pointer: string): Promise<string> {
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(pointer);
    if (!match) throw new HookError('payload_pointer_invalid', `Not a payload pointer: ${pointer}`);
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: match[1], Key: match[2] }));
      return (await result.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      if (name === 'NoSuchKey') throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
      throw new HookError('unavailable', `The payload store is unavailable (${name})`, { retryable: true, cause: error });
    }
  }
}

/** A store over a new S3 client (the Lambda's role, its region). */
export function s3PayloadStore(bucket: string): S3PayloadStore {
  return new S3PayloadStore(new S3Client({}), bucket);
}
