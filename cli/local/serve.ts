/**
 * `hookagent serve`: the whole service in one process, through the same handlers as on
 * AWS. HTTP requests become API Gateway v2 events for the ingest handler; the local queue
 * (SQS semantics, on disk) feeds the worker handler with SQS batch events; everything lives
 * in one SQLite database under `{config_dir}/data` (functions/local/compose.ts builds it).
 */
import { watch, type FSWatcher } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { HookError } from '../../functions/core/errors';
import { DEFAULT_CLAIM_LEASE_MS, createIngest, type Ingest } from '../../functions/core/ingest/service';
import { RETRY_AFTER_SECONDS, errorReply } from '../../functions/core/ingest/responses';
import { abandonStranded } from '../../functions/core/ingest/abandoned';
import { jsonLogger, textLogger, type Logger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import { agentsByModel } from '../../functions/worker/agents-by-model';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { QueueConsumer } from '../../functions/local/consumer';
import { openLocalRuntime } from '../../functions/local/compose';
import { startHousekeeping } from '../../functions/local/sqlite/housekeeping';
import { createAgent } from '../../functions/worker/agent-factory';
import { agentConcurrency, createWorkerHandler } from '../../functions/worker/batch';
import { createLimiter } from '../../functions/core/worker/limiter';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { dataDir, touch, wakeFile } from '../context';
import { CONFIG_REMOVED, loadConfig, publishConfigState, watchConfig, type PublishedConfig } from './config-source';
import { dotEnvSecretValues, ensureConfig, loadDotEnv } from './first-run';
import { commandName } from '../invocation';
import { secretWarnings } from '../setup-hints';
import { createLocalHttpServer } from './http-server';
import { StartUp, watchStopSignals } from './stop-signals';
import { turnBufferedWriter } from './log-writer';
import { createConsoleHandler } from '../console/handler';
import { CONSOLE_TOKEN_FROM, consoleToken, consoleUrl } from './console-token';
import { secretValuesOf } from '../console/redact';

export interface ServeOptions {
  configDir: string;
  port: number;
  host: string;
  trustProxy: boolean | number;
  logFormat: 'text' | 'json';
  /** How long SIGINT/SIGTERM waits for in-flight work before requeueing it. */
  graceMs?: number;
}

/** Why serve cannot listen, naming the option to change: the port for a port in use, the host for an address this machine lacks. */
function listenFailed(error: NodeJS.ErrnoException, { host, port }: ServeOptions): HookError {
  const fix = 'pass --host an address of this machine, such as 127.0.0.1, ::1 or 0.0.0.0 (every interface)';
  if (error.code === 'EADDRINUSE') return new HookError('listen_failed', `Port ${port} on ${host} is in use; choose another with --port`);
  if (error.code === 'EADDRNOTAVAIL') return new HookError('listen_failed', `Cannot listen on ${host}: ${host} is not an address of this machine; ${fix}`);
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' || error.code === 'EAI_FAIL') {
    return new HookError('listen_failed', `Cannot listen on ${host}: ${host} is not a name this machine can resolve (${error.code}); ${fix}`);
  }
  return new HookError('listen_failed', `Cannot listen on ${host}:${port}: ${error.message}`);
}

