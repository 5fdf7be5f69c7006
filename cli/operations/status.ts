/**
 * `hookagent status [--json]`: is the deployed stage healthy? (Without a deployment: the
 * local service, local-status.ts.) Its stack and URL, /health,
 * the queue's depth and oldest message, the dead-letter queue's depth, the secrets SSM is
 * missing, and whether the deployed config.yaml differs from the local one. Exit code 3
 * when something needs attention (see README, "Operations").
 */
// Types only: the SDK loads when a deployment's status is read (`import()` below), so the
// local `status` starts without it (see cli/aws-stores.ts).
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { QueueAttributeName, SQSClient } from '@aws-sdk/client-sqs';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { HookError } from '../../functions/core/errors';
import { ssmParameterName } from '../../functions/aws/ssm-names';
import { awsDeployment, createContext, type CliContext, type GlobalOptions } from '../context';
import { reportFailure, type Args } from '../command-run';
import { commandName } from '../invocation';
import { checkHealth, type Health } from './health';
import { collectLocalStatus, renderLocal } from './local-status';
import { configReferences } from '../secrets';
import { operationsTarget, stackName } from './deployment';

export const ATTENTION_EXIT_CODE = 3;
const HEALTH_TIMEOUT_MS = 5000;

export interface StatusReport {
  stage: string;
  region: string | null;
  stack: { name: string; status: string };
  url: string | null;
  health: Health;
  /** `delayed`: sent with DelaySeconds (debounce), not yet receivable: neither waiting nor in flight for SQS. */
  queue: { depth: number; in_flight: number; delayed: number; oldest_message_age_seconds: number | null };
  dead_letters: { depth: number };
  secrets: { referenced: string[]; missing: string[] };
  config: { deployed_hash: string | null; local_hash: string; drift: boolean };
  attention: string[];
}

/**
 * The hash of what packaging deploys from the config dir (config.yaml and the user skills),
 * computed by the very code that bakes it into the deployment (infra/deploy-config.cjs).
 */
export function localConfigHash(configDir: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS module serverless.yml reads
  const { deploymentHash } = require('../../infra/deploy-config.cjs') as { deploymentHash(dir: string): string };
  return deploymentHash(configDir);
}

const describe = (error: unknown) => `${error instanceof Error ? error.name : 'Error'}: ${error instanceof Error ? error.message : String(error)}`;

