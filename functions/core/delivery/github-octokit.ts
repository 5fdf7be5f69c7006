/**
 * The GitHub transport, for delivery and agent tools alike: @octokit/core with
 * - plugin-throttling: writes through one token or App installation start a second apart
 *   on GitHub's hosted API (`writeIntervalFor`; searches twice that); it only spaces their
 *   starts, so `oneWriteAtATime` also keeps them one at a time, as GitHub asks. Its
 *   rate-limit handlers never retry: a Bottleneck timer cannot take the injected clock,
 *   and a secondary limit must not hold a Lambda for a minute; github-client.ts turns the
 *   answer into a retryable failure carrying the wait instead;
 * - plugin-retry: 5xx and network errors, with the pause before each retry taken through
 *   the caller's `sleep` (so tests count waits instead of sleeping); writes pass
 *   `retries: 0`, as a blind retry could post twice (http.ts `postOnce` retries them);
 * - plugin-paginate-rest: `Link: rel="next"` pagination (github-client.ts checks each
 *   next URL against the repository scope before it is fetched);
 * - @octokit/auth-app for App installation tokens (github-app.ts); a token GitHub refuses
 *   is replaced once (`renewRefusedToken`);
 * - the library's notes (auth-app's clock-skew retries, deprecations) go to the logger of
 *   the call at hand (`callLog`), else to the console as octokit's own default.
 * Every request goes through `guardedFetch` (github-fetch.ts). One Octokit per (api_url,
 * token or App installation) per process, the `MAX_INSTANCES` most recently used kept: its
 * throttle id (its limiters in the process's shared throttling groups) and its write queue
 * are what serialise.
 *
 * The octokit packages themselves are loaded at the first call (octokit-vendor.ts): the
 * worker Lambda keeps them in a file of their own, out of its cold start.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Octokit } from '@octokit/core';
import type { Logger } from '../log';
import { appAuthOptions, forgetInstallationToken, type GithubAppSettings } from './github-app';
import { guardedFetch, READ_RETRIES } from './github-fetch';
import { realSleep } from './http';
import type * as OctokitVendor from './octokit-vendor';

let vendor: typeof OctokitVendor | undefined;
/** `hookagent-octokit` is octokit-vendor.ts: a file beside the worker Lambda's bundle, bundled in everywhere else. */
const octokitVendor = (): typeof OctokitVendor => (vendor ??= require('hookagent-octokit') as typeof OctokitVendor);

/** Statuses plugin-retry leaves alone: its own list, plus 429, a rate limit (github-client.ts). */
const DO_NOT_RETRY = [400, 401, 403, 404, 410, 422, 429, 451];
/** The instance's own time limit, for requests made without a per-call one. */
const FALLBACK_TIMEOUT_MS = 30_000;
const MAX_INSTANCES = 64;

/** Per-call settings octokit carries to the hooks in `options.request`. */
export interface CallOptions {
  sleep?: (ms: number) => Promise<void>;
  /** The logger of the delivery or agent run making the call (its event id and subscription). */
  logger?: Logger;
}

/** The installation whose cached token an instance acting as an App uses (`installationToken` option). */
interface InstallationRef {
  apiUrl: string;
  appId: string;
  installationId: number;
}

/** The App installation token exchange, made from inside other requests. */
const ACCESS_TOKENS = /\/app\/installations\/[^/]+\/access_tokens$/;

/**
 * The logger of the call in progress. auth-app writes its notes to the instance's `log`,
 * which every call through one identity shares, so `octokitLog` looks the call up here.
 */
const callLogger = new AsyncLocalStorage<Logger | undefined>();

/** Set just outside auth-app's hook (the first plugin), so no throttling queue lies between it and the notes. */
function callLog(octokit: Octokit) {
  octokit.hook.wrap('request', (request, options) => callLogger.run((options.request as CallOptions | undefined)?.logger, () => request(options)));
  return {};
}

