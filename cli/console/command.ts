/**
 * `hookagent console`: the event console on its own port, over the CLI's stores (the
 * local store, or the AWS deployment's tables with the user's credentials).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { resolveConfig } from '../../functions/core/config/load';
import { HookError } from '../../functions/core/errors';
import type { PayloadStore, RequestLog } from '../../functions/core/ports';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { awsDeployment, baseUrl, dataDir, type CliContext, type GlobalOptions, type Stores } from '../context';
import { dotEnvSecretValues, loadDotEnv } from '../local/first-run';
import type { ConsoleSources } from './data';
import { createConsoleHandler, type ConsoleOptions, type SourcesProvider } from './handler';
import { secretValuesOf } from './redact';
import { isLoopbackHost } from './security';
import { runningServeUrl } from '../local/config-source';

export interface ConsoleCommandOptions {
  port: number;
  host: string;
  authToken?: string;
  /** Resolves once the console listens, with its URL (tests). */
  onListening?: (url: string) => void;
}

/** Refuses a console reachable from other machines without a token. */
export function checkConsoleOptions(host: string, authToken: string | undefined): void {
  if (!isLoopbackHost(host) && !authToken) {
    throw new HookError('auth_token_required', `--host ${host} makes the console reachable from other machines: add --auth-token <a long random string> (e.g. --auth-token "$(openssl rand -hex 24)"), or leave --host at 127.0.0.1`);
  }
  if (authToken !== undefined && authToken.length < 16) throw new HookError('auth_token_weak', '--auth-token must be at least 16 characters; generate one with: openssl rand -hex 24');
}

/** The request log, once the CLI's stores carry one (an adapter other work adds). */
export function requestLogOf(stores: Stores): RequestLog | undefined {
  return (stores as Stores & { requests?: RequestLog }).requests;
}

/** The configuration's secret values (tokens, webhook secrets), resolved as serve would, to keep them off the page. */
async function configSecrets(ctx: CliContext): Promise<string[]> {
  loadDotEnv(ctx.configDir);
  const resolved = await resolveConfig(ctx.config, { get: async (name) => process.env[name] }).catch(() => undefined);
  const values = [...secretValuesOf(ctx.config), ...dotEnvSecretValues(ctx.configDir)];
  if (resolved?.ok) values.push(...secretValuesOf(resolved.value));
  return values;
}

export function listenConsole(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new HookError('listen_failed', error.code === 'EADDRINUSE'
      ? `Port ${port} on ${host} is in use; choose another with --port` : `Cannot listen on ${host}:${port}: ${error.message}`)));
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      resolve(`http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/console`);
    });
  });
}

/**
 * Keeps the stores open while requests are in flight and closes them when none is: the
 * local store is locked by whoever opens it, so a console left running must not hold it
 * (serve and other CLI commands would wait); concurrent requests share one opening.
 */
export function openWhileBusy(open: () => Promise<Stores>, toSources: (stores: Stores) => ConsoleSources): SourcesProvider {
  let current: Promise<Stores> | undefined;
  let users = 0;
  return async (fn) => {
    users += 1;
    const opened = (current ??= open());
    try {
      return await fn(toSources(await opened));
    } finally {
      users -= 1;
      if (users === 0 && current === opened) {
        current = undefined;
        await opened.then((stores) => stores.close(), () => undefined);
      }
    }
  };
}

/** A store without a payload store of its own: the local data dir's payload files of earlier versions. */
function legacyPayloads(ctx: CliContext): PayloadStore {
  return new FilePayloadStore(join(dataDir(ctx.configDir), 'payloads'));
}

export async function runConsole(ctx: CliContext, global: GlobalOptions, options: ConsoleCommandOptions): Promise<void> {
  checkConsoleOptions(options.host, options.authToken);
  const deployment = awsDeployment(ctx.config, global);
  // Checks the store opens at all (and says where it is) before listening.
  const probe = await ctx.openStores();
  const where = probe.where;
  const secrets = await configSecrets(ctx);
  // The URLs senders are given: webhooks.public_url, else locally where this config dir's serve
  // listens (as `subscribe` prints them), else serve's default.
  const senderBase = () => (!deployment && ctx.config.webhooks.public_url === undefined ? runningServeUrl(dataDir(ctx.configDir)) : undefined) ?? baseUrl(ctx.config, ctx.configDir, ctx.warn);
  const toSources = (stores: Stores): ConsoleSources => {
    const requests = requestLogOf(stores);
    return {
      // The payload store the opened stores read (S3 on AWS; locally SQLite, which also reads
      // older file pointers), as `webhook event` and `resume` use: the console reads and
      // checks held payloads with it.
      subscriptions: stores.subscriptions, events: stores.events, queue: stores.queue, payloads: stores.payloads ?? legacyPayloads(ctx), where: stores.where,
      ...(stores.leases ? { leases: stores.leases } : {}), ...(stores.release ? { release: stores.release } : {}), ...(stores.dedup ? { dedup: stores.dedup } : {}),
      publicUrl: senderBase(), secretValues: () => secrets, ...(requests ? { requests } : {}),
    };
  };
  // AWS: clients without locks, kept for the console's lifetime. Local: opened per request.
  let held: Stores | undefined;
  let sources: SourcesProvider;
  if (deployment) {
    held = probe;
    sources = (fn) => fn(toSources(probe));
  } else {
    await probe.close();
    sources = openWhileBusy(() => ctx.openStores(), toSources);
  }
  const handlerOptions: ConsoleOptions = { loopbackHostsOnly: isLoopbackHost(options.host), ...(options.authToken ? { authToken: options.authToken } : {}) };
  const handler = createConsoleHandler(sources, handlerOptions);
  const server = createServer((req, res) => {
    void handler(req, res).then((handled) => {
      if (handled) return;
      if ((req.url ?? '/') === '/' || req.url === '/index.html') {
        res.writeHead(302, { location: '/console' });
        return res.end();
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', code: 'not_found', message: 'The console is at /console' }));
    });
  });
  const url = await listenConsole(server, options.port, options.host).catch(async (error: unknown) => {
    await held?.close();
    throw error;
  });
  ctx.out(`hookagent console on ${url}${options.authToken ? '?token=<your --auth-token>' : ''}\n  reading ${where}; Ctrl-C stops it.`);
  options.onListening?.(url);
  await new Promise<void>((resolve) => {
    const stop = () => {
      server.close();
      server.closeAllConnections();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await held?.close();
}
