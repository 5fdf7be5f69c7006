/** The AWS deployment an operations command acts on, and the AWS clients it needs. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { HookError } from '../../functions/core/errors';
import { awsDeployment, type CliContext, type GlobalOptions } from '../context';

export interface OperationsTarget {
  stage: string;
  region: string | undefined;
  /** Client options: the region when one is given, else the SDK's own resolution. */
  clientConfig: { region?: string };
}

export function operationsTarget(ctx: CliContext, options: GlobalOptions, what: string): OperationsTarget {
  const deployment = awsDeployment(ctx.config, options);
  if (!deployment) {
    throw new HookError('no_deployment', `${what} acts on an AWS deployment: pass --stage (and --region) or add \`aws: { stage, region }\` to config.yaml.`);
  }
  return { stage: deployment.stage, region: deployment.region, clientConfig: deployment.region ? { region: deployment.region } : {} };
}

export const stackName = (stage: string) => `hookagent-${stage}`;
export const queueName = (stage: string) => `hookagent-${stage}-queue`;
export const deadLetterQueueName = (stage: string) => `hookagent-${stage}-dead-letters`;

/** A queue's URL by its name (infra/resources.yml names them). */
export async function queueUrl(sqs: SQSClient, name: string): Promise<string> {
  const { GetQueueUrlCommand } = await import('@aws-sdk/client-sqs');
  try {
    const result = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    return result.QueueUrl ?? '';
  } catch (error) {
    const code = error instanceof Error ? error.name : 'Error';
    if (code.includes('QueueDoesNotExist') || code === 'AWS.SimpleQueueService.NonExistentQueue') {
      throw new HookError('not_deployed', `The queue ${name} does not exist: is the stage deployed in this region? (npx osls deploy --stage …)`);
    }
    // Throttling, expired credentials, a refusal: the queue may well exist, so say what failed, not that it is missing.
    throw new HookError('unavailable', `Could not read the queue ${name} (${code}: ${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
}
