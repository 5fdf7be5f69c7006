/**
 * SecretSource for AWS: the environment first, else the SSM SecureString parameter
 * `/hookagent/<stage>/<VAR>`, cached for the life of the container.
 */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { HookError } from '../core/errors';
import type { SecretSource } from '../core/ports';

import { ssmParameterName } from './ssm-names';

export { ssmParameterName };

/** A source over a new SSM client (the Lambda's role, its region). */
export function ssmSecretSource(stage: string): SsmSecretSource {
  return new SsmSecretSource(new SSMClient({}), stage);
}

export class SsmSecretSource implements SecretSource {
  private readonly cache = new Map<string, Promise<string | undefined>>();

  constructor(private readonly client: SSMClient, private readonly stage: string, private readonly env: NodeJS.ProcessEnv = process.env) {}

  get(name: string): Promise<string | undefined> {
    const fromEnv = this.env[name];
    if (fromEnv) return Promise.resolve(fromEnv);
    let cached = this.cache.get(name);
    if (!cached) {
      cached = this.fetch(name);
      this.cache.set(name, cached);
      cached.catch(() => this.cache.delete(name));
    }
    return cached;
  }

  where(name: string): string {
    return `or the SSM parameter ${ssmParameterName(this.stage, name)}: hookagent secrets set ${name} --stage ${this.stage}`;
  }

  private async fetch(name: string): Promise<string | undefined> {
    try {
      const result = await this.client.send(new GetParameterCommand({ Name: ssmParameterName(this.stage, name), WithDecryption: true }));
      return result.Parameter?.Value;
    } catch (error) {
      if (error instanceof Error && error.name === 'ParameterNotFound') return undefined;
      throw new HookError('unavailable', `SSM Parameter Store is unavailable (${error instanceof Error ? error.name : 'Error'})`, { retryable: true, cause: error });
    }
  }
}
