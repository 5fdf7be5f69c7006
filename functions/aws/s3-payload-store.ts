/**
 * PayloadStore over S3: payloads too large for an SQS message, as `s3://bucket/key` pointers.
 *
 * The bucket's lifecycle rule (infra/resources.yml) expires only objects tagged
 * `retention=15-days`, 15 days after they were written; every object is written with that
 * tag. The payload of a held event is tagged `retention=held` instead (PayloadRetention,
 * called by the event log when it writes a record held), so a pause of any length keeps
 * it, and gets the first tag back when the event is no longer held.
 */
import { GetObjectCommand, PutObjectCommand, PutObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { HookError } from '../core/errors';
import type { PayloadStore } from '../core/ports';

export const RETENTION_TAG = 'retention';
/** The tag value the lifecycle rule expires. */
export const EXPIRING = '15-days';
/** The tag value of a held event's payload: no rule matches it. */
export const HELD = 'held';
const EXPIRING_TAGGING = `${RETENTION_TAG}=${EXPIRING}`;

const unavailable = (error: unknown) =>
  new HookError('unavailable', `The payload store is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });

/** The bucket and key of an `s3://` pointer; undefined for any other store's (a local `file://` one). */
export function s3Object(pointer: string | undefined): { bucket: string; key: string } | undefined {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(pointer ?? '');
  return match ? { bucket: match[1] as string, key: match[2] as string } : undefined;
}

export class S3PayloadStore implements PayloadStore {
  constructor(private readonly client: S3Client, private readonly bucket: string) {}

  async put(key: string, body: string): Promise<string> {
    const objectKey = `payloads/${key}.json`;
    try {
      await this.client.send(new PutObjectCommand({
        Bucket: this.bucket, Key: objectKey, Body: body, ContentType: 'application/json', Tagging: EXPIRING_TAGGING,
      }));
    } catch (error) {
      throw unavailable(error);
    }
    return `s3://${this.bucket}/${objectKey}`;
  }

  async get(pointer: string): Promise<string> {
    const object = s3Object(pointer);
    if (!object) throw new HookError('payload_pointer_invalid', `Not a payload pointer: ${pointer}`);
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key }));
      return (await result.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      if (name === 'NoSuchKey') throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
      throw unavailable(error);
    }
  }
}

/** A store over a new S3 client (the Lambda's role, its region). */
export function s3PayloadStore(bucket: string): S3PayloadStore {
  return new S3PayloadStore(new S3Client({}), bucket);
}

/** Whether the lifecycle rule may expire a payload object. */
export interface PayloadRetention {
  /** Tags the object `held`: kept however long. An object already gone is left so. */
  keep(pointer: string): Promise<void>;
  /** Tags the object expiring again (15 days after it was written: the rule counts from then). */
  expire(pointer: string): Promise<void>;
}

/** PayloadRetention over S3: PutObjectTagging of the object's one tag. */
export class S3PayloadRetention implements PayloadRetention {
  /** `client`: made on first use (most events carry no S3 pointer). */
  constructor(private readonly client: () => Promise<S3Client>) {}

  keep = (pointer: string): Promise<void> => this.tag(pointer, HELD);
  expire = (pointer: string): Promise<void> => this.tag(pointer, EXPIRING);

  private async tag(pointer: string, value: string): Promise<void> {
    const object = s3Object(pointer);
    if (!object) return;
    try {
      const s3 = await this.client();
      await s3.send(new PutObjectTaggingCommand({ Bucket: object.bucket, Key: object.key, Tagging: { TagSet: [{ Key: RETENTION_TAG, Value: value }] } }));
    } catch (error) {
      if (error instanceof Error && error.name === 'NoSuchKey') return;
      throw unavailable(error);
    }
  }
}

/** Over an S3 client made on first use, in `region` (the event log's DynamoDB client's). */
export function lazyPayloadRetention(region: () => Promise<string>): PayloadRetention {
  let client: Promise<S3Client> | undefined;
  return new S3PayloadRetention(() => (client ??= region().then((r) => new S3Client({ region: r }))));
}
