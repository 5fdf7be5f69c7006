/** Where config.yaml lives and reading it (DESIGN §2.3). */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFileBounded } from '../bounded-read';
import { fail, isHookError, ok, type Result } from '../errors';
import { MAX_CONFIG_BYTES } from './size';
import { parseConfig, type ConfigError } from './load';
import type { Config } from './types';

/** `--config-dir`, else `$HOOKAGENT_CONFIG_DIR`, else `~/.hookagent`. */
export function configDir(option?: string, env: NodeJS.ProcessEnv = process.env): string {
  // Only an option left out falls back: an empty one is refused by the CLI (main.ts).
  if (option !== undefined && option !== '') return option;
  if (env.HOOKAGENT_CONFIG_DIR) return env.HOOKAGENT_CONFIG_DIR;
  return join(homedir(), '.hookagent');
}

export function configPath(dir: string): string {
  return join(dir, 'config.yaml');
}

/**
 * The text of `{dir}/config.yaml`, read up to MAX_CONFIG_BYTES (a larger file, a device or a
 * pipe is refused, not read whole); a missing file is empty. The CLI and `serve` both read
 * it here, so they refuse the same files with the same words.
 */
export function readConfigText(dir: string): Result<string, ConfigError> {
  try {
    return ok(readFileBounded(configPath(dir), MAX_CONFIG_BYTES, 'config.yaml', 'the most a configuration file may hold'));
  } catch (error) {
    if (isHookError(error) && error.code === 'too_large') {
      return fail({ code: 'config_invalid', message: `Invalid configuration:\n  ${error.message}`, issues: [{ path: '', message: error.message }] });
    }
    const cause = ((error as Error).cause ?? error) as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') return ok('');
    return fail({
      code: 'config_invalid',
      message: `Cannot read ${configPath(dir)}: ${cause.message}`,
      issues: [{ path: '', message: cause.message }],
    });
  }
}

/** Reads `{dir}/config.yaml`; a missing file means every default (and no secrets: fail closed). */
export function readConfigFile(dir: string): Result<Config, ConfigError> {
  const text = readConfigText(dir);
  return text.ok ? parseConfig(text.value) : text;
}

/** SecretSource over environment variables (local mode; the first source tried on AWS). */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env) {
  return {
    get: async (name: string): Promise<string | undefined> => env[name],
  };
}
