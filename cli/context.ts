/**
 * What every CLI command acts on: the configuration, the stores (the deployment's
 * DynamoDB tables when an `aws` section or --stage is given, else the local SQLite store
 * under `{config_dir}/data`, opened beside a running serve), and the output streams. Results go to stdout, errors to stderr.
 */
import { asInvoked } from './invocation';
import { awsDeployment, regionWithoutStage, type AwsDeployment } from './aws-deployment';
export { awsDeployment, DEFAULT_REGION, deploymentTables, regionWithoutStage, type AwsDeployment } from './aws-deployment';
import { closeSync, openSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { configDir as resolveConfigDir, readConfigFile } from '../functions/core/config/file';
import type { Config } from '../functions/core/config/types';
import { HookError } from '../functions/core/errors';
import type { DeadLetterQueue } from '../functions/core/operations/dead-letters';
import type { AtomicRelease, DebounceStore, DedupStore, EventLog, EventQueue, LeaseStore, PayloadStore, RequestLog, SubscriptionStore } from '../functions/core/ports';
import { systemClock } from '../functions/core/ports';
import { SkillLibrary } from '../functions/core/skills/library';
import { LOCAL_MAX_RECEIVE_COUNT, LOCAL_VISIBILITY_TIMEOUT_MS, openLocalRuntime } from '../functions/local/compose';
import { localStoreStats, type LocalStoreStats } from '../functions/local/sqlite/stats';
import { referencedNames, substitute } from '../functions/core/config/references';
import { configError } from '../functions/core/config/issues';
import { resolvedUrlProblem, trimUrl } from '../functions/core/config/url-keys';
import { loadDotEnv } from './local/first-run';
import { runningServeUrl } from './local/config-source';
import { tightenConfigDir } from './local/config-dir-mode';
import { keptInvalidConfig } from './operations/status-config';
import { outputStyle, terminalSafe } from './output';

export interface GlobalOptions {
  configDir?: string;
  stage?: string;
  region?: string;
}

export interface Stores {
  subscriptions: SubscriptionStore;
  events: EventLog;
  queue: EventQueue;
  /** Reads stored payloads and large transcripts by pointer (`webhook event`). */
  payloads?: PayloadStore;
  /** Release claims for held events (issue 14 item 4). */
  leases?: LeaseStore;
  /** Local only: releases held events atomically (no claims needed). */
  release?: AtomicRelease;
  /** AWS only: a resume moves debounce pointers off the held events it ended (the local release does it itself). */
  debounce?: DebounceStore;
  /** The request log (issue 17). */
  requests?: RequestLog;
  /** AWS only: dedup claims, read to find records of requests never accepted. */
  dedup?: DedupStore;
  /** Dead letters to list and redrive (issue 20); the AWS ones are reached through SQS. */
  deadLetters?: DeadLetterQueue;
  /** Local only: the counts `hookagent status` shows. */
  localStats?: () => LocalStoreStats;
  where: string;
  close(): Promise<void>;
}

export interface CliContext {
  configDir: string;
  config: Config;
  /**
   * Set only for the local `status` (createContext's `keepInvalidConfig`): config.yaml's
   * validation errors on one line, when it does not validate; `config` then holds the defaults.
   */
  invalidConfig?: string;
  /** The AWS deployment the CLI acts on (--stage, else the aws section); absent: the local store. */
  deployment?: AwsDeployment;
  skills: SkillLibrary;
  out(text: string): void;
  warn(text: string): void;
  openStores(): Promise<Stores>;
}

export { LOCAL_MAX_RECEIVE_COUNT, LOCAL_VISIBILITY_TIMEOUT_MS };

export function dataDir(configDir: string): string {
  return join(configDir, 'data');
}

/** Touching this file wakes a running serve's queue consumer at once. */
export function wakeFile(configDir: string): string {
  return join(dataDir(configDir), 'queue.wake');
}

export function touch(path: string): void {
  try {
    const now = new Date();
    closeSync(openSync(path, 'a'));
    utimesSync(path, now, now);
  } catch {
    // Waking is an optimisation: serve also checks the queue on its own.
  }
}

/**
 * `keepInvalidConfig` (`status`): a config.yaml that does not validate is reported by the
 * local status (serve keeps running on the one it loaded), not refused; a deployment's status
 * (--stage, an `aws` section) still needs it.
 */
export function createContext(options: GlobalOptions, { keepInvalidConfig = false }: { keepInvalidConfig?: boolean } = {}): CliContext {
  const dir = resolveConfigDir(options.configDir);
  // Its .env holds the credentials: tightened whenever the CLI opens it (`status` names what could not be).
  tightenConfigDir(dir);
  const parsed = readConfigFile(dir);
  const kept = parsed.ok || !keepInvalidConfig ? undefined : keptInvalidConfig(dir, parsed.error, options.stage);
  if (!parsed.ok && !kept) throw new HookError('config_invalid', `${parsed.error.message}\n(in ${join(dir, 'config.yaml')})`);
  const config = parsed.ok ? parsed.value : kept!.config;
  // As serve would refuse it at start: a command must not print or act on such a base URL.
  resolvePublicUrl(config.webhooks.public_url, dir);
  const misused = regionWithoutStage(config, options);
  // A usage error (exit 2, command-run.ts), as yargs' own.
  if (misused) throw new HookError('usage_error', misused);
  const deployment = awsDeployment(config, options);
  return {
    configDir: dir,
    config,
    ...(kept ? { invalidConfig: kept.invalidConfig } : {}),
    ...(deployment ? { deployment } : {}),
    skills: new SkillLibrary(dir),
    out: (text) => process.stdout.write(`${terminalSafe(text, outputStyle().color)}\n`),
    warn: (text) => process.stderr.write(`${terminalSafe(text, false)}\n`),
    openStores: () => openStores(dir, config, options),
  };
}

async function openStores(dir: string, config: Config, options: GlobalOptions): Promise<Stores> {
  const deployment = awsDeployment(config, options);
  // The AWS SDK and the DynamoDB adapters load only for a deployment: local commands start without them.
  if (deployment) return (await import('./aws-stores')).openAwsStores(config, deployment);
  // The same database as a running serve (SQLite locking, a busy timeout): serve sees the change on its next request.
  const runtime = await openLocalRuntime(dataDir(dir), { role: 'cli', clock: systemClock, onSend: () => touch(wakeFile(dir)) });
  return {
    subscriptions: runtime.subscriptions,
    events: runtime.events,
    queue: runtime.queue,
    payloads: runtime.payloads,
    leases: runtime.leases,
    release: runtime.release,
    requests: runtime.requests,
    deadLetters: runtime.deadLetters,
    localStats: () => localStoreStats(runtime.store, Date.now()),
    where: `the local store in ${dataDir(dir)}`,
    close: async () => runtime.close(),
  };
}

/** Runs `fn` with the stores open, closing them whatever happens. */
export async function withStores<T>(ctx: CliContext, fn: (stores: Stores) => Promise<T>): Promise<T> {
  const stores = await ctx.openStores();
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

/** Where `serve` listens unless told otherwise (cli/main.ts SERVE_LISTEN). */
const DEFAULT_BASE_URL = 'http://127.0.0.1:8644';

/**
 * `baseUrl` for a command acting on `ctx`. Without `webhooks.public_url`: locally, where the
 * serve running on this config dir listens (it may not be 8644: `serve --port`), else the
 * default; on an AWS stage the default (serve on this machine) is not where the stage
 * answers, and a note says where to find the right one.
 */
export function printedBaseUrl(ctx: CliContext): string {
  if (ctx.config.webhooks.public_url === undefined) {
    if (!ctx.deployment) return runningServeUrl(dataDir(ctx.configDir)) ?? DEFAULT_BASE_URL;
    ctx.warn(asInvoked(`note: these URLs are serve's on this machine, not stage '${ctx.deployment.stage}': set webhooks.public_url in config.yaml to the stage's API URL (the stack output HttpApiUrl; 'hookagent status --stage ${ctx.deployment.stage}' prints it)`));
  }
  return baseUrl(ctx.config, ctx.configDir, ctx.warn);
}

/**
 * `webhooks.public_url` (`written`) with its `${VAR}` references resolved as serve resolves
 * them (the environment, then `{config_dir}/.env`), and the names with no value, which stay
 * as written. Resolved to something that is no URL, it is a configuration error, as it is
 * for serve (url-keys.ts): senders must never be given it.
 */
function resolvePublicUrl(written: string | undefined, configDir: string | undefined): { url: string; missing: string[] } | undefined {
  if (written === undefined) return undefined;
  const names = referencedNames(written);
  if (names.length === 0) return { url: written, missing: [] };
  const environment: NodeJS.ProcessEnv = { ...process.env };
  if (configDir) loadDotEnv(configDir, environment);
  const values = new Map(names.flatMap((name) => (environment[name] ? [[name, environment[name] as string] as const] : [])));
  const missing = names.filter((name) => !values.has(name));
  const resolved = substitute(written, values);
  if (missing.length > 0) return { url: resolved, missing };
  const problem = resolvedUrlProblem(written, resolved);
  if (problem) throw new HookError('config_invalid', `${configError([{ path: 'webhooks.public_url', message: problem }]).message}${configDir ? `\n(in ${join(configDir, 'config.yaml')})` : ''}`);
  return { url: trimUrl(resolved), missing };
}

/**
 * The base of the URLs the CLI prints: `webhooks.public_url` resolved (resolvePublicUrl);
 * one with a reference that has no value stays as written, and `warn` says so.
 */
export function baseUrl(config: Config, configDir?: string, warn?: (text: string) => void): string {
  const resolved = resolvePublicUrl(config.webhooks.public_url, configDir);
  if (resolved === undefined) return DEFAULT_BASE_URL;
  const { url, missing } = resolved;
  if (missing.length > 0) warn?.(`note: webhooks.public_url references ${missing.map((n) => `\${${n}}`).join(', ')}, set neither in the environment nor in ${configDir ?? 'the config dir'}/.env: serve refuses to start until it is`);
  return url;
}