/** Octokit's `log`: warnings and errors as lines of the call's logger; debug and info are dropped. */
function note(level: 'warn' | 'error') {
  return (message: unknown, ...more: unknown[]): void => {
    const logger = callLogger.getStore();
    if (!logger) return void console[level](message, ...more);
    const detail = more.map((m) => (m instanceof Error ? m.message : String(m)));
    logger[level](String(message), { from: 'octokit', ...(detail.length ? { detail } : {}) });
  };
}
const octokitLog = { debug: () => {}, info: () => {}, warn: note('warn'), error: note('error') };

/**
 * An installation token GitHub refuses (401 "Bad credentials": revoked by `DELETE
 * /installation/token`, by secret scanning, …) is dropped from the token cache and the
 * request sent once more, so auth-app exchanges a fresh one within this call (its own
 * `refresh: true` would exchange outside it: without the call's time limit and signal).
 * auth-app itself retries a 401 only in the 5 s after a token was made. A 401 means
 * nothing was written, so writes are retried too; a second 401 is the caller's failure.
 * Inside `oneWriteAtATime`: a retried write keeps its turn.
 */
function renewRefusedToken(octokit: Octokit, settings: { installationToken?: InstallationRef; [option: string]: unknown }) {
  const token = settings.installationToken;
  if (!token) return {};
  octokit.hook.wrap('request', async (request, options) => {
    if (ACCESS_TOKENS.test(options.url)) return request(options);
    const startedAt = Date.now();
    try {
      return await request(options);
    } catch (error) {
      const refused = error as { status?: unknown; request?: { url?: string } };
      // A 401 from the exchange made inside this request is the JWT's, not the token's.
      if (refused.status !== 401 || ACCESS_TOKENS.test(refused.request?.url ?? '')) throw error;
      forgetInstallationToken(token.apiUrl, token.appId, token.installationId, startedAt);
      return request(options);
    }
  });
  return {};
}

/** Before plugin-retry retries, pause through the caller's `sleep` (its own delay is 0: `retryAfterBaseValue`). */
function retryPause(octokit: Octokit) {
  octokit.hook.error('request', async (error, options) => {
    const request = options.request as { retries?: number; retryCount?: number; sleep?: (ms: number) => Promise<void> } | undefined;
    const status = (error as { status?: number }).status ?? 0;
    const attempt = request?.retryCount ?? 0;
    // plugin-retry's own rule: a request error, status ≥ 400 and not excluded, retries left.
    if ('request' in error && status >= 400 && !DO_NOT_RETRY.includes(status) && attempt < (request?.retries ?? READ_RETRIES)) {
      await (request?.sleep ?? realSleep)(backoff(attempt + 1));
    }
    throw error;
  });
  return {};
}

/**
 * Writes through this instance (one identity) one at a time: each waits for the previous
 * one's answer. An App token exchange (a POST made from inside a write, when the token
 * needs renewing) does not queue behind the write that waits for it.
 */
function oneWriteAtATime(octokit: Octokit) {
  let previous: Promise<unknown> = Promise.resolve();
  octokit.hook.wrap('request', (request, options) => {
    if (options.method === 'GET' || options.method === 'HEAD' || ACCESS_TOKENS.test(options.url)) return request(options);
    const turn = previous.then(() => request(options));
    previous = turn.catch(() => undefined);
    return turn;
  });
  return {};
}

/** Exponential backoff with full jitter: 0..(250 ms × 2^attempt). */
const backoff = (attempt: number) => Math.floor(Math.random() * 250 * 2 ** attempt);

function withPlugins(v: typeof OctokitVendor) {
  // Hooks registered later wrap those registered earlier: auth-app's (made by the constructor) is innermost.
  return v.Octokit.plugin(callLog, v.throttling, retryPause, v.retry, v.paginateRest, renewRefusedToken, oneWriteAtATime);
}
let GithubOctokit: ReturnType<typeof withPlugins> | undefined;
export type GithubOctokit = InstanceType<ReturnType<typeof withPlugins>>;

export type GithubIdentity = { token: string } | { app: GithubAppSettings; installationId: number };

