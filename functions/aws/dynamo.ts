/** One DynamoDB client factory for AWS and for the local store (dynalite). */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HookError } from '../core/errors';
import { leanDynamoClient } from './sdk-clients';

export interface DynamoOptions {
  region?: string;
  /** A local endpoint (dynalite); credentials are then placeholders. */
  endpoint?: string;
}

export function createDynamoClient(options: DynamoOptions = {}): DynamoDBClient {
  if (options.endpoint) {
    return leanDynamoClient({
      endpoint: options.endpoint,
      region: options.region ?? 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 2,
    });
  }
  return leanDynamoClient({ ...(options.region ? { region: options.region } : {}), maxAttempts: 3 });
}

/** Wraps an SDK or network failure as `unavailable`: the caller answers 503 or retries later. */
export function storeUnavailable(what: string, error: unknown): HookError {
  const name = error instanceof Error ? error.name : 'Error';
  const detail = error instanceof Error ? error.message : String(error);
  return new HookError('unavailable', `${what} is unavailable (${name}: ${detail})`, { retryable: true, cause: error });
}

export function isConditionalFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
