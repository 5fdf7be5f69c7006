/**
 * `hookagent serve`: the whole service in one process, through the same handlers as on
 * AWS. HTTP requests become API Gateway v2 events for the ingest handler; the local queue
 * (SQS semantics, on disk) feeds the worker handler with SQS batch events; tables live in
 * dynalite under `{config_dir}/data`, payloads in `{config_dir}/data/payloads`.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readConfigFile } from '../../functions/core/config/file';
import { resolveConfig } from '../../functions/core/config/load';
import { HookError } from '../../functions/core/errors';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { jsonLogger, textLogger, type Logger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { QueueConsumer } from '../../functions/local/consumer';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { LocalQueue } from '../../functions/local/queue';
import { openLocalStore } from '../../functions/local/store';
import { createAgent } from '../../functions/worker/agent-factory';
import { createWorkerHandler } from '../../functions/worker/batch';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { LOCAL_MAX_RECEIVE_COUNT, LOCAL_QUEUE_TABLES, LOCAL_VISIBILITY_TIMEOUT_MS, dataDir, touch, wakeFile } from '../context';
import { ensureConfig, loadDotEnv } from './first-run';
import { createLocalHttpServer } from './http-server';

export interface ServeOptions {
  configDir: string;
  port: number;
  host: string;
  trustProxy: boolean | number;
  logFormat: 'text' | 'json';
  /** How long SIGINT/SIGTERM waits for in-flight work before requeueing it. */
  graceMs?: number;
}

export async function serve(options: ServeOptions): Promise<void> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const logger: Logger = options.logFormat === 'json' ? jsonLogger() : textLogger();
  if (ensureConfig(options.configDir)) {
    out(`Wrote a starter configuration to ${join(options.configDir, 'config.yaml')} (echo agent, log delivery).`);
    out('Next: hookagent webhook subscribe <name> --events <type>, then point a sender at the URLs below.');
  }
  loadDotEnv(options.configDir);
  const parsed = readConfigFile(options.configDir);
  if (!parsed.ok) throw new HookError('config_invalid', parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async (name) => process.env[name] });
  if (!resolved.ok) throw new HookError('config_invalid', resolved.error.message);
  const config = resolved.value;

  const startedAt = Date.now();
  const data = dataDir(options.configDir);
  const store = await openLocalStore(data, { role: 'serve' });
  const queue = new LocalQueue(store.client, {
    ...LOCAL_QUEUE_TABLES, visibilityTimeoutMs: LOCAL_VISIBILITY_TIMEOUT_MS, maxReceiveCount: LOCAL_MAX_RECEIVE_COUNT, clock: systemClock,
  });
  await queue.ensureTables();
  // This process owns the store: whatever was in flight belonged to a process that is gone.
  const recovered = await queue.releaseAll();

  const subscriptionStore = new DynamoSubscriptionStore(store.client, store.tables.subscriptions);
  const events = new DynamoEventLog(store.client, store.tables.events);
  const payloads = new FilePayloadStore(join(data, 'payloads'));
  const ingest = createIngest({
    config, queue, events, payloads, logger, clock: systemClock,
    // No cache: a change made with the CLI applies to the very next request.
    subscriptions: new SubscriptionCache(subscriptionStore, 0, systemClock),
    dedup: new DynamoDedupStore(store.client, store.tables.dedup, systemClock),
    // This process owns the store: a claim made before it started belongs to a request that died with its process.
    claimsAbandonedBefore: startedAt,
  });
  const worker = createWorkerHandler({
    events, payloads, subscriptions: subscriptionStore, agent: createAgent(config.agent, config.delivery, config.aws?.region), skills: new SkillLibrary(options.configDir),
    targets: createDeliveryTargets(config.delivery), config, clock: systemClock, logger, maxReceiveCount: LOCAL_MAX_RECEIVE_COUNT,
    deadLetters: { send: (body, reason) => queue.sendToDeadLetters(body, LOCAL_MAX_RECEIVE_COUNT).then(() => logger.warn('dead-lettered', { reason })) },
  });
  const consumer = new QueueConsumer(queue, worker, { batchSize: 10, concurrency: 2, idleCheckMs: 5_000, logger });

  touch(wakeFile(options.configDir));
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(wakeFile(options.configDir), () => queue.wake());
  } catch {
    // Without file watching, CLI sends are picked up by the consumer's idle check.
  }

  const server = createLocalHttpServer({
    handler: apiGatewayHandler(async () => ingest, logger), maxBodyBytes: config.webhooks.max_payload_size, trustProxy: options.trustProxy, logger,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new HookError('listen_failed', error.code === 'EADDRINUSE' ? `Port ${options.port} on ${options.host} is in use; choose another with --port` : `Cannot listen on ${options.host}:${options.port}: ${error.message}`)));
    server.listen(options.port, options.host, () => resolve());
  }).catch(async (error: unknown) => {
    watcher?.close();
    await store.close();
    throw error;
  });
  consumer.start();

  const address = server.address() as AddressInfo;
  const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const active = (await subscriptionStore.list()).filter((s) => s.state === 'active').map((s) => s.name);
  out([
    `hookagent is listening on ${base}`,
    `  POST ${base}/webhooks/github   POST ${base}/webhooks/gitlab   POST ${base}/webhooks/custom/<name>   GET ${base}/health`,
    `  subscriptions: ${active.length > 0 ? active.join(', ') : "none yet (hookagent webhook subscribe <name> …)"}`,
    `  agent: ${config.agent.provider}${config.agent.model ? ` (${config.agent.model})` : ''}   data: ${data}${recovered > 0 ? `   recovered ${recovered} unfinished message(s)` : ''}`,
  ].join('\n'));

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info('stopping', { signal });
      server.close();
      server.closeIdleConnections();
      void consumer.stop(options.graceMs ?? 10_000)
        .then(() => {
          watcher?.close();
          return store.close();
        })
        .then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