/** Oldest use first: a hit moves its instance to the end, so eviction drops the least recently used. */
const instances = new Map<string, GithubOctokit>();

type ThrottleGroups = Record<'write' | 'notifications' | 'search', InstanceType<typeof OctokitVendor.Bottleneck.Group>>;
/**
 * plugin-throttling's write, notifications and search groups, one set per write interval
 * for the whole process: plugin-throttling keys their limiters by the instance's throttle
 * id, and each group drops a limiter left idle. A group per instance would never be freed:
 * its idle-limiter cleanup is a `setInterval` that nothing clears (`disconnect()` does not).
 */
const throttleGroups = new Map<number, ThrottleGroups>();

function groupsFor(writeIntervalMs: number): ThrottleGroups {
  let groups = throttleGroups.get(writeIntervalMs);
  if (!groups) {
    const group = (minTime: number) => new (octokitVendor().Bottleneck.Group)({ maxConcurrent: 1, minTime });
    groups = { write: group(writeIntervalMs), notifications: group(writeIntervalMs), search: group(2 * writeIntervalMs) };
    throttleGroups.set(writeIntervalMs, groups);
  }
  return groups;
}

/**
 * The pause between two writes through one identity: a second on GitHub's hosted API
 * (api.github.com, *.ghe.com), which limits content creation to 80 a minute and advises a
 * second between writes; none elsewhere: GitHub Enterprise Server ships with rate limiting
 * off (its answers are still honoured) and a local test double has none. Writes go one at
 * a time either way.
 */
export function writeIntervalFor(apiUrl: string): number {
  const host = new URL(apiUrl).hostname;
  return host === 'api.github.com' || host.endsWith('.ghe.com') ? 1000 : 0;
}

/** The process's Octokit for this identity on `apiUrl` (created on first use). */
export function githubOctokit(apiUrl: string, identity: GithubIdentity, writeIntervalMs = writeIntervalFor(apiUrl)): GithubOctokit {
  // Secrets enter the key hashed; a rotated token or App key (serve reloads config.yaml) gets a new instance.
  const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');
  const who = 'token' in identity ? `token:${hash(identity.token)}` : `app:${identity.app.app_id}:${hash(identity.app.private_key)}:${identity.installationId}`;
  const key = `${apiUrl}|${who}|${writeIntervalMs}`;
  const known = instances.get(key);
  if (known) {
    instances.delete(key);
    instances.set(key, known);
    return known;
  }
  if (instances.size >= MAX_INSTANCES) instances.delete(instances.keys().next().value as string);
  GithubOctokit ??= withPlugins(octokitVendor());
  const octokit = new GithubOctokit({
    baseUrl: apiUrl,
    userAgent: 'hookagent',
    ...('token' in identity ? { auth: identity.token } : {
      authStrategy: octokitVendor().createAppAuth,
      auth: appAuthOptions(apiUrl, identity.app, identity.installationId),
      installationToken: { apiUrl, appId: identity.app.app_id, installationId: identity.installationId } satisfies InstallationRef,
    }),
    // @octokit/request writes its own notes (deprecations) to `request.log`.
    request: { fetch: guardedFetch(new URL(apiUrl), FALLBACK_TIMEOUT_MS), log: octokitLog },
    throttle: {
      // Its global (10 at once) and auth groups are shared by the process, keyed by this id; so are ours.
      id: key,
      ...groupsFor(writeIntervalMs),
      onRateLimit: () => false,
      onSecondaryRateLimit: () => false,
    },
    retry: { retries: READ_RETRIES, retryAfterBaseValue: 0, doNotRetry: DO_NOT_RETRY },
    // auth-app is given this `log` too (octokit passes its own to the auth strategy). The notes name no token.
    log: octokitLog,
  });
  instances.set(key, octokit);
  return octokit;
}

/** Tests only: forget the instances and their throttling state (the shared groups stay, emptied). */
export function clearGithubClients(): void {
  instances.clear();
  for (const groups of throttleGroups.values()) {
    for (const group of Object.values(groups)) for (const id of group.keys()) void group.deleteKey(id);
  }
}
