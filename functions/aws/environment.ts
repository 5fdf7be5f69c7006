/** What a deployed function learns from its environment (set by serverless.yml). */
import { join } from 'node:path';
import { HookError } from '../core/errors';
import { tableNamesForStage, type TableNames } from './tables';

export interface Deployment {
  stage: string;
  region: string | undefined;
  tables: TableNames;
  queueUrl: string;
  deadLetterQueueUrl: string | undefined;
  payloadBucket: string;
  configDir: string;
}

export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Deployment {
  const required = (name: string): string => {
    const value = env[name];
    if (!value) throw new HookError('misconfigured', `The function's environment lacks ${name}`);
    return value;
  };
  const stage = required('HOOKAGENT_STAGE');
  const defaults = tableNamesForStage(stage);
  return {
    stage,
    region: env.AWS_REGION,
    tables: {
      subscriptions: env.SUBSCRIPTIONS_TABLE ?? defaults.subscriptions,
      dedup: env.DEDUP_TABLE ?? defaults.dedup,
      events: env.EVENTS_TABLE ?? defaults.events,
      requests: env.REQUESTS_TABLE ?? defaults.requests,
    },
    queueUrl: required('QUEUE_URL'),
    deadLetterQueueUrl: env.DEAD_LETTER_QUEUE_URL,
    payloadBucket: required('PAYLOAD_BUCKET'),
    // Packaging writes the prepared configuration (config.json, from config.yaml) under config/ next to the bundle.
    configDir: env.HOOKAGENT_CONFIG_DIR ?? join(env.LAMBDA_TASK_ROOT ?? process.cwd(), 'config'),
  };
}
