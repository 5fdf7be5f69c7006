/**
 * The configuration `serve` runs with, reloaded when `config.yaml` or `.env` changes (as
 * adnanh/webhook's -hotreload): a new version is validated and resolved first; an invalid
 * one keeps the running configuration and says why. What serve runs with is published in
 * the data dir, so a CLI command that meets an answer explained by a stale configuration
 * can say so.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { configPath, readConfigText } from '../../functions/core/config/file';
import { parseConfig, resolveConfig, type ConfigError } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';
import { fail, ok, type Result } from '../../functions/core/errors';
import { watchFiles } from './file-watch';
import { serveLockHeld } from '../../functions/local/sqlite/serve-lock';

export interface LoadedConfig {
  config: Config;
  /** Hash of config.yaml and .env as read: equal fingerprints, same configuration. */
  fingerprint: string;
}

const readText = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
};

/** `KEY=value` lines (optionally `export`, optionally quoted); comments and other lines are skipped. */
export function parseDotEnv(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line.trim().startsWith('#')) continue;
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const raw = match[2] as string;
    values.set(match[1] as string, /^(['"])(.*)\1$/.exec(raw)?.[2] ?? raw);
  }
  return values;
}

/**
 * Equal for equal files. A config.yaml that cannot be taken (larger than the limit, unreadable)
 * counts as the reason it cannot: it is never read whole, and the look every poll stays cheap.
 */
function fingerprintFrom(yaml: Result<string, ConfigError>, dotenv: string): string {
  const hash = createHash('sha256');
  if (yaml.ok) hash.update(yaml.value);
  else hash.update('\0refused\0').update(yaml.error.message);
  return hash.update('\0').update(dotenv).digest('hex').slice(0, 16);
}

export function fingerprintOf(configDir: string): string {
  return fingerprintFrom(readConfigText(configDir), readText(join(configDir, '.env')));
}

/**
 * Reads, validates and resolves the configuration. `${VAR}` references resolve from the
 * environment serve was started with, else from `.env` (the environment wins, as before).
 * config.yaml is read as the CLI reads it (readConfigText): a file it refuses, serve refuses.
 */
export async function loadConfig(configDir: string, environment: NodeJS.ProcessEnv): Promise<Result<LoadedConfig>> {
  const yaml = readConfigText(configDir);
  if (!yaml.ok) return fail({ code: 'config_invalid', message: yaml.error.message });
  let dotenv: string;
  try {
    dotenv = readText(join(configDir, '.env'));
  } catch (error) {
    return fail({ code: 'config_invalid', message: `Cannot read the configuration in ${configDir}: ${(error as Error).message}` });
  }
  const fingerprint = fingerprintFrom(yaml, dotenv);
  const parsed = parseConfig(yaml.value);
  if (!parsed.ok) return fail({ code: 'config_invalid', message: parsed.error.message });
  const fromFile = parseDotEnv(dotenv);
  const resolved = await resolveConfig(parsed.value, { get: async (name) => environment[name] || fromFile.get(name) });
  if (!resolved.ok) return fail({ code: 'config_invalid', message: resolved.error.message });
  return ok({ config: resolved.value, fingerprint });
}

/** What serve publishes about its configuration in the data dir. */
export interface PublishedConfig {
  pid: number;
  fingerprint: string;
  loaded_at: string;
  /** Why the newest version of the files was not taken, while serve keeps the older one. */
  rejected?: { fingerprint: string; reason: string };
  /** Where it listens, once it does (`hookagent status` checks its /health there). */
  url?: string;
}

/** What the serve running on this data dir published, if one runs. */
export function runningServe(dataDir: string): PublishedConfig | undefined {
  try {
    const state = JSON.parse(readFileSync(join(dataDir, PUBLISHED), 'utf8')) as PublishedConfig;
    // The pid alone is no proof: a copy of the config dir carries the original's file, and a pid is reused after a crash.
    return typeof state.pid === 'number' && alive(state.pid) && serveLockHeld(dataDir) ? state : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URL the serve running on this data dir published, reachable from this machine: a
 * wildcard address (serve --host 0.0.0.0 or ::) is reached on loopback. No trailing slash.
 */
export function runningServeUrl(dataDir: string): string | undefined {
  const published = runningServe(dataDir)?.url;
  return published?.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:').replace(/\/+$/, '');
}

const PUBLISHED = 'serve-config.json';

export function publishConfigState(dataDir: string, state: PublishedConfig): void {
  try {
    writeFileSync(join(dataDir, PUBLISHED), JSON.stringify(state), { mode: 0o600 });
  } catch {
    // Only a hint for the CLI: serving never depends on it.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the running serve's configuration is not the one in the files, a sentence saying
 * so (for a CLI command that just met an answer such as 401); undefined when it is current
 * or no serve runs.
 */
export function staleConfigNote(configDir: string, dataDir: string): string | undefined {
  const path = join(dataDir, PUBLISHED);
  if (!existsSync(path)) return undefined;
  let state: PublishedConfig;
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as PublishedConfig;
  } catch {
    return undefined;
  }
  if (!alive(state.pid) || !serveLockHeld(dataDir)) return undefined;
  const current = fingerprintOf(configDir);
  if (state.fingerprint === current) return undefined;
  if (state.rejected?.fingerprint === current) {
    return `serve (pid ${state.pid}) is still running with the configuration it loaded at ${state.loaded_at}: it refused the edited files because ${state.rejected.reason}`;
  }
  return `serve (pid ${state.pid}) is running with an older configuration (loaded at ${state.loaded_at}); it reloads config.yaml and .env when they change — retry in a moment, or restart it`;
}

export interface ConfigWatcher {
  close(): void;
}

export interface ConfigHandlers {
  onChange(loaded: LoadedConfig): void;
  onRejected(fingerprint: string, reason: string): void;
  /** config.yaml is gone (moved aside, deleted before a copy): the running configuration stays. Else onRejected is told. */
  onMissing?(fingerprint: string, path: string): void;
}

/** Why a running serve does not take a config.yaml that disappeared (at start, a missing file means every default). */
export const CONFIG_REMOVED = 'config.yaml was removed; still serving with the previous configuration';

/**
 * Calls `onChange` with each new valid configuration, `onRejected` with the reason an edited
 * one was refused, `onMissing` when config.yaml disappears. Changes within `settleMs` are
 * taken together. Seen three ways, as no one sees every edit:
 * - the config dir's watch: editors that replace a file (write a new one, rename it over);
 * - a watch on each file itself, re-armed when the file is another one: a config.yaml that
 *   is a symlink (written through its target's path) or a single bind-mounted file (written
 *   on the host), whose changes the directory's watch never reports;
 * - a look every `pollMs`: file systems without change events (network, Docker Desktop's
 *   mounts), a symlink whose target's directory is itself swapped.
 */
export function watchConfig(
  configDir: string,
  environment: NodeJS.ProcessEnv,
  initialFingerprint: string,
  handlers: ConfigHandlers,
  settleMs = 100,
  pollMs = 2_000,
): ConfigWatcher {
  let current = initialFingerprint;
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const path = configPath(configDir);
  const check = () => {
    running = running.then(async () => {
      fileWatches.arm();
      const fingerprint = fingerprintOf(configDir);
      if (fingerprint === current) return;
      if (!existsSync(path)) {
        current = fingerprint;
        if (handlers.onMissing) handlers.onMissing(fingerprint, path);
        else handlers.onRejected(fingerprint, CONFIG_REMOVED);
        return;
      }
      const loaded = await loadConfig(configDir, environment);
      if (loaded.ok) {
        current = loaded.value.fingerprint;
        handlers.onChange(loaded.value);
      } else {
        current = fingerprint;
        handlers.onRejected(fingerprint, loaded.error.message);
      }
    }).catch(() => undefined);
  };
  const changed = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, settleMs);
  };
  const fileWatches = watchFiles([path, join(configDir, '.env')], changed);
  fileWatches.arm();
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(configDir, (_event, file) => {
      if (file !== null && file !== 'config.yaml' && file !== '.env') return;
      changed();
    });
    watcher.on('error', () => undefined);
  } catch {
    // No directory watch here: the files' watches and the look every pollMs remain.
  }
  const poll = setInterval(check, pollMs);
  poll.unref();
  return {
    close() {
      if (timer) clearTimeout(timer);
      clearInterval(poll);
      watcher?.close();
      fileWatches.close();
    },
  };
}