export async function collectStatus(ctx: CliContext, options: GlobalOptions): Promise<StatusReport> {
  const target = operationsTarget(ctx, options, 'status');
  const [{ CloudFormationClient, DescribeStacksCommand }, { CloudWatchClient }, { SQSClient }, { SSMClient }] = await Promise.all([
    import('@aws-sdk/client-cloudformation'), import('@aws-sdk/client-cloudwatch'), import('@aws-sdk/client-sqs'), import('@aws-sdk/client-ssm'),
  ]);
  const cloudformation = new CloudFormationClient(target.clientConfig);
  const sqs = new SQSClient(target.clientConfig);
  const ssm = new SSMClient(target.clientConfig);
  const cloudwatch = new CloudWatchClient(target.clientConfig);
  try {
    const name = stackName(target.stage);
    let stack;
    try {
      stack = (await cloudformation.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
    } catch (error) {
      if (/does not exist/.test(error instanceof Error ? error.message : '')) {
        throw new HookError('not_deployed', `The stage '${target.stage}' is not deployed${target.region ? ` in ${target.region}` : ''} (no stack ${name}): npx osls deploy --stage ${target.stage}`);
      }
      throw new HookError('unavailable', `Could not read the stack ${name} (${describe(error)})`, { cause: error });
    }
    const outputs = Object.fromEntries((stack?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
    const url = outputs.HttpApiUrl ? outputs.HttpApiUrl.replace(/\/+$/, '') : null;
    const attention: string[] = [];
    const stackStatus = stack?.StackStatus ?? 'UNKNOWN';
    if (!/_COMPLETE$/.test(stackStatus) || /ROLLBACK|DELETE/.test(stackStatus)) attention.push(`the stack is ${stackStatus}`);

    const [health, queue, deadLetters, secrets, oldest] = await Promise.all([
      deployedHealth(url),
      queueDepth(sqs, outputs.EventQueueUrl),
      queueDepth(sqs, outputs.DeadLetterQueueUrl),
      missingSecrets(ssm, target.stage, configReferences(ctx.config)),
      oldestMessageAge(cloudwatch, `hookagent-${target.stage}-queue`),
    ]);
    if (!health.ok) attention.push(`/health answered ${health.status ?? health.error}`);
    if (deadLetters.depth > 0) attention.push(`${deadLetters.depth} dead letter(s): ${commandName()} webhook dead-letters --stage ${target.stage}`);
    if (secrets.missing.length > 0) attention.push(`secrets missing in SSM: ${secrets.missing.join(', ')} (${commandName()} secrets set <NAME> --stage ${target.stage})`);
    const localHash = localConfigHash(ctx.configDir);
    const deployedHash = outputs.ConfigHash ?? null;
    const drift = deployedHash !== localHash;
    if (drift) attention.push(deployedHash ? 'config.yaml or a skill under skills/ differs from the deployed one: npx osls deploy to apply it' : 'the deployment does not record its config.yaml hash (deployed before hookagent status existed): redeploy');
    return {
      stage: target.stage, region: target.region ?? null, stack: { name, status: stackStatus }, url, health,
      queue: { ...queue, oldest_message_age_seconds: oldest }, dead_letters: { depth: deadLetters.depth }, secrets,
      config: { deployed_hash: deployedHash, local_hash: localHash, drift }, attention,
    };
  } finally {
    for (const client of [cloudformation, sqs, ssm, cloudwatch]) client.destroy();
  }
}

async function deployedHealth(url: string | null): Promise<Health> {
  return url ? checkHealth(url, HEALTH_TIMEOUT_MS) : { ok: false, status: null, error: 'no HttpApiUrl output' };
}

async function queueDepth(sqs: SQSClient, url: string | undefined): Promise<{ depth: number; in_flight: number; delayed: number }> {
  const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  if (!url) throw new HookError('unavailable', 'The stack has no queue outputs (EventQueueUrl, DeadLetterQueueUrl): redeploy');
  try {
    const result = await sqs.send(new GetQueueAttributesCommand({
      QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }));
    const count = (name: QueueAttributeName) => Number(result.Attributes?.[name] ?? 0);
    return { depth: count('ApproximateNumberOfMessages'), in_flight: count('ApproximateNumberOfMessagesNotVisible'), delayed: count('ApproximateNumberOfMessagesDelayed') };
  } catch (error) {
    throw new HookError('unavailable', `Could not read the queue ${url} (${describe(error)})`, { cause: error });
  }
}

async function missingSecrets(ssm: SSMClient, stage: string, referenced: string[]): Promise<StatusReport['secrets']> {
  const { GetParametersByPathCommand } = await import('@aws-sdk/client-ssm');
  const prefix = ssmParameterName(stage, '');
  const stored = new Set<string>();
  try {
    let token: string | undefined;
    do {
      const page = await ssm.send(new GetParametersByPathCommand({ Path: prefix, WithDecryption: false, ...(token ? { NextToken: token } : {}) }));
      for (const parameter of page.Parameters ?? []) if (parameter.Name) stored.add(parameter.Name.slice(prefix.length));
      token = page.NextToken;
    } while (token);
  } catch (error) {
    throw new HookError('unavailable', `Could not list ${prefix}* in SSM Parameter Store (${describe(error)})`, { cause: error });
  }
  return { referenced, missing: referenced.filter((name) => !stored.has(name)) };
}

/** SQS has no attribute for it: CloudWatch's ApproximateAgeOfOldestMessage, latest minute of the last 15. */
async function oldestMessageAge(cloudwatch: CloudWatchClient, queue: string): Promise<number | null> {
  const { GetMetricDataCommand } = await import('@aws-sdk/client-cloudwatch');
  const end = new Date();
  try {
    const result = await cloudwatch.send(new GetMetricDataCommand({
      StartTime: new Date(end.getTime() - 15 * 60_000), EndTime: end, ScanBy: 'TimestampDescending',
      MetricDataQueries: [{ Id: 'age', MetricStat: { Metric: { Namespace: 'AWS/SQS', MetricName: 'ApproximateAgeOfOldestMessage', Dimensions: [{ Name: 'QueueName', Value: queue }] }, Period: 60, Stat: 'Maximum' } }],
    }));
    const value = result.MetricDataResults?.[0]?.Values?.[0];
    return value === undefined ? null : value;
  } catch {
    // A figure to show, not a verdict: without CloudWatch access the rest of the report stands.
    return null;
  }
}

function render(report: StatusReport): string {
  // Labels padded to the longest ("dead letters"), so every value starts in one column.
  const lines = [
    ['stage', `${report.stage}${report.region ? ` (${report.region})` : ''}, stack ${report.stack.name} ${report.stack.status}`],
    ['url', report.url ?? '(none)'],
    ['health', report.health.ok ? 'ok' : `NOT OK (${report.health.status ?? report.health.error})`],
    ['queue', `${report.queue.depth} waiting, ${report.queue.delayed} delayed (debounce), ${report.queue.in_flight} in flight, oldest ${report.queue.oldest_message_age_seconds === null ? 'unknown' : `${report.queue.oldest_message_age_seconds}s`}`],
    ['dead letters', String(report.dead_letters.depth)],
    ['secrets', report.secrets.missing.length === 0 ? `all ${report.secrets.referenced.length} set` : `missing ${report.secrets.missing.join(', ')}`],
    ['config', `${report.config.drift ? 'DIFFERS from the deployed one' : 'same as deployed'} (${report.config.local_hash.slice(0, 12)})`],
  ].map(([label, value]) => `${(label as string).padEnd(13)}${value}`);
  lines.push(report.attention.length === 0 ? 'All good.' : `Needs attention:\n${report.attention.map((a) => `  - ${a}`).join('\n')}`);
  return lines.join('\n');
}

/**
 * The `status` command, as command-run.ts runs the others, but with a config.yaml that does not
 * validate kept for the local status to report (createContext's keepInvalidConfig).
 */
export async function runStatus(argv: Args): Promise<void> {
  try {
    await status(createContext(argv, { keepInvalidConfig: true }), argv, Boolean(argv.json));
  } catch (error) {
    process.exitCode = reportFailure(error);
  }
}

export async function status(ctx: CliContext, options: GlobalOptions, json: boolean): Promise<void> {
  const deployment = awsDeployment(ctx.config, options);
  if (!deployment) {
    const local = await collectLocalStatus(ctx);
    ctx.out(json ? JSON.stringify(local, null, 2) : renderLocal(local));
    if (local.attention.length > 0) process.exitCode = ATTENTION_EXIT_CODE;
    return;
  }
  // Not the shell's AWS_REGION or profile region: say where it looks, as packaging warns (scripts/build-lambda.mjs).
  if (deployment.regionFrom === 'default') {
    ctx.warn(`note: config.yaml names no aws.region: acting on ${deployment.region}, where npx osls deploys without --region (pass --region <region> if the stage is elsewhere, or set aws.region in config.yaml for both)`);
  }
  const report = await collectStatus(ctx, options);
  ctx.out(json ? JSON.stringify(report, null, 2) : render(report));
  if (report.attention.length > 0) process.exitCode = ATTENTION_EXIT_CODE;
}
