/**
 * A dynalite stage for e2e tests of the built CLI on AWS: started (with the CLI built) before
 * the file's tests, closed after them, and the environment that points the CLI at it.
 */
import { buildCli } from './cli';
import { startDynalite, type TestDynamo } from './dynalite';

export interface CliStage {
  /** The running dynalite, its client and its tables. */
  readonly dynamo: TestDynamo;
  /** AWS settings for the CLI: dynalite's endpoint, dummy credentials, region eu-west-1, no SDK retries. */
  env(): Record<string, string>;
}

export function useCliStage(stage = 'prod'): CliStage {
  let dynamo: TestDynamo | undefined;
  beforeAll(async () => {
    buildCli();
    dynamo = await startDynalite(stage);
  }, 120_000);
  afterAll(async () => dynamo?.close());
  const started = (): TestDynamo => {
    if (!dynamo) throw new Error('dynalite has not started (useCliStage registers it in beforeAll)');
    return dynamo;
  };
  return {
    get dynamo() {
      return started();
    },
    env: () => ({ AWS_ENDPOINT_URL_DYNAMODB: started().endpoint, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1' }),
  };
}