export async function serve(options: ServeOptions): Promise<void> {
  // The banner and hints: a stdout that cannot be written (a full disk) loses them, not the service.
  const out = (text: string) => {
    try {
      process.stdout.write(`${text}\n`);
    } catch {
      // Lost with the rest of what cannot be written.
    }
  };
  process.stdout.on('error', () => undefined);
  const logFormat = (write: (line: string) => void): Logger => (options.logFormat === 'json' ? jsonLogger(write) : textLogger(write));
  const writeLog = turnBufferedWriter(process.stderr, {
    onLost: (count) => {
      let line = '';
      logFormat((text) => (line = text)).warn('log lines lost: they could not be written (a full disk, or the reader of the log was gone)', { lines: count });
      return line;
    },
  });
  const logger: Logger = logFormat(writeLog);
  // From here on, a stop signal is serve's: during start-up it stops there (startUp.stopped()).
  const stops = watchStopSignals(logger);
  const startUp = new StartUp(stops, logger);
  if (ensureConfig(options.configDir)) {
    out(`Wrote a starter configuration to ${join(options.configDir, 'config.yaml')} (echo agent, log delivery).`);
    out(`Next: ${commandName()} webhook subscribe <name> --events <type>, then point a sender at the URLs below.`);
  }
  // `${VAR}`s resolve from the environment serve started with, else from .env (re-read on every reload).
  const environment = { ...process.env };
  const loaded = await loadConfig(options.configDir, environment);
  if (!loaded.ok) throw new HookError('config_invalid', loaded.error.message);
  let config = loaded.value.config;
  // Variables of .env stay visible to what reads the environment directly (as before reloads existed).
  loadDotEnv(options.configDir);
  if (await startUp.stopped()) return;

  const data = dataDir(options.configDir);
  // Takes the data dir's serve lock, migrates a dynalite data dir, releases what a previous serve left in flight.
  const runtime = await openLocalRuntime(data, { role: 'serve', clock: systemClock, logger });
  const { queue, recovered, events } = runtime;
  const subscriptionStore = runtime.subscriptions;
  const store = { close: async () => runtime.close() };
  startUp.took(() => store.close());
  const buildIngest = (current: typeof config) => createIngest(runtime.ingestDeps(current, logger));
  // One limiter for serve's lifetime: batches still running under the worker a reload replaced share it with the new one.
  const limiter = createLimiter(agentConcurrency(config));
  const buildWorker = (current: typeof config) => {
    const handler = createWorkerHandler(runtime.workerDeps({
      agent: createAgent(current.agent, current.delivery, current.aws?.region), agentFor: agentsByModel(current.agent, current.delivery, current.aws?.region),
      skills: new SkillLibrary(options.configDir),
      // The worker's lease store also serialises each sticky comment's find-then-write per pull request.
      targets: createDeliveryTargets(current.delivery, undefined, undefined, { leases: runtime.leases }), config: current, logger,
    }), {
      // Paced retries: a message comes back after the retry schedule's delay, not the visibility timeout.
      changeVisibility: (record, seconds) => queue.changeVisibility(record.receiptHandle, seconds), limiter,
    });
    // Runs in flight finish; a raised or lowered agent.concurrency applies to the runs that start next.
    limiter.setLimit(agentConcurrency(current));
    return handler;
  };
  let ingest = buildIngest(config);
  let worker = buildWorker(config);
  // Records of requests that died before their event was queued end as `abandoned`.
  const sweepAbandoned = async (receivedBefore: number) => {
    try {
      const held = await queue.heldEvents();
      const abandoned = await abandonStranded(events, subscriptionStore, {
        queued: (eventId, subscription) => held.has(`${eventId}\u0000${subscription}`), receivedBefore, now: new Date().toISOString(),
      });
      for (const r of abandoned) logger.warn('abandoned: never accepted', { event_id: r.event_id, subscription: r.subscription, delivery_id: r.delivery_id });
    } catch (error) {
      logger.warn('could not check for abandoned events', { error: error instanceof Error ? error.message : String(error) });
    }
  };
  await sweepAbandoned(runtime.openedAt);
  if (await startUp.stopped()) return;
  const sweeper = setInterval(() => void sweepAbandoned(Date.now() - DEFAULT_CLAIM_LEASE_MS), DEFAULT_CLAIM_LEASE_MS);
  sweeper.unref();
  // Retention while serve runs: what expires goes every hour (openLocalRuntime drops what expired before it started).
  const stopHousekeeping = startHousekeeping(runtime.store, { clock: systemClock, logger });
  startUp.took(async () => {
    clearInterval(sweeper);
    await stopHousekeeping();
  });

  const consumer = new QueueConsumer(queue, (event) => worker(event), { batchSize: 10, concurrency: 2, idleCheckMs: 5_000, logger });
  // The store file removed or replaced under serve (db.ts, `lost`): nothing it writes is kept any more.
  runtime.store.onLost((file, error) => {
    logger.error('the local store was removed or replaced: answering 503 and no longer taking work from the queue; restart serve', { file, reason: error.message });
    clearInterval(sweeper);
    void stopHousekeeping();
    void consumer.stop(options.graceMs ?? 10_000);
  });
  // Every request then gets the reason (ingest's own 503 does not say it); the data dir's path stays out of it.
  const refused = (file: string) => errorReply(503, 'unavailable', `The store file ${basename(file)} in serve's data dir was removed or replaced while serve had it open (what it accepts now would be lost); restart serve`, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  const lostFile = (): string | undefined => runtime.store.lost?.file;
  const answer: Ingest = async (request) => {
    const before = lostFile();
    if (before) return refused(before);
    const replied = await ingest(request);
    const after = lostFile();
    return after && replied.status === 503 ? refused(after) : replied;
  };

  // config.yaml and .env apply without a restart; an invalid edit keeps what runs.
  let loadedAt = new Date().toISOString();
  let listeningOn: string | undefined;
  const publish = (state: Omit<PublishedConfig, 'pid' | 'url'>) => publishConfigState(data, { pid: process.pid, ...state, ...(listeningOn ? { url: listeningOn } : {}) });
  let published: Omit<PublishedConfig, 'pid' | 'url'> = { fingerprint: loaded.value.fingerprint, loaded_at: loadedAt };
  publish(published);
  const configWatcher = watchConfig(options.configDir, environment, loaded.value.fingerprint, {
    onChange(next) {
      config = next.config;
      ingest = buildIngest(config);
      worker = buildWorker(config);
      loadedAt = new Date().toISOString();
      published = { fingerprint: next.fingerprint, loaded_at: loadedAt };
      publish(published);
      logger.info('configuration reloaded', { config: join(options.configDir, 'config.yaml') });
      for (const warning of secretWarnings(config)) logger.warn(warning);
    },
    onRejected(fingerprint, reason) {
      published = { fingerprint: published.fingerprint, loaded_at: loadedAt, rejected: { fingerprint, reason } };
      publish(published);
      logger.error('the edited configuration is invalid; still serving with the previous one', { reason });
    },
    // Moved aside or deleted mid-deploy: keeping what runs, not every default (webhook secrets gone, the echo agent).
    onMissing(fingerprint, path) {
      published = { fingerprint: published.fingerprint, loaded_at: loadedAt, rejected: { fingerprint, reason: CONFIG_REMOVED } };
      publish(published);
      logger.warn('config.yaml is missing; still serving with the previous configuration until it is back', { config: path });
    },
  });
  startUp.took(() => configWatcher.close());

  touch(wakeFile(options.configDir));
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(wakeFile(options.configDir), () => queue.wake());
  } catch {
    // Without file watching, CLI sends are picked up by the consumer's idle check.
  }
  startUp.took(() => watcher?.close());

  // The console's token, always asked for on this port (console-token.ts): printed in the banner, never logged.
  const consoleAuth = consoleToken(data);
  const server = createLocalHttpServer({
    handler: apiGatewayHandler(async () => answer, logger), maxBodyBytes: () => config.webhooks.max_payload_size, trustProxy: options.trustProxy, logger,
    // The event console, for peers on this machine only, with the token.
    before: createConsoleHandler({
      subscriptions: subscriptionStore, events, queue, payloads: runtime.payloads, requests: runtime.requests, release: runtime.release,
      // Read at each use: a reloaded config.yaml's public_url shows without a restart.
      get publicUrl() { return config.webhooks.public_url ?? ''; },
      where: `the local store in ${data}`, // .env read at each use: serve reloads it.
      secretValues: () => [...secretValuesOf(config), ...dotEnvSecretValues(options.configDir)],
    }, { loopbackPeersOnly: true, logger, authToken: consoleAuth.token, authCookieKey: consoleAuth.cookieKey, tokenFrom: CONSOLE_TOKEN_FROM }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenFailed(error, options)));
    server.listen(options.port, options.host, () => resolve());
  }).catch(async (error: unknown) => {
    await startUp.release();
    throw error;
  });
  startUp.took(() => server.drain(options.graceMs ?? 10_000));
  if (await startUp.stopped()) return;
  consumer.start();

  const address = server.address() as AddressInfo;
  const base = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  listeningOn = base;
  publish(published);
  const active = (await subscriptionStore.list()).filter((s) => s.state === 'active').map((s) => s.name);
  out([
    `hookagent is listening on ${base}`,
    `  POST ${base}/webhooks/github   POST ${base}/webhooks/gitlab   POST ${base}/webhooks/custom/<name>   GET ${base}/health`,
    `  console: ${consoleUrl(address, consoleAuth.token)} (from this machine only)`,
    `  subscriptions: ${active.length > 0 ? active.join(', ') : `none yet (${commandName()} webhook subscribe <name> …)`}`,
    ...secretWarnings(config).map((w) => `  warning: ${w}`),
    `  agent: ${config.agent.provider}${config.agent.model ? ` (${config.agent.model})` : ''}   data: ${data}${recovered > 0 ? `   recovered ${recovered} unfinished message(s)` : ''}`,
  ].join('\n'));

  // SIGINT/SIGTERM: stop taking requests, let those being answered and the agent runs finish within the grace.
  // (One that came since listening stops serve at once.)
  await stops.untilStopped(async (signal) => {
    const graceMs = options.graceMs ?? 10_000;
    await Promise.all([consumer.stop(graceMs), server.drain(graceMs)]);
    watcher?.close();
    configWatcher.close();
    clearInterval(sweeper);
    logger.info('stopped', { signal, unfinished_returned_to_queue: consumer.returned });
    await stopHousekeeping();
    await store.close();
  });
}
