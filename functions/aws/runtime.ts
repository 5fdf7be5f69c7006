/**
 * What both Lambda functions share when they start: the logger, the prepared
 * configuration, the deployment read from the environment, and the periodic rebuild that
 * picks up rotated secrets. The compositions (compose-ingest.ts, compose-worker.ts)
 * each import this and nothing of the other: the worker bundle carries none of ingest's
 * modules (ipaddr.js for allowed_ips, the ingest path), and the reverse.
 *
 * Secrets are read when a function starts and again after `HOOKAGENT_SECRETS_MAX_AGE`
 * seconds (default 300): a secret rotated with `hookagent secrets set` applies within that
 * time, without a redeploy.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { readPreparedConfig } from '../core/config/prepared';
import { describeError } from '../core/errors';
import { escapingLogger, type Logger } from '../core/log';
import type { Metrics } from '../core/metrics/metrics';
import { systemClock, type Clock } from '../core/ports';
import { deploymentFromEnv, type Deployment } from './environment';

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
