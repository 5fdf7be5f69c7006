/**
 * The one wiring place of the Lambda runtime: configuration, secrets and adapters for the
 * ingest and worker functions. The handlers only add the Lambda context, metrics flushing
 * and the batch shape.
 *
 * Secrets are read when a function starts and again after `HOOKAGENT_SECRETS_MAX_AGE`
 * seconds (default 300): a secret rotated with `hookagent secrets set` applies within that
 * time, without a redeploy.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { readPreparedConfig } from '../core/config/prepared';
import { resolveConfig } from '../core/config/resolve';
import { describeError, HookError } from '../core/errors';
import { SubscriptionCache } from '../core/ingest/subscription-cache';
import { createIngest, type Ingest } from '../core/ingest/service';
import { escapingLogger, type Logger } from '../core/log';
import type { Metrics } from '../core/metrics/metrics';
import { systemClock, type Clock } from '../core/ports';
import { DynamoDedupStore } from './dedup-store';
import { createDynamoClient } from './dynamo';
import { deploymentFromEnv, type Deployment } from './environment';
import { DynamoEventLog } from './event-log';
import { lazyPayloadStore, lazySecretSource } from './lazy-clients';
import { SqsEventQueue } from './sqs-queue';
import { DynamoSubscriptionStore } from './subscription-store';
import { leanSqsClient } from './sdk-clients';
import { DynamoDebounceStore } from './debounce-store';
import { DynamoLeaseStore } from './lease-store';
import { DynamoRequestLog } from './request-log';

const SUBSCRIPTION_CACHE_MS = 5_000;
const DEFAULT_SECRETS_MAX_AGE_S = 300;

/** Powertools Logger behind the domain's Logger port; `withContext` adds the Lambda context (request id, cold start). */
export function lambdaLogger(serviceName: string): Logger & { withContext(context: Context | undefined): void } {
  const powertools = new PowertoolsLogger({ serviceName });
  // Powertools writes strings raw: control characters from payload text are escaped first.
  const escaping = escapingLogger({
    debug: (message, fields) => powertools.debug(message, fields ?? {}),
    info: (message, fields) => powertools.info(message, fields ?? {}),
    warn: (message, fields) => powertools.warn(message, fields ?? {}),
    error: (message, fields) => powertools.error(message, fields ?? {}),
  });
  return {
    ...escaping,
    withContext: (context) => {
      if (context) powertools.addContext(context);
    },
  };
}

export interface Runtime {
  deployment: Deployment;
  logger: Logger;
  metrics: Metrics;
  clock?: Clock;
}

/** The configuration packaging prepared from config.yaml (core/config/prepared.ts): no YAML parsing on a cold start. */
export function readConfig(deployment: Deployment) {
  return readPreparedConfig(deployment.configDir);
}

export async function composeIngest({ deployment, logger }: Runtime): Promise<Ingest> {
  const resolved = await resolveConfig(readConfig(deployment), lazySecretSource(deployment.stage), ['webhooks']);
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const dynamo = createDynamoClient({ region: deployment.region });
  return createIngest({
    config: resolved.value,
    subscriptions: new SubscriptionCache(new DynamoSubscriptionStore(dynamo, deployment.tables.subscriptions), SUBSCRIPTION_CACHE_MS, systemClock),
    queue: new SqsEventQueue(leanSqsClient(), deployment.queueUrl),
    // The claim and the records in one transaction; the commit in the request log's write (issue 16).
    dedup: new DynamoDedupStore(dynamo, deployment.tables.dedup, systemClock, deployment.tables.events),
    events: new DynamoEventLog(dynamo, deployment.tables.events),
    // Release claims for events held while a resume ran (issue 14 item 4).
    leases: new DynamoLeaseStore(dynamo, deployment.tables.dedup, systemClock),
    requests: new DynamoRequestLog(dynamo, deployment.tables.requests, systemClock, deployment.tables.dedup),
    debounce: new DynamoDebounceStore(dynamo, deployment.tables.dedup, systemClock),
    payloads: lazyPayloadStore(deployment.payloadBucket),
    clock: systemClock,
    logger,
  });
}

/**
 * Builds once, then again once `maxAgeSeconds` have passed (for rotated secrets). A failed
 * first build is retried on the next call; a failed rebuild keeps the last good one.
 */
export function refreshing<T>(build: () => Promise<T>, logger: Logger, options: { maxAgeSeconds?: number; clock?: Clock } = {}): () => Promise<T> {
  const clock = options.clock ?? systemClock;
  const maxAgeMs = 1000 * (options.maxAgeSeconds ?? (Number(process.env.HOOKAGENT_SECRETS_MAX_AGE) || DEFAULT_SECRETS_MAX_AGE_S));
  let current: { value: Promise<T>; at: number } | undefined;
  return () => {
    if (current && clock.now() - current.at >= maxAgeMs) {
      const previous = current.value;
      const next = build().catch((error: unknown) => {
        logger.warn('could not re-read the configuration and secrets; keeping the previous ones', { error: describeError(error) });
        return previous;
      });
      current = { value: next, at: clock.now() };
    }
    if (!current) {
      const started = { value: build(), at: clock.now() };
      current = started;
      started.value.catch(() => {
        if (current === started) current = undefined;
      });
    }
    return current.value;
  };
}

export { deploymentFromEnv };
